"""Register and memory access through libunicorn's C API, bypassing the Python wrappers.

Unicorn's Python `reg_read` picks a register class on every call and costs several
microseconds; stubs read half a dozen registers per call, thousands of times per
test run.  These helpers call `uc_reg_read`/`uc_mem_read` directly on the engine
handle, and fall back to the public API if those internals ever move.
"""
from __future__ import annotations

import ctypes

from unicorn import Uc, UcError

try:
    from unicorn.unicorn_py3.unicorn import uclib as _LIB
except ImportError:  # pragma: no cover - other unicorn layouts
    _LIB = None

_U64 = ctypes.c_uint64()
_U64_REF = ctypes.byref(_U64)


def reg_read64(uc: Uc, reg: int) -> int:
    if _LIB is None:
        return uc.reg_read(reg)
    status = _LIB.uc_reg_read(uc._uch, reg, _U64_REF)
    if status:
        raise UcError(status)
    return _U64.value


def reg_write64(uc: Uc, reg: int, value: int) -> None:
    if _LIB is None:
        uc.reg_write(reg, value)
        return
    _U64.value = value & 0xFFFFFFFFFFFFFFFF
    status = _LIB.uc_reg_write(uc._uch, reg, _U64_REF)
    if status:
        raise UcError(status)


def mem_read(uc: Uc, address: int, size: int) -> bytes:
    if _LIB is None:
        return bytes(uc.mem_read(address, size))
    buffer = ctypes.create_string_buffer(size)
    status = _LIB.uc_mem_read(uc._uch, address, buffer, size)
    if status:
        raise UcError(status)
    return buffer.raw


def mem_write(uc: Uc, address: int, data: bytes) -> None:
    if _LIB is None:
        uc.mem_write(address, data)
        return
    status = _LIB.uc_mem_write(uc._uch, address, data, len(data))
    if status:
        raise UcError(status)


class RegisterBatch:
    """Reads a fixed list of 64-bit registers with one uc_reg_read_batch call."""

    def __init__(self, regs: tuple[int, ...]):
        self.regs = regs
        self._ids = (ctypes.c_int * len(regs))(*regs)
        self._values = (ctypes.c_uint64 * len(regs))()
        self._pointers = (ctypes.c_void_p * len(regs))(*(ctypes.addressof(self._values) + 8 * i for i in range(len(regs))))

    def read(self, uc: Uc) -> list[int]:
        if _LIB is None:
            return [uc.reg_read(reg) for reg in self.regs]
        status = _LIB.uc_reg_read_batch(uc._uch, self._ids, self._pointers, len(self.regs))
        if status:
            raise UcError(status)
        return self._values[:]
