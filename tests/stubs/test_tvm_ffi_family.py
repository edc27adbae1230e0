"""The tvm_ffi family: the stream the framework set per device, the error setters as libtvm_ffi.so stores their
error (parts concatenated, NULL parts skipped: SetRaisedByCstrParts), and CuteDSLRT_TVMFFISetRaisedCudaError as
libcute_dsl_runtime.so raises a CUDA error ("CUDADialectError", "CUDA Error Code: <n>"; FIELD_NOTES section 9:
the H200 printed "CUDA Error Code: 101" for a device index it does not have)."""
from __future__ import annotations

import struct
from types import SimpleNamespace

from unicorn import UC_ARCH_X86, UC_MODE_64, Uc

import emu
from conftest import ROOT
from emu.stubs.families import owner
from emu.stubs.families.tvm_ffi import TVM_FFI_BEHAVIOURS, TvmFfiState
from oracles import H200

import pytest

DATA = ROOT / "tests" / "data" / "tvm_ffi"


def test_every_tvm_ffi_import_has_a_model_in_the_tvm_ffi_family():
    for symbol in ("TVMFFIEnvGetStream", "TVMFFIErrorSetRaisedFromCStr", "TVMFFIErrorSetRaisedFromCStrParts",
                   "CuteDSLRT_TVMFFISetRaisedCudaError"):
        family, model = owner(symbol)
        assert family.name == "tvm_ffi" and model.symbol == symbol


def test_the_stream_is_the_one_set_for_that_cuda_device_else_null():
    state = TvmFfiState()
    state.begin({1: 0x6000})
    get = TVM_FFI_BEHAVIOURS["TVMFFIEnvGetStream"]
    assert get(state, None, SimpleNamespace(device_type=2, device_id=1))[0] == 0x6000
    assert get(state, None, SimpleNamespace(device_type=2, device_id=0))[0] == 0
    assert get(state, None, SimpleNamespace(device_type=1, device_id=1))[0] == 0


def test_parts_are_concatenated_and_null_parts_skipped():
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(0x1000, 0x1000)
    uc.mem_write(0x1100, b"Mismatched \0")
    uc.mem_write(0x1200, b"x.shape[0]\0")
    uc.mem_write(0x1000, struct.pack("<3Q", 0x1100, 0, 0x1200))
    state = TvmFfiState()
    ret, extra = TVM_FFI_BEHAVIOURS["TVMFFIErrorSetRaisedFromCStrParts"](
        state, uc, SimpleNamespace(kind="ValueError", message_parts=0x1000, num_parts=3))
    assert state.raised == {"kind": "ValueError", "message": "Mismatched x.shape[0]"} == {"kind": "ValueError", **extra}


@pytest.mark.oracle(H200)
def test_a_device_index_the_machine_lacks_is_the_cuda_error_101_the_h200_raised():
    args = [{"tensor": {"dtype": "float32", "shape": [128], "strides": [1], "device": "cuda:3"}}, {"float": 2.0},
            {"stream": 0x5000}]
    run = emu.trace(DATA / "vec_scale.o", entries=[{"tvm_ffi": {"args": args}}], runtime={"device_count": 1})
    entry, = run.entries
    assert entry.returned == -1 and entry.raised == {"kind": "CUDADialectError", "message": "CUDA Error Code: 101"}
    setter, raiser = run.calls[-2:]                  # it raises through the setter the object gave it, in the guest
    assert (raiser.symbol, raiser.args["error"]) == ("CuteDSLRT_TVMFFISetRaisedCudaError", 101)
    assert (setter.symbol, setter.caller, setter.args["num_parts"]) == (
        "TVMFFIErrorSetRaisedFromCStrParts", "CuteDSLRT_TVMFFISetRaisedCudaError", 2)


def test_env_stream_reaches_the_entry_and_a_second_call_does_not_load_again():
    run = emu.trace(DATA / "pair_add.o", entries=[{"tvm_ffi": {"env_stream": {0: 0x5000}}},
                                                  {"tvm_ffi": {"env_stream": {0: 0x6000}}}])
    assert [(e.returned, e.raised) for e in run.entries] == [(0, None), (0, None)]
    assert [c.ret for c in run.calls if c.symbol == "TVMFFIEnvGetStream"] == [0x5000, 0x6000]
    assert sum(c.symbol == "_cudaLibraryLoadData" for c in run.calls) == 1
    assert sum(c.symbol == "_cudaLaunchKernelEx" for c in run.calls) == 2
