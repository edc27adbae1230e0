"""Ground truth for AArch64 TVM-FFI exports: emu calls `__tvm_ffi_<name>` of an AArch64 object as the native
AArch64 run did, call for call.

TVM-FFI objects are host-native (the DSL refuses --host-target for them), so tests/fixtures/tvm_ffi/aarch64/ holds
objects built by the AArch64 DSL itself, run under qemu-aarch64 user emulation (build.sh: Debian 12's arm64
python3.11 with the AArch64 wheels of nvidia-cutlass-dsl 4.8.1 and apache-tvm-ffi 0.1.15.post2): own_kernels.py's
kernels for sm_90a (every argument kind), vec_scale for sm_100a (the load failures) and
tests/data/tvm_ffi/build.py's export_vec_scale. Their native traces
(aarch64/traces/) come from the x86-64 fixtures' harness cross-linked against the AArch64 libtvm_ffi.so and DSL
runtime and run under `qemu-aarch64 -L /usr/aarch64-linux-gnu` (aarch64/record.py), with the x86-64 fixtures'
argument sets derived the same way: well-formed, each ill-formed check, two calls, two devices, a NULL strides
pointer, the sm_100a load failures. Compared as tests/ground_truth/test_tvm_ffi_native.py compares the x86-64 ones.

Not live here: CI has the cross toolchain and qemu but not the AArch64 wheels (an x86-64 pip installs x86-64
ones); `python tests/fixtures/tvm_ffi/aarch64/record.py --check` reruns every set where they are unpacked.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import oracles
from tests.oracles import tvm_ffi_native as native
from tests.oracles.native_harness import first_difference

ROOT = Path(__file__).resolve().parents[2]
AARCH64 = native.FIXTURES / "aarch64"
MANIFEST = json.loads((AARCH64 / "MANIFEST.json").read_text())
OBJECTS = {entry["path"].removesuffix(".o").replace("/", "_"): AARCH64 / entry["path"] for entry in MANIFEST["objects"]}
EM_AARCH64 = 183


@functools.lru_cache(maxsize=None)
def committed(key: str) -> list[dict]:
    return json.loads((AARCH64 / "traces" / f"{key}.json").read_text())["runs"]


CASES = [(key, run["name"]) for key in OBJECTS for run in committed(key)]


HELPER = "cuda_dialect_init_library_once"
OUTSIDE = "entry (tail call)"       # stubs.c's caller for a return address outside the object


def helper_tail_calls(events: list[dict]) -> list[dict]:
    """Native calls made inside cuda_dialect_init_library_once whose return address is outside the object, named by
    that helper, as harness.c's own recorders name theirs (caller_copy) and as emu names them. On AArch64 the object's
    cuda_init ends in `b _cudaLibraryLoadData`: the stub returns straight into cuda_dialect_init_library_once, which
    stubs.c can only call "entry (tail call)" (on x86-64 cuda_init calls it, so its caller is cuda_init+offset).
    The helper's own line comes after the calls it made, so the calls since the entry's previous event are its."""
    out, inside = [], []
    for event in events:
        if event["kind"] == "call" and event["symbol"] == HELPER:
            for index in inside:
                out[index] = {**out[index], "caller": HELPER}
        if event["kind"] != "call" or event["symbol"] == HELPER:
            inside = []
        elif event["caller"] == OUTSIDE:
            inside.append(len(out))
        out.append(event)
    return out


@functools.lru_cache(maxsize=None)
def _runs(key: str, name: str) -> tuple[list[dict], list[dict]]:
    """(emu's events, the committed native run's events) of one argument set."""
    argset = next(run for run in committed(key) if run["name"] == name)
    return (native.emu_events(native.emu_run(OBJECTS[key], argset)),
            helper_tail_calls(native.native_events(argset["native"])))


@pytest.mark.oracle(oracles.TVM_FFI)
@pytest.mark.parametrize("key, name", CASES, ids=[f"{key}-{name}" for key, name in CASES])
def test_emu_runs_the_entry_as_the_native_aarch64_process_did(key, name):
    """First what the caller sees: every call's return code and raised error (kind, message: the AArch64
    libtvm_ffi.so's own text) and where a crash happened (function+offset, address); then every CUDA, TVM-FFI and
    runtime-helper call, its caller, arguments, outputs and result."""
    emu, recorded = _runs(key, name)
    assert [e for e in emu if e["kind"] != "call"] == [e for e in recorded if e["kind"] != "call"], f"{key} {name}"
    difference = first_difference(emu, recorded)
    assert difference is None, f"{key} {name}: {difference}"


def test_the_objects_are_aarch64_tvm_ffi_exports_of_the_committed_bytes():
    for entry in MANIFEST["objects"]:
        obj = AARCH64 / entry["path"]
        data = obj.read_bytes()
        assert int.from_bytes(data[18:20], "little") == EM_AARCH64, entry["path"]
        assert native.entry_name(obj) == entry["function_name"]
        key = entry["path"].removesuffix(".o").replace("/", "_")
        trace = json.loads((AARCH64 / "traces" / f"{key}.json").read_text())
        assert trace["sha256"] == entry["sha256"] == hashlib.sha256(data).hexdigest(), entry["path"]


def test_argument_sets_are_the_x86_64_fixtures_sets():
    """Each AArch64 object was run with the argument sets of the same kernel's x86-64 fixture (the checks its entry
    makes are the same), the sm_100a one also with both load failures, which raise natively; the well-formed sets
    launch, and a NULL strides pointer crashes."""
    for key in OBJECTS:
        runs = {run["name"]: run["native"] for run in committed(key)}
        x86_64 = {run["name"] for run in native.committed(key.split("_", 1)[1])}
        extra = {"load_failure", "h200_refuses_sm100a"} if key.startswith("sm100a_") else set()
        assert set(runs) == x86_64 | extra, key
        assert runs["strides_null"]["lines"][-1]["kind"] == "signal", key
        assert any(line.get("symbol") == "_cudaLaunchKernelEx" for line in runs["well_formed"]["lines"]), key
    sm100a = {run["name"]: run["native"] for run in committed("sm100a_vec_scale")}
    for name in ("load_failure", "h200_refuses_sm100a"):
        raised = [line["raised"]["kind"] for line in sm100a[name]["lines"] if line["kind"] == "tvm_ffi"]
        assert raised == ["RuntimeError", "RuntimeError"], name


@pytest.mark.oracle(oracles.TVM_FFI)
@pytest.mark.parametrize("name", ["well_formed", "wrong_dtype", "shared_extent_mismatch", "too_many", "strides_null"])
def test_trace_args_cli_reports_the_native_outcome(name, tmp_path):
    """`python -m emu trace OBJ --args FILE --json` on the AArch64 add_shared.o with the argument form alone: the
    native run's return and error, or its crash (function+offset, address)."""
    key = "own_add_shared"
    argset = next(run for run in committed(key) if run["name"] == name)
    (tmp_path / "args.json").write_text(json.dumps(argset["args"]))
    result = subprocess.run([sys.executable, "-m", "emu", "trace", str(OBJECTS[key]), "--args", "args.json", "--json"],
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                            timeout=120)
    trace = json.loads(result.stdout)[0]
    fault = trace["entries"][0]["fault"]
    shown = ({"kind": "crash", "address": fault["address"], "location": fault["location"]} if fault else
             {"kind": "entry", "entry": "tvm_ffi", "returned": trace["entries"][0]["returned"],
              "raised": trace["entries"][0]["raised"]})
    native_outcome = next(e for e in native.native_events(argset["native"]) if e["kind"] != "call")
    assert (trace["arch"], shown) == ("aarch64", native_outcome), result.stderr
    assert (result.returncode != 0) == (native_outcome["kind"] == "crash")
