"""emu.emulator.unicorn_c's helpers through Unicorn's public Python binding only.

Used where the installed binding does not keep the private parts the direct C calls read
(unicorn_c.binding_as_checked), or when `EMU_UNICORN_PUBLIC=1` asks for it: every call
costs the binding's own conversions, and a run gives the same trace.  Memory emu keeps in
its own buffers (HostBacked) is still read and written as Python memory.
"""
from __future__ import annotations

from unicorn import UC_HOOK_CODE, Uc

from .backed_regions import backed_region

_MASK64 = 0xFFFFFFFFFFFFFFFF


def emu_start(uc: Uc, begin: int, until: int, timeout: int, count: int) -> None:
    uc.emu_start(begin, until, timeout, count)


def reg_read64(uc: Uc, reg: int) -> int:
    return uc.reg_read(reg) & _MASK64


def reg_write64(uc: Uc, reg: int, value: int) -> None:
    uc.reg_write(reg, value & _MASK64)


def reg_read_bytes(uc: Uc, reg: int, size: int) -> bytes:
    """The low `size` bytes (at most 64) of a vector register, little-endian."""
    value = uc.reg_read(reg)
    return (value if isinstance(value, int) else 0).to_bytes(64, "little")[:size]


def reg_write_bytes(uc: Uc, reg: int, data: bytes) -> None:
    """Write a vector register from `data`, zero-filled to its width."""
    uc.reg_write(reg, int.from_bytes(data, "little"))


def reg_clear_above(uc: Uc, reg: int, keep: int) -> None:
    """Zero a vector register from byte `keep` up."""
    reg_write_bytes(uc, reg, reg_read_bytes(uc, reg, keep))


def mem_read(uc: Uc, address: int, size: int) -> bytes:
    region = backed_region(uc, address, size)
    if region is not None:
        start = address - region.address
        return region.view[start:start + size].tobytes()
    return bytes(uc.mem_read(address, size))


def mem_write(uc: Uc, address: int, data: bytes) -> None:
    """Write guest memory whatever its permissions (as uc_mem_write does: emu's own writes)."""
    region = backed_region(uc, address, len(data))
    if region is not None:
        region.write(address, data)
        return
    uc.mem_write(address, bytes(data))


def mem_protect(uc: Uc, address: int, size: int, perms: int) -> None:
    uc.mem_protect(address, size, perms)


class RegisterBatch:
    """A fixed list of 64-bit registers, read and written one by one."""

    def __init__(self, regs: tuple[int, ...]):
        self.regs = regs

    def read(self, uc: Uc) -> tuple[int, ...]:
        return tuple(uc.reg_read(reg) & _MASK64 for reg in self.regs)

    def write(self, uc: Uc, values) -> None:
        for reg, value in zip(self.regs, values):
            uc.reg_write(reg, value & _MASK64)


class WideRegisterBatch:
    """A fixed list of vector registers as one buffer of 64 bytes each (as unicorn_c's)."""

    def __init__(self, regs: tuple[int, ...]):
        self.regs = regs
        self.buffer = bytearray(64 * len(regs))

    def read(self, uc: Uc) -> bytes:
        self.buffer[:] = b"".join(reg_read_bytes(uc, reg, 64) for reg in self.regs)
        return bytes(self.buffer)

    def write(self, uc: Uc, data: bytes | None = None) -> None:
        if data is not None:
            self.buffer[:] = data
        for index, reg in enumerate(self.regs):
            reg_write_bytes(uc, reg, bytes(self.buffer[64 * index:64 * index + 64]))


def code_hook_callback(callback):
    """`callback(engine, address, size, key)` as hook_code_direct takes it (here: the callable itself)."""
    return callback


def hook_code_direct(uc: Uc, callback, begin: int, end: int) -> int:
    """A code hook on [begin, end] calling `callback(engine, address, size, key)` through the binding."""
    return uc.hook_add(UC_HOOK_CODE, lambda _uc, address, size, key: callback(None, address, size, key),
                       begin=begin, end=end)


def hook_bounds_movable(uc: Uc) -> bool:
    """Hooks made through the binding are never moved in place: emu.emulator.site_hooks deletes and adds them."""
    return False
