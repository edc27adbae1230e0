"""Each ill-formed TVM-FFI call comes out of the object's own argument checks exactly as the real libtvm_ffi.so holds
it raised: the same int32, error kind and message word for word, and no CUDA call.

tests/data/tvm_ffi/error_cases.yaml holds the calls in emu's argument form; native_errors.json their native runs,
made by the TVM-FFI native harness (tests/oracles/tvm_ffi_native.py: the object linked with the REAL libtvm_ffi.so,
cuda_dialect_init_library_once and the recording CUDA stubs) with `python tests/data/tvm_ffi/native_errors.py`.
"""
from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

import emu
from conftest import ROOT
from oracles import NATIVE, TVM_FFI
from tests.oracles import host_cpu, tvm_ffi_native as native
from tests.oracles.native_harness import first_difference

DATA = ROOT / "tests" / "data" / "tvm_ffi"
CASES = yaml.safe_load((DATA / "error_cases.yaml").read_text())
NATIVE_RUNS = {run["case"]: run for run in json.loads((DATA / "native_errors.json").read_text())["runs"]}
TVM_FFI_SYMBOLS = {"TVMFFIErrorSetRaisedFromCStr", "TVMFFIErrorSetRaisedFromCStrParts"}


@pytest.mark.oracle(NATIVE)
@pytest.mark.parametrize("case", CASES, ids=[case["case"] for case in CASES])
def test_argument_errors_are_the_native_ones_word_for_word(case):
    """Call for call (the error setter's), then the entry's int32 and raised error, then the process exit."""
    recorded = native.native_events(NATIVE_RUNS[case["case"]]["native"])
    difference = first_difference(native.emu_events(native.emu_run(DATA / case["object"], case)), recorded)
    assert difference is None, f"{case['case']}: {difference}"
    entry_calls = {e["symbol"] for e in recorded if e["kind"] == "call" and e["entry"] == "tvm_ffi"}
    assert entry_calls and entry_calls <= TVM_FFI_SYMBOLS, "an argument check makes no CUDA call"


def test_every_case_has_its_committed_native_run():
    assert [run["case"] for run in NATIVE_RUNS.values()] == [case["case"] for case in CASES]
    assert all(NATIVE_RUNS[case["case"]]["args"] == case["args"] for case in CASES)


@pytest.mark.oracle(TVM_FFI)
def test_native_errors_are_reproduced(tmp_path):
    """Live (the dsl extra): every case rerun natively reproduces native_errors.json. No case reaches the objects'
    AVX-512 code (their loaders), so a CPU without it runs them too (simulated: host_cpu.SIMULATE)."""
    if not native.available():
        pytest.skip("needs cc, the apache-tvm-ffi wheel and nvidia-cutlass-dsl (the dsl extra)")
    for name in sorted({case["object"] for case in CASES}):
        obj = host_cpu.without_avx512(DATA / name, tmp_path / name) if host_cpu.simulated() else DATA / name
        cases = [case for case in CASES if case["object"] == name]
        exe = native.build(obj, tmp_path / f"{name}.harness", native.libraries())
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            lives = list(pool.map(lambda case: native.run(exe, case), cases))
        for case, live in zip(cases, lives):
            assert native.native_events(live) == native.native_events(NATIVE_RUNS[case["case"]]["native"]), case["case"]


def test_null_strides_where_the_code_reads_them_is_the_fault_with_its_location():
    """DLPack allows strides == NULL for a compact tensor; the generated entry reads strides[0] without a NULL check
    (FIELD_NOTES section 9), so the native process crashes: emu reports that fault, never a result."""
    args = [{"tensor": {"dtype": "float32", "shape": [128], "strides": None}}, {"float": 2.0}, {"stream": 0x5000}]
    run = emu.trace(DATA / "vec_scale.o", entries=[{"tvm_ffi": {"args": args}}])
    entry, = run.entries
    assert entry.returned is None and entry.raised is None
    assert entry.fault.kind == "unmapped_read" and entry.fault.location.startswith("__tvm_ffi_vec_scale+0x")
    assert entry.launch["args"][0]["tensor"]["strides"] is None


def test_an_instruction_emu_cannot_carry_out_is_not_answered_with_host_target_for_tvm_ffi(tmp_path):
    """A TVM-FFI object whose loader holds an AVX-512 instruction emu cannot carry out (vpconflictd, AVX512CD, in
    place of its zmm copies): the fault says so, and its advice does not tell a TVM-FFI export to use --host-target,
    which the DSL refuses for that form (it says build on a CPU without the extension)."""
    vpconflictd = bytes.fromhex("62f27d48c4c1")                 # vpconflictd zmm0, zmm1
    obj = ROOT / "tests" / "fixtures" / "tvm_ffi" / "own" / "add_shared.o"
    data = bytearray(obj.read_bytes())
    for offset, size, _ in host_cpu.avx512_sites(obj):
        data[offset:offset + size] = vpconflictd + b"\x90" * (size - len(vpconflictd))
    (tmp_path / "add_shared.o").write_bytes(bytes(data))
    argset = native.committed("add_shared")[0]
    run = native.emu_run(tmp_path / "add_shared.o", argset)
    fault = run.entries[0].fault
    assert fault.kind == "unsupported_instruction" and fault.instruction == "vpconflictd zmm0, zmm1", fault
    assert "A TVM-FFI export (`__tvm_ffi_<name>`, --enable-tvm-ffi) cannot take --host-target" in fault.message
    assert "build it on a machine whose CPU lacks this instruction's extension" in fault.message
