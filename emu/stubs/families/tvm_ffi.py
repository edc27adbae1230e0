"""The TVM-FFI family: libtvm_ffi.so's functions a TVM-FFI export calls, and the DSL runtime's CUDA-error raiser.

Its state for a run (`TvmFfiState`) is the environment a framework gives the entry: the stream set per CUDA
device (a `tvm_ffi` entry's `env_stream`), and the error the entry raised, which the run reads back after
the entry returns (emu.abi.tvm_ffi) as a Python caller would see it raised.
"""
from __future__ import annotations

import struct

from stub_models import TVM_FFI_CATALOGUE

from unicorn import UcError

from ...emulator.unicorn_c import mem_read
from ...errors import StubFailure
from ..dispatch import read_c_string
from ..family import StubFamily

CUDA_DEVICE_TYPE = 2            # kDLCUDA
CUDA_ERROR_KIND = "CUDADialectError"
CUDA_ERROR_PREFIX = "CUDA Error Code: "
MAX_PARTS = 4096


class TvmFfiState:
    """The streams the framework set (by CUDA device id) and the error raised since the entry began."""

    def __init__(self):
        self.env_stream: dict[int, int] = {}
        self.raised: dict[str, str] | None = None

    def begin(self, env_stream: dict[int, int] | None) -> None:
        """A new call of the entry: the framework's streams for it, nothing raised yet."""
        self.env_stream = dict(env_stream or {})
        self.raised = None


def _env_get_stream(state: TvmFfiState, uc, call) -> tuple[int, dict]:
    """As EnvContext::GetStream: the stream set for the device, NULL for one that has none."""
    if call.device_type != CUDA_DEVICE_TYPE:
        return 0, {}
    return state.env_stream.get(call.device_id, 0), {}


def _set_raised(state: TvmFfiState, uc, call) -> tuple[int, dict]:
    state.raised = {"kind": call.kind or "", "message": call.message or ""}
    return 0, {}


def _set_raised_parts(state: TvmFfiState, uc, call) -> tuple[int, dict]:
    """The parts concatenated in order, NULL ones skipped (SetRaisedByCstrParts); the message joins the record."""
    count = max(call.num_parts, 0)
    if count > MAX_PARTS:
        raise StubFailure(f"TVMFFIErrorSetRaisedFromCStrParts with {count} parts (more than {MAX_PARTS})")
    try:
        pointers = struct.unpack(f"<{count}Q", mem_read(uc, call.message_parts, 8 * count)) if count else ()
    except UcError:
        raise StubFailure(f"message_parts at {call.message_parts:#x} ({count} pointers) is not readable memory") from None
    message = "".join(read_c_string(uc, p) or "" for p in pointers if p)
    state.raised = {"kind": call.kind or "", "message": message}
    return 0, {"message": message}


def _set_raised_cuda_error(state: TvmFfiState, call, guest):
    """libcute_dsl_runtime.so: snprintf(buf, 32, "%d", error), then set_error_parts("CUDADialectError",
    {"CUDA Error Code: ", buf}, 2), called in the guest (the setter the object passes is its own import of
    TVMFFIErrorSetRaisedFromCStrParts, which stores the error); a NULL setter raises nothing."""
    if call.set_error_parts == 0:
        return 0, {}
    kind = guest.local(CUDA_ERROR_KIND.encode() + b"\0")
    prefix = guest.local(CUDA_ERROR_PREFIX.encode() + b"\0")
    number = guest.local(str(call.error).encode()[:31] + b"\0")
    parts = guest.local(struct.pack("<2Q", prefix, number))
    yield guest.call("set_error_parts", call.set_error_parts, kind, parts, 2)
    return 0, {}


TVM_FFI_BEHAVIOURS = {
    "TVMFFIEnvGetStream": _env_get_stream,
    "TVMFFIErrorSetRaisedFromCStr": _set_raised,
    "TVMFFIErrorSetRaisedFromCStrParts": _set_raised_parts,
    "CuteDSLRT_TVMFFISetRaisedCudaError": _set_raised_cuda_error,
}


class TvmFfiFamily(StubFamily):
    name = "tvm_ffi"
    models = TVM_FFI_CATALOGUE
    behaviours = TVM_FFI_BEHAVIOURS

    def new_state(self, dispatcher):
        return TvmFfiState()

    def answer(self, dispatcher, uc, plan, arguments, record):
        ret, extra = plan.behaviour(dispatcher.state(self), uc, arguments)
        if extra:                       # record["args"] is the call model's own dict: not changed
            record["args"] = {**record["args"], **extra}
        return ret


FAMILY = TvmFfiFamily()
