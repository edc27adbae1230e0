"""Ground truth for TVM-FFI exports: emu calls `__tvm_ffi_<name>` as the native harness did, call for call.

tests/fixtures/tvm_ffi/native/traces/ holds, for every TVM-FFI fixture (own kernels per argument kind, Shape and
Tuple parameters included, CUTLASS / quack-kernels / flash-attn-4 kernels, quack's own cache folder) and every argument set of
native/argsets/ (well-formed, each ill-formed check the generated entry makes, two calls in one process,
2 devices, a NULL strides pointer, the sm_100a load failures: the load refused, and the H200's own answer, which
emu gives from its h200 profile with nothing injected; for Shape and Tuple parameters each check of the entry's
decode_param_shape / decode_param_tuple, the shapes and arrays made by the real library), the run of a C harness linked with the recording
CUDA stubs (tests/oracles/native/stubs.c), the REAL libtvm_ffi.so, the REAL cuda_dialect_init_library_once and
the REAL CuteDSLRT_TVMFFISetRaisedCudaError (tests/oracles/tvm_ffi_native.py). emu runs the same set under the
stubs' runtime (native_harness.runtime_config); compared:
- every call: symbol, caller, arguments by their stub model (pointers as null / non-null), outputs, return code;
- every entry call's return code and raised error, kind and message word for word (the library's own text);
- a crash (the entry reads `strides` without a NULL check): emu faults at the same instruction
  (function+offset) on the same address the native process died of SIGSEGV at.
After the calls, the process exit: the object's destructor (cuda_dialect_unload_library_once, cudaLibraryUnload)
natively, emu's `process_exit` entry.

Live: where `cc`, the apache-tvm-ffi wheel and nvidia-cutlass-dsl are installed (CI installs them with the
`dsl` extra) the harness is rebuilt and every set rerun, and must reproduce the committed trace. The objects are
host-native, built on an AVX-512 machine (all but own/vec_scale.o use zmm or mask registers, most only in their
loaders' 64-byte copies; fa4_forward_sm90 in its entry too): on a CPU
without AVX-512 a set that reaches such an instruction dies of SIGILL there, and must match the committed trace up
to it; our own kernels are then rebuilt for this CPU (tests/fixtures/tvm_ffi/host_build.py, once per machine, about
3 s) and emu must make the native run's calls on every set of THOSE objects. EMU_TEST_CPU_WITHOUT_AVX512=1 simulates
such a CPU (tests/oracles/host_cpu.py: ud2 in place of every AVX-512 instruction), and one test does so always.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests import oracles
from tests.fixtures.tvm_ffi import host_build
from tests.oracles import host_cpu, tvm_ffi_native as native
from tests.oracles.native_harness import first_difference

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = json.loads((native.FIXTURES / "MANIFEST.json").read_text())
OBJECTS = {native.key(entry["path"]): native.FIXTURES / entry["path"] for entry in MANIFEST["objects"]}
CASES = [(key, run["name"]) for key in OBJECTS for run in native.committed(key)]
# the objects a CPU without AVX-512 cannot run whose kernels can be rebuilt for it: built together, once
REBUILT_HERE = tuple(key for key in OBJECTS if host_build.rebuildable(key) and host_cpu.avx512_sites(OBJECTS[key]))

@functools.lru_cache(maxsize=None)
def _runs(key: str, name: str) -> tuple[list[dict], list[dict]]:
    """(emu's events, the committed native run's events) of one argument set."""
    argset = next(run for run in native.committed(key) if run["name"] == name)
    return native.emu_events(native.emu_run(OBJECTS[key], argset)), native.native_events(argset["native"])


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("key, name", CASES, ids=[f"{key}-{name}" for key, name in CASES])
def test_emu_makes_the_native_calls(key, name):
    emu, recorded = _runs(key, name)
    difference = first_difference(emu, recorded)
    assert difference is None, f"{key} {name}: {difference}"


@pytest.mark.oracle(oracles.TVM_FFI)
@pytest.mark.parametrize("key, name", CASES, ids=[f"{key}-{name}" for key, name in CASES])
def test_emu_returns_and_raises_what_the_native_run_did(key, name):
    """Return codes and raised errors (kind, message) of every call, and where a crash happened."""
    emu, recorded = _runs(key, name)
    outcome = [e for e in emu if e["kind"] != "call"]
    assert outcome == [e for e in recorded if e["kind"] != "call"], f"{key} {name}"


def test_argument_sets_cover_every_check():
    """Every object has the well-formed set, the ill-formed ones and the crash; the sm_100a one the load failure."""
    required = {"well_formed", "called_twice", "wrong_dtype", "wrong_rank", "wrong_device_type", "device_index_absent",
                "misaligned_data", "wrong_stride", "too_few", "too_many", "int_for_tensor", "none_for_tensor",
                "strides_null"}
    for key in OBJECTS:
        names = {run["name"] for run in native.committed(key)}
        assert required <= names, (key, required - names)
    everything = {name for _, name in CASES}
    assert {"two_devices", "device_index_mismatch", "shared_extent_mismatch", "wrong_static_extent", "load_failure",
            "h200_refuses_sm100a"} <= everything
    assert {"shape_as_array", "shape_wrong_type", "shape_wrong_size", "shape_array_wrong_size", "shape_non_int_element",
            "shape_wrong_static_extent", "shape_extent_out_of_int32_range", "tuple1_wrong_type", "tuple1_shape_for_tuple",
            "tuple1_too_short", "tuple1_too_long", "tuple1_wrong_element_type", "tuple_tensor_wrong_dtype",
            "tuple_tensor_strides_null", "tuple_tensor_shared_extent_mismatch", "tuple_const_mismatch",
            "tuple_none_given_int", "tuple_int_given_float"} <= everything
    results = {name: [line for line in run["native"]["lines"] if line["kind"] != "call"]
               for name, run in ((run["name"], run) for run in native.committed("quack_softmax"))}
    for name in ("load_failure", "h200_refuses_sm100a"):
        assert [r["raised"]["kind"] for r in results[name]] == ["RuntimeError", "RuntimeError"], name
    assert results["strides_null"][-1]["kind"] == "signal"


def test_traces_are_of_the_committed_objects():
    for entry in MANIFEST["objects"]:
        trace = json.loads((native.NATIVE / "traces" / f"{native.key(entry['path'])}.json").read_text())
        obj = native.FIXTURES / entry["path"]
        assert trace["object"] == entry["path"]
        assert trace["sha256"] == entry["sha256"] == hashlib.sha256(obj.read_bytes()).hexdigest()


def _live(obj: Path, argsets: list[dict]) -> list[dict]:
    """Every set run natively on `obj`, the harness linked against the installed libtvm_ffi.so and DSL runtime."""
    with tempfile.TemporaryDirectory(prefix="tvm-ffi-live-") as work:
        exe = native.build(obj, Path(work), native.libraries())
        # each set is a fresh process; libtvm_ffi.so spends ~0.15 s of it on its first error's backtrace
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            return list(pool.map(lambda argset: native.run(exe, argset), argsets))


def _check_live(key: str, obj: Path) -> list[str]:
    """`obj` (the committed object, or its copy as a CPU without AVX-512 runs it) reproduces the committed trace:
    every set in full, or, where this CPU stops at an AVX-512 instruction (SIGILL), every event before it.
    Where it stopped and the kernels can be rebuilt for this CPU (host_build), emu and the native run of the
    rebuilt object must agree on every set: the committed traces stand for the committed objects. Returns the names
    of the sets that stopped."""
    committed = native.committed(key)
    sites = {text.split(":")[0] for _, _, text in host_cpu.avx512_sites(OBJECTS[key])}
    stopped = []
    for argset, live in zip(committed, _live(obj, committed)):
        recorded, events = native.native_events(argset["native"]), native.native_events(live)
        if live.get("signal") == "SIGILL":
            *before, crash = events
            assert crash["location"] in sites, f"{key} {argset['name']}: SIGILL at {crash['location']}, no AVX-512 there"
            assert before == recorded[:len(before)], f"{key} {argset['name']}: differs before the SIGILL"
            stopped.append(argset["name"])
        else:
            assert events == recorded, f"{key} {argset['name']}"
    if stopped and host_build.rebuildable(key):
        rebuilt = host_build.rebuilt(key, REBUILT_HERE)
        for argset, live in zip(committed, _live(rebuilt, committed)):
            difference = first_difference(native.emu_events(native.emu_run(rebuilt, argset)), native.native_events(live))
            assert difference is None, f"{key} rebuilt for this CPU, {argset['name']}: {difference}"
    return stopped


def _native_object(key: str, work: Path) -> Path:
    """The committed object; simulating a CPU without AVX-512 (host_cpu.SIMULATE), its copy with ud2 in place of
    every AVX-512 instruction."""
    return host_cpu.without_avx512(OBJECTS[key], work / "object.o") if host_cpu.simulated() else OBJECTS[key]


@pytest.mark.oracle(oracles.TVM_FFI)
@pytest.mark.parametrize("key", list(OBJECTS))
def test_native_trace_is_reproduced(key, tmp_path):
    """Live (cc, the apache-tvm-ffi wheel and the DSL: the dsl extra): rebuild the harness, rerun every set."""
    if not native.available():
        pytest.skip("needs cc, the apache-tvm-ffi wheel and nvidia-cutlass-dsl (the dsl extra)")
    _check_live(key, _native_object(key, tmp_path))


@pytest.mark.oracle(oracles.TVM_FFI)
def test_a_cpu_without_avx512_stops_at_it_and_the_rebuilt_kernels_agree(tmp_path):
    """What a CPU without AVX-512 does, on every CPU: the committed add_shared.o with its AVX-512 instructions made
    ud2 stops at the first one each set reaches (its loader's 64-byte copies) after the committed events, and
    add_shared rebuilt for this CPU runs every set in emu as natively."""
    if not native.available():
        pytest.skip("needs cc, the apache-tvm-ffi wheel and nvidia-cutlass-dsl (the dsl extra)")
    assert host_build.rebuildable("add_shared")
    stopped = _check_live("add_shared", host_cpu.without_avx512(OBJECTS["add_shared"], tmp_path / "add_shared.o"))
    assert {"well_formed", "called_twice", "two_devices"} <= set(stopped), "the well-formed sets reach the loader"


@pytest.mark.oracle(oracles.TVM_FFI)
@pytest.mark.parametrize("name", ["wrong_dtype", "shared_extent_mismatch", "too_many", "none_for_tensor", "strides_null"])
def test_trace_args_cli_reports_the_native_outcome(name, tmp_path):
    """`python -m emu trace OBJ --args FILE --json` with the argument form alone: the native run's error, or its crash."""
    argset = next(run for run in native.committed("add_shared") if run["name"] == name)
    native.check_trace_cli(OBJECTS["add_shared"], argset, tmp_path)
