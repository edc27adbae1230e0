"""The one comparison of emu's trace with a native recorder's run still catches a difference, in either format.

For each harness (recorder.py's, with a toy fixture; stubs.c's, with a real-world export of two kernels) emu's
lines equal the committed native trace, and each change of one field of one native line (an attribute value,
a kernel, a library handle, a stream, a launch attribute, a getter's answer), a missing call or a missing last
line is reported at that line.
"""
from __future__ import annotations

import functools
import json

import pytest

from tests.oracles.recorder_lines import LOADER_ENTRIES, OBJECTS, ROOT, first_difference, launch_args, native_lines, \
    normalise_native, recorded_lines, recorder_config, recorder_py_emu_lines, stubs_c_emu_lines

TOY = ROOT / "tests" / "fixtures" / "cutlass-dsl-4.8.0" / "x86_64" / "two_kernels_carveout_50.o"
REAL = next(entry for entry in OBJECTS if entry["path"].endswith("/x86_64/pdl_pair.o"))


@functools.cache
def _case(harness: str) -> tuple[list[dict], list[dict], object]:
    """emu's lines, the committed native lines as recorded, and the harness's normalisation."""
    if harness == "recorder.py":
        return recorder_py_emu_lines(TOY), json.loads(TOY.with_suffix(".calls.json").read_text()), recorded_lines
    from emu.dsl.entries import EntrySpec
    from emu.run.session import run_object
    path = str(ROOT / REAL["path"])
    specs = [EntrySpec.model_validate(spec) for spec in [*LOADER_ENTRIES, {"launch": {"args": launch_args(REAL)}}]]
    return stubs_c_emu_lines(run_object(path, recorder_config(path), specs)), native_lines(REAL), normalise_native


def _first(lines: list[dict], call: str, **fields) -> int:
    return next(i for i, line in enumerate(lines) if line.get("call") == call and fields.items() <= line.items())


def _change(call: str, field: str, change, **where):
    def mutate(lines: list[dict]) -> int:
        index = _first(lines, call, **where)
        lines[index] = {**lines[index], field: change(lines[index][field])}
        return index
    return mutate


def _other_kernel(lines: list[dict]) -> int:
    index = _first(lines, "cudaKernelSetAttributeForDevice")
    names = [line["name"] for line in lines if line.get("call") == "cudaLibraryGetKernel"]
    lines[index] = {**lines[index], "kernel": next(name for name in names if name != lines[index]["kernel"])}
    return index


def _missing_call(lines: list[dict]) -> int:
    index = _first(lines, "cuKernelGetAttribute")
    del lines[index]
    return index


def _missing_last_line(lines: list[dict]) -> None:
    del lines[-1]


MUTATIONS = {
    "attribute value": _change("cudaFuncSetAttribute", "value", lambda value: value - 1, attribute=8),
    "kernel": _other_kernel,
    "missing call": _missing_call,
    "library": _change("cudaLibraryGetKernel", "library", lambda handle: handle + 0x10),
    "stream": _change("cudaLaunchKernelEx", "stream", lambda stream: stream + 1),
    "launch attribute": _change("cudaLaunchKernelEx", "attrs", lambda attrs: [{**attrs[0], "value": attrs[0]["value"] + 1}, *attrs[1:]]),
    "answered value": _change("cudaDeviceGetAttribute", "value", lambda value: value - 1),     # stubs.c prints it
    "missing last line": _missing_last_line,
}
CASES = [(harness, name) for harness in ("recorder.py", "stubs.c") for name in MUTATIONS
         if (harness, name) != ("recorder.py", "answered value")]


@pytest.mark.parametrize("harness", ["recorder.py", "stubs.c"])
def test_emu_equals_the_committed_trace(harness):
    emu, recorded, normalise = _case(harness)
    assert first_difference(emu, normalise(recorded)) is None


@pytest.mark.parametrize(("harness", "mutation"), CASES, ids=[f"{h}-{m}" for h, m in CASES])
def test_one_changed_native_line_is_reported(harness, mutation):
    emu, recorded, normalise = _case(harness)
    changed = [dict(line) for line in recorded]
    index = MUTATIONS[mutation](changed)
    difference = first_difference(emu, normalise(changed))
    if index is None:
        assert difference == f"native stops after {len(changed)} lines; emu goes on with {json.dumps(emu[-1])}"
    else:
        assert difference is not None and difference.startswith(f"line {index}:\n"), difference
        assert f"native: {json.dumps(normalise(changed)[index])}" in difference
