"""Behaviours for the DSL runtime's `cuda_dialect_*_library_once` helpers, which run the object's own code.

What they do was read from `tvm_ffi_extension.c.o` in nvidia-cutlass-dsl 4.8.1's
libcuda_dialect_runtime_static.a and checked by a native run of that archive with a recording
CUDA runtime (tests/cuda/native_library_once/).  Each is a generator the dispatcher runs with the
guest (emu.stubs.dispatch `_StubGuest`): it yields the calls into the object's callbacks, receives their
return registers, and records the plain runtime calls it makes itself (cudaGetDeviceCount,
cudaGetErrorName, cudaGetErrorString, cudaLibraryUnload) with itself as their caller.  The spin lock
has nothing to do in one emulated thread; the malloc of the message never fails here.
"""
from __future__ import annotations

from typing import Generator

from stub_models.enums import CudaError as E

from ..runtime import CudaRuntime, Result
from .error_text import ERROR_TEXT, UNRECOGNIZED

KIND = "RuntimeError"
PREFIX = "Got Cuda Runtime Error: "


def _int32(value: int) -> int:
    value &= 0xFFFF_FFFF
    return value - (1 << 32) if value & 0x8000_0000 else value


def init_library_once(rt: CudaRuntime, call, guest) -> Generator[object, int, Result]:
    """`*library` filled: 0 at once.  Else `load(&lib)`; then, with `load_to_device`, cudaGetDeviceCount and
    `load_to_device(&lib, d)` for each device, an error only when every device fails; then `*library = lib`.
    An error calls `set_error("RuntimeError", "Got Cuda Runtime Error: <name> <string>")`, leaves `*library`
    as it was and returns -1 (the code asks again for the text: `load` or cudaGetDeviceCount is called twice more)."""
    if guest.read_u64(call.library):
        return 0, {}
    lib = guest.local(bytes(8))
    error = _int32((yield guest.call("load", call.load, lib)))
    if error:
        text = _error_string(guest, _int32((yield guest.call("load", call.load, lib))))
        name = _error_name(guest, _int32((yield guest.call("load", call.load, lib))))
        return (yield from _raise(call, guest, name, text))
    if call.load_to_device:
        count = guest.local(bytes(8))
        error = _device_count(rt, guest, count)
        if error:
            text = _error_string(guest, _device_count(rt, guest, count))
            name = _error_name(guest, _device_count(rt, guest, count))
            return (yield from _raise(call, guest, name, text))
        failed = last = device = 0
        while device < _int32(guest.read_u64(count)):        # re-read each time, as the compiled loop does
            status = _int32((yield guest.call("load_to_device", call.load_to_device, lib, device)))
            if status:
                failed, last = failed + 1, status
            device += 1
        if failed == _int32(guest.read_u64(count)) and last:
            text, name = _error_string(guest, last), _error_name(guest, last)
            return (yield from _raise(call, guest, name, text))
    guest.write_u64(call.library, guest.read_u64(lib))
    return 0, {}


def unload_library_once(rt: CudaRuntime, call, guest) -> Generator[object, int, Result]:
    """Swap `*library` with NULL; a handle it held is unloaded (cudaLibraryUnload, whose result is dropped)."""
    yield from ()                   # calls no guest code, but records the runtime call it makes
    handle = guest.read_u64(call.library)
    if handle:
        guest.write_u64(call.library, 0)
        injected = guest.injected("cudaLibraryUnload")
        error = injected if injected is not None else (E.SUCCESS if rt.unload_library(handle) else E.INVALID_RESOURCE_HANDLE)
        guest.record("cudaLibraryUnload", {"library": handle}, error, injected=injected is not None)
    return 0, {}


def _raise(call, guest, name: str, text: str) -> Generator[object, int, Result]:
    message = f"{PREFIX}{name} {text}"
    guest.tell("raised", f"{KIND}: {message}")          # the trace shows what the entry raises
    yield guest.call("set_error", call.set_error, guest.local(KIND.encode() + b"\0"), guest.local(message.encode() + b"\0"))
    return -1, {}


def _device_count(rt: CudaRuntime, guest, count: int) -> int:
    """The plain cudaGetDeviceCount: the profile's devices (none: cudaErrorNoDevice), written through `count`."""
    injected = guest.injected("cudaGetDeviceCount")
    if injected is not None:
        guest.record("cudaGetDeviceCount", {"count": count}, injected, injected=True)
        return int(injected)
    devices = rt.config.device_count
    error = E.SUCCESS if devices else E.NO_DEVICE
    guest.write_u64(count, (guest.read_u64(count) & ~0xFFFF_FFFF) | devices)
    guest.record("cudaGetDeviceCount", {"count": count}, error, {"count": devices})
    return int(error)


def _error_name(guest, error: int) -> str:
    return _error_text(guest, "cudaGetErrorName", error, 0)


def _error_string(guest, error: int) -> str:
    return _error_text(guest, "cudaGetErrorString", error, 1)


def _error_text(guest, symbol: str, error: int, which: int) -> str:
    """cudaGetErrorName / cudaGetErrorString: the runtime's text, returned as a pointer to it in the helper's locals
    (the record shows the text beside the argument, as libc's output functions do)."""
    text = ERROR_TEXT.get(error, (UNRECOGNIZED, UNRECOGNIZED))[which]
    guest.record(symbol, {"error": error, "text": text}, guest.local(text.encode() + b"\0"))
    return text
