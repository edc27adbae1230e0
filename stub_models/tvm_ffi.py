"""Pydantic models of the Apache TVM-FFI functions a TVM-FFI export calls (and the DSL runtime's one for them).

From `tvm/ffi/c_api.h` and `tvm/ffi/extra/c_env_api.h` (apache-tvm-ffi 0.1.15): the stream the framework set
for a device, and the two error setters the generated entry raises its argument errors through; from
libcute_dsl_runtime.so (nvidia-cutlass-dsl 4.8.1): `CuteDSLRT_TVMFFISetRaisedCudaError`, which turns a CUDA
error code into a raised error through the setter it is given.  emu's tvm_ffi family
(emu.stubs.families.tvm_ffi) answers them; `stub_models.TVM_FFI_REGISTRY` lists them.
"""
# No `from __future__ import annotations`: pydantic reads these annotations as objects, not strings to evaluate.

from typing import ClassVar

from pydantic import Field

from .base import StubCall
from .fields import CString, Int, Ptr


class TvmFfiCall(StubCall):
    """Base of the TVM-FFI models (api = "tvm_ffi")."""

    api: ClassVar[str] = "tvm_ffi"


class TVMFFIEnvGetStream(TvmFfiCall):
    """The stream the framework set for (device_type, device_id) with TVMFFIEnvSetStream; NULL when none was set."""

    symbol: ClassVar[str] = "TVMFFIEnvGetStream"
    prototype: ClassVar[str] = "TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type, int32_t device_id)"
    device_type: Int = Field(description="DLDeviceType (2: kDLCUDA)")
    device_id: Int = Field(description="the device's index")


class TVMFFIErrorSetRaisedFromCStr(TvmFfiCall):
    """Store the error `kind: message` as the thread's raised error (what the caller's Python sees raised)."""

    symbol: ClassVar[str] = "TVMFFIErrorSetRaisedFromCStr"
    prototype: ClassVar[str] = "void TVMFFIErrorSetRaisedFromCStr(const char *kind, const char *message)"
    kind: CString = Field(description="the Python error class: TypeError, ValueError, RuntimeError, ...")
    message: CString = Field(description="the message")


class TVMFFIErrorSetRaisedFromCStrParts(TvmFfiCall):
    """Store the error `kind`, its message the parts concatenated in order, NULL parts skipped
    (SafeCallContext::SetRaisedByCstrParts in apache-tvm-ffi's src/ffi/error.cc)."""

    symbol: ClassVar[str] = "TVMFFIErrorSetRaisedFromCStrParts"
    prototype: ClassVar[str] = ("void TVMFFIErrorSetRaisedFromCStrParts(const char *kind, const char **message_parts, "
                                "int32_t num_parts)")
    kind: CString = Field(description="the Python error class")
    message_parts: Ptr = Field(description="an array of num_parts C strings (NULL entries skipped)")
    num_parts: Int = Field(description="how many parts")


class CuteDSLRTTVMFFISetRaisedCudaError(TvmFfiCall):
    """Raise a CUDA error through `set_error_parts` (a TVMFFIErrorSetRaisedFromCStrParts): kind
    "CUDADialectError", parts "CUDA Error Code: " and the code in decimal; nothing when the setter is NULL
    (read from the x86-64 disassembly of nvidia-cutlass-dsl 4.8.1's libcute_dsl_runtime.so)."""

    symbol: ClassVar[str] = "CuteDSLRT_TVMFFISetRaisedCudaError"
    calls_back: ClassVar[bool] = True      # it calls the setter it is given (emu.emulator.guest_calls)
    prototype: ClassVar[str] = ("void CuteDSLRT_TVMFFISetRaisedCudaError(TVMFFIErrorSetRaisedFromCStrParts_t set_error_parts, "
                                "cudaError_t error)")
    set_error_parts: Ptr = Field(description="the parts setter it raises through")
    error: Int = Field(description="the cudaError_t, written in decimal")


TVM_FFI_MODELS = (TVMFFIEnvGetStream, TVMFFIErrorSetRaisedFromCStr, TVMFFIErrorSetRaisedFromCStrParts,
                  CuteDSLRTTVMFFISetRaisedCudaError)
