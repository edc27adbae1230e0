"""Ground truth for the TVM-FFI entries of shared libraries: emu calls `__tvm_ffi_<name>` of every export of every
TVM-FFI library fixture as a native process did, call for call.

tests/data/shared/x86_64/<library>.entry.json holds, per export, the native run of every argument set the `.o`
ground truth derives for vec_scale (tests/fixtures/tvm_ffi/native/argsets/vec_scale.json: well-formed, every
ill-formed check, called twice, two devices, a NULL strides pointer; an sm_100a export adds the load refused and what
an H200 answers, which emu gives from its h200 profile with nothing injected), each set in a fresh process: the `.o`
harness (tests/fixtures/tvm_ffi/native/harness.c) linked with the LIBRARY, the REAL libtvm_ffi.so and DSL runtime
helpers, its imports routed to the recorders by tests/data/shared/native/tvm_ffi_bridge.c
(tests/oracles/shared_native.py, `make.py record-tvm-ffi`). emu runs the library's export under the stubs' runtime
(tests/oracles/tvm_ffi_native.py's emu_run); compared: every call (symbol, caller, arguments, outputs, return
code), every entry call's return code and raised error word for word, a crash's address and location; then the
process exit (the library's destructors). Live where CI has cc, the apache-tvm-ffi wheel and the DSL (the dsl extra):
the harness is rebuilt, every set rerun, and must reproduce the committed runs.
"""
from __future__ import annotations

import functools
import hashlib
import json

import pytest

from tests import oracles
from tests.oracles import shared_native, tvm_ffi_native as native
from tests.oracles.native_harness import first_difference

ROOT = shared_native.ROOT
LIBRARIES = {library["path"]: library for library in shared_native.tvm_ffi_libraries()}
EXPORTS = [(path, export["name"]) for path, library in LIBRARIES.items() for export in library["exports"]]
CASES = [(path, name, run["name"]) for path, name in EXPORTS
         for run in shared_native.committed_tvm_ffi_runs(LIBRARIES[path])[name]]
IDS = [f"{path.rsplit('/', 1)[-1]}:{name}-{argset}" for path, name, argset in CASES]

def _export(path: str, name: str) -> dict:
    return next(e for e in LIBRARIES[path]["exports"] if e["name"] == name)


def _argset(path: str, name: str, argset: str) -> dict:
    return next(r for r in shared_native.committed_tvm_ffi_runs(LIBRARIES[path])[name] if r["name"] == argset)


@functools.lru_cache(maxsize=None)
def _runs(path: str, name: str, argset: str) -> tuple[list[dict], list[dict]]:
    """(emu's events, the committed native run's events) of one argument set."""
    recorded = _argset(path, name, argset)
    emu = native.emu_events(shared_native.emu_tvm_ffi_run(LIBRARIES[path], _export(path, name), recorded))
    return emu, native.native_events(recorded["native"])


def _split(events: list[dict]) -> tuple[list[dict], list[dict]]:
    """(the entry calls: every event up to the last return of the entry or the crash, the process exit after it)."""
    ends = [i for i, e in enumerate(events) if e["kind"] == "crash" or e.get("entry") == "tvm_ffi" and e["kind"] == "entry"]
    return events[:ends[-1] + 1], events[ends[-1] + 1:]


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("path, name, argset", CASES, ids=IDS)
def test_emu_makes_the_native_calls(path, name, argset):
    emu, recorded = _runs(path, name, argset)
    difference = first_difference(_split(emu)[0], _split(recorded)[0])
    assert difference is None, f"{path} export {name}, {argset}: {difference}"


@pytest.mark.oracle(oracles.TVM_FFI)
@pytest.mark.parametrize("path, name, argset", CASES, ids=IDS)
def test_emu_returns_and_raises_what_the_native_run_did(path, name, argset):
    """Return codes and raised errors (kind, message) of every call of the entry, and where a crash happened."""
    emu, recorded = _runs(path, name, argset)
    outcome = lambda events: [e for e in _split(events)[0] if e["kind"] != "call"]  # noqa: E731
    assert outcome(emu) == outcome(recorded), f"{path} export {name}, {argset}"


EXIT_CASES = [pytest.param(path, name, argset, id=case) for (path, name, argset), case in zip(CASES, IDS)
              if argset != "strides_null"]


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("path, name, argset", EXIT_CASES)
def test_emu_process_exit_makes_the_native_calls(path, name, argset):
    """After the calls, the process exit: the library's destructors natively, emu's `process_exit` entry."""
    emu, recorded = _runs(path, name, argset)
    difference = first_difference(_split(emu)[1], _split(recorded)[1])
    assert difference is None, f"{path} export {name}, {argset}: {difference}"


def test_argument_sets_are_the_object_ground_truths():
    """Every export ran every argument set the `.o` ground truth derived for vec_scale (same signature), an sm_100a
    export the two load failures too; what they show natively: the well-formed set launches, the checks raise with
    no CUDA call, a NULL strides pointer dies of SIGSEGV, the sm_100a load fails with the runtime's RuntimeError."""
    derived = native.argument_sets(shared_native.TVM_FFI_SETS)
    for path, name in EXPORTS:
        runs = {r["name"]: r for r in shared_native.committed_tvm_ffi_runs(LIBRARIES[path])[name]}
        extra = {"load_failure", "h200_refuses_sm100a"} if name.endswith("sm_100a") else set()
        assert set(runs) == {s["name"] for s in derived} | extra, (path, name)
        for argset in derived:
            assert {k: v for k, v in runs[argset["name"]].items() if k != "native"} == argset, (path, name, argset["name"])
        results = {n: [line for line in r["native"]["lines"] if line["kind"] != "call"] for n, r in runs.items()}
        assert [r["returned"] for r in results["well_formed"]] == [0]
        assert any(line.get("symbol") == "_cudaLaunchKernelEx" for line in runs["well_formed"]["native"]["lines"])
        assert results["wrong_dtype"][0]["raised"]["kind"] == "ValueError"
        assert [line["kind"] for line in runs["wrong_dtype"]["native"]["lines"]][:2] == ["call", "tvm_ffi"]
        assert runs["strides_null"]["native"]["signal"] == "SIGSEGV"
        for failure in extra:
            assert [r["raised"]["kind"] for r in results[failure]] == ["RuntimeError", "RuntimeError"], (path, failure)


def test_traces_are_of_the_committed_libraries():
    for path, library in LIBRARIES.items():
        trace_path = shared_native.tvm_ffi_trace_path(library)
        trace = json.loads(trace_path.read_text())
        assert trace["library"] == path
        assert trace["sha256"] == library["sha256"] == hashlib.sha256((ROOT / path).read_bytes()).hexdigest()
        assert library["tvm_ffi_entry_trace"]["sha256"] == hashlib.sha256(trace_path.read_bytes()).hexdigest()
        assert sorted(trace["exports"]) == sorted(e["name"] for e in library["exports"])


def test_a_changed_native_result_is_a_difference():
    """The comparison can fail: a changed raised message, and a changed caller, are each reported at their event."""
    path, name = EXPORTS[0]
    emu, recorded = _runs(path, name, "wrong_dtype")
    entry = _split(recorded)[0]
    raised = next(i for i, e in enumerate(entry) if e["kind"] == "entry")
    changed = [*entry[:raised], {**entry[raised], "raised": {**entry[raised]["raised"], "message": "other"}}]
    assert first_difference(_split(emu)[0], changed).startswith(f"event {raised}:")
    emu, recorded = _runs(path, name, "well_formed")
    entry = _split(recorded)[0]
    changed = [{**entry[0], "caller": entry[0]["caller"] + "0"}, *entry[1:]]
    assert first_difference(_split(emu)[0], changed).startswith("event 0:")


@pytest.mark.oracle(oracles.TVM_FFI)
@pytest.mark.parametrize("path, name", EXPORTS, ids=[f"{p.rsplit('/', 1)[-1]}:{n}" for p, n in EXPORTS])
def test_native_runs_are_reproduced(path, name):
    """Live (cc, the apache-tvm-ffi wheel and the DSL: the dsl extra): rebuild the harness with the library, rerun
    every set, each in a fresh process; every run must equal the committed one."""
    if not native.available():
        pytest.skip("needs cc, the apache-tvm-ffi wheel and nvidia-cutlass-dsl (the dsl extra)")
    committed = shared_native.committed_tvm_ffi_runs(LIBRARIES[path])[name]
    live = shared_native.record_tvm_ffi_entry(LIBRARIES[path], _export(path, name), native.libraries(), committed)
    for argset, run in zip(committed, live):
        assert native.native_events(run) == native.native_events(argset["native"]), f"{path} {name} {argset['name']}"


# trace's default profile is the H200's: an sm_100a export's entry meets what an H200 answers
CLI_CASES = [(path, name, argset) for path, name in EXPORTS
             for argset in ("h200_refuses_sm100a" if name.endswith("sm_100a") else "well_formed", "wrong_dtype", "strides_null")]


@pytest.mark.oracle(oracles.TVM_FFI)
@pytest.mark.parametrize("path, name, argset", CLI_CASES, ids=[f"{p.rsplit('/', 1)[-1]}:{n}-{a}" for p, n, a in CLI_CASES])
def test_trace_args_cli_reports_the_native_outcome(path, name, argset, tmp_path):
    """`python -m emu trace LIB --args FILE --json` (every export of the library, each in a run of its own): the
    export's first entry call returns and raises what the native run's did, or faults where it crashed."""
    native.check_trace_cli(ROOT / path, _argset(path, name, argset), tmp_path, export=name)
