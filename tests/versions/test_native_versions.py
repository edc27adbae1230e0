"""nvidia-cutlass-dsl 4.3.5, 4.4.2 and 4.5.0 exports: emu's trace equals the native run, with and without the header.

Native side: each fixture linked with tests/oracles/native/ recording stubs and run, every entry called as
the release's own header calls it (4.3: tests/oracles/native_43.py; 4.4 and later:
tests/oracles/native_harness.py), once with plain answers and once with injected errors.
emu side: the same entries under the same RuntimeConfig, on the object with its header beside it,
and on a copy of the object alone (the launch arguments then come from `args_spec`; a 4.3 export has
none, so its launch must be refused with a message naming the release and what is missing, and
every loader before it must still be traced).

4.4.2 and 4.5.0 objects with their header are also in tests/ground_truth (MANIFEST "fixtures").
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from emu.run.session import EntryNotRun, run_object
from tests.oracles import native_harness as gt
from tests.oracles import host_cpu, native_43
from tests import oracles

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
_MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
OLD = ("4.3.5", "4.4.2", "4.5.0")
ENTRIES = [e for e in _MANIFEST["fixtures"] + _MANIFEST.get("fixtures_4_3", []) if e["dsl_version"] in OLD]


def _fixture(entry: dict, obj: Path | None = None) -> gt.Fixture:
    return gt.Fixture(obj=obj or FIXTURES / entry["path"], header=FIXTURES / entry["header"], prefix=entry["prefix"],
                      kernel_names=tuple(entry["kernel_info"]), arch="x86_64")


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    """Native events per (fixture path, variant), built on first use."""
    tools = gt.toolchain("x86_64")
    if tools is None:
        pytest.skip("no toolchain to link and run x86-64 objects here")
    work = tmp_path_factory.mktemp("versions-native")
    stubs = gt.build_stubs(tools, work)
    cache: dict[tuple[str, str], list[dict]] = {}

    def events(entry: dict, variant: str) -> list[dict]:
        missing = set(entry["built_on"].get("avx_flags", [])) - host_cpu.cpu_flags()
        if missing:
            pytest.skip(f"this CPU lacks {', '.join(sorted(missing))}, which the host-native object uses")
        key = (entry["path"], variant)
        if key not in cache:
            fixture, folder = _fixture(entry), work / entry["path"].replace("/", "__")
            builder = native_43.build if entry["dsl_version"].startswith("4.3") else gt.build
            exe = builder(fixture, tools, folder, stubs)
            for name, errors in gt.VARIANTS.items():
                cache[(entry["path"], name)] = gt.native_events(gt.run_native(exe, tools, errors))
        return cache[key]
    return events


def _emu_events(fixture: gt.Fixture, errors) -> tuple[list[dict], EntryNotRun | None]:
    """emu's events, and why it stopped before an entry (the events then end there)."""
    try:
        run, stopped = run_object(str(fixture.obj), config=gt.runtime_config(list(fixture.kernel_names), errors),
                                  entries=gt.entry_specs(has_mlir_cuda_load=True)), None
    except EntryNotRun as reason:
        run, stopped = reason.run, reason
    return gt.emu_events(run), stopped


def _params(filter_):
    return [pytest.param(e, v, id=f"{e['path']}-{v}") for e in ENTRIES if filter_(e) for v in gt.VARIANTS]


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize(("entry", "variant"), _params(lambda e: e["dsl_version"] == "4.3.5"))
def test_43_with_header_matches_native(entry, variant, native):
    truth = native(entry, variant)
    mine, stopped = _emu_events(_fixture(entry), gt.VARIANTS[variant])
    assert stopped is None, stopped.render()
    difference = gt.first_difference(mine, truth)
    assert difference is None, f"{entry['path']} ({variant}): emu differs from the native run\n{difference}"


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize(("entry", "variant"), _params(lambda e: True))
def test_object_alone_matches_native(entry, variant, native, tmp_path):
    """Without the header: every loader as native; the launch as native, or refused when the object cannot describe it."""
    alone = tmp_path / Path(entry["path"]).name
    shutil.copyfile(FIXTURES / entry["path"], alone)
    truth = native(entry, variant)
    mine, stopped = _emu_events(_fixture(entry, alone), gt.VARIANTS[variant])
    if stopped is None:
        difference = gt.first_difference(mine, truth)
        assert difference is None, f"{entry['path']} alone ({variant}): emu differs from the native run\n{difference}"
        assert entry["dsl_version"] != "4.3.5", "a 4.3 export has no args_spec: its launch cannot be built without the header"
        return
    assert stopped.entry == "launch", stopped.render()
    launch_at = next(i for i, event in enumerate(truth) if event.get("entry") == "launch")
    difference = gt.first_difference(mine, truth[:launch_at])
    assert difference is None, f"{entry['path']} alone ({variant}): the loaders differ from the native run\n{difference}"
    message = stopped.render()
    if entry["dsl_version"] == "4.3.5":
        assert "nvidia-cutlass-dsl 4.3.x" in message and "args_spec" in message and "_wrapper" in message, message
    elif "FullArgSpec" in message or "inspect.Signature" in message:
        pytest.xfail(f"args_spec's FullArgSpec form is decoded by helper launch's emu/dsl/args_spec/reader.py: {message}")
    else:
        pytest.fail(f"the launch of {entry['path']} was refused: {message}")
