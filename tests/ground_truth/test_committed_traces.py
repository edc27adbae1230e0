"""Toolchain-free native oracle: every fixture's emu trace equals its committed native trace.

`tests/fixtures/build_fixtures.py` linked each x86-64 and host-native fixture with the recording
stubs of `tests/fixtures/recorder.py`, ran it on a real CPU and committed what it printed as
`<prefix>.calls.json` (MANIFEST.json's "calls").  This test runs the same object in emu with a
runtime that answers like those stubs (2 devices, attribute 97 = 232448, every kernel's static
shared memory 0) and the same entry sequence (cuda_init, cuda_load, cuda_load_to_device(0),
_mlir_cuda_init, _mlir_cuda_load_to_device for devices 0 and 1, the launch wrapper), turns emu's trace
into the recorder's lines and requires the two to be equal, so a machine without cross compilers or cc
still checks against native.  The 4.3 exports (MANIFEST "fixtures_4_3", a different header shape whose
traces were recorded calling them as that header does) are compared the same way.
What is compared, and the little that cannot be, is in tests/oracles/recorder_lines.py.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.oracles.recorder_lines import first_difference, recorded_lines, recorder_py_emu_lines as emu_lines

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
_MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
MANIFEST = _MANIFEST["fixtures"] + _MANIFEST.get("fixtures_4_3", [])
WITH_TRACE = [entry for entry in MANIFEST if entry.get("calls")]


def native_lines(entry: dict) -> list[dict]:
    return recorded_lines(json.loads((FIXTURES / entry["calls"]).read_text()))


@pytest.mark.oracle("native run")
@pytest.mark.parametrize("entry", WITH_TRACE, ids=[e["path"] for e in WITH_TRACE])
def test_emu_trace_equals_committed_native_trace(entry):
    native = native_lines(entry)
    assert native and any("call" in line for line in native), f"{entry['calls']} holds no call"
    difference = first_difference(emu_lines(FIXTURES / entry["path"]), native)
    assert difference is None, f"{entry['path']}: emu differs from the committed native run {entry['calls']}\n{difference}"


def test_every_committed_trace_is_checked():
    """Every committed trace is in the manifest (and so in the test above); none is orphaned."""
    on_disk = {str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("cutlass-dsl-*/**/*.calls.json")}
    assert on_disk == {e["calls"] for e in WITH_TRACE}
    assert len(on_disk) >= 40


def test_a_changed_trace_is_a_difference():
    """The comparison can fail: one changed value in the native trace is reported with its line."""
    entry = next(e for e in WITH_TRACE if e["path"].endswith("x86_64/carveout_25.o"))
    native = native_lines(entry)
    setter = next(i for i, line in enumerate(native) if line.get("attribute") == 8)
    native[setter] = {**native[setter], "value": native[setter]["value"] - 1}
    difference = first_difference(emu_lines(FIXTURES / entry["path"]), native)
    assert difference is not None and difference.startswith(f"line {setter}:"), difference
