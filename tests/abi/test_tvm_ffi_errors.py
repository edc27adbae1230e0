"""Each ill-formed TVM-FFI call comes out of the object's own argument checks exactly as the real libtvm_ffi.so holds
it raised: the same int32, error kind and message word for word, and no CUDA call.

tests/data/tvm_ffi/error_cases.yaml holds the calls in emu's argument form; native_errors.json what a native run of
the same objects, linked with apache-tvm-ffi 0.1.15's libtvm_ffi.so, returned and raised (native_errors.py).
"""
from __future__ import annotations

import json

import pytest
import yaml

import emu
from conftest import ROOT
from oracles import NATIVE

DATA = ROOT / "tests" / "data" / "tvm_ffi"
CASES = yaml.safe_load((DATA / "error_cases.yaml").read_text())
NATIVE_RUNS = {run["case"]: run for run in json.loads((DATA / "native_errors.json").read_text())["runs"]}
TVM_FFI_SYMBOLS = {"TVMFFIErrorSetRaisedFromCStr", "TVMFFIErrorSetRaisedFromCStrParts"}


@pytest.mark.oracle(NATIVE)
@pytest.mark.parametrize("case", CASES, ids=[case["case"] for case in CASES])
def test_argument_errors_are_the_native_ones_word_for_word(case):
    native = NATIVE_RUNS[case["case"]]
    run = emu.trace(DATA / case["object"], entries=[{"tvm_ffi": {"args": case["args"]}}])
    entry, = run.entries
    assert entry.fault is None
    assert (entry.returned, entry.raised) == (native["returned"], native["raised"])
    assert native["cuda_calls"] == 0 and {call.symbol for call in run.calls} <= TVM_FFI_SYMBOLS


def test_null_strides_where_the_code_reads_them_is_the_fault_with_its_location():
    """DLPack allows strides == NULL for a compact tensor; the generated entry reads strides[0] without a NULL check
    (FIELD_NOTES section 9), so the native process crashes: emu reports that fault, never a result."""
    args = [{"tensor": {"dtype": "float32", "shape": [128], "strides": None}}, {"float": 2.0}, {"stream": 0x5000}]
    run = emu.trace(DATA / "vec_scale.o", entries=[{"tvm_ffi": {"args": args}}])
    entry, = run.entries
    assert entry.returned is None and entry.raised is None
    assert entry.fault.kind == "unmapped_read" and entry.fault.location.startswith("__tvm_ffi_vec_scale+0x")
    assert entry.launch["args"][0]["tensor"]["strides"] is None
