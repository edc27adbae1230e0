"""Register and memory access through libunicorn's C API, bypassing the Python wrappers.

Unicorn's Python `reg_read` picks a register class on every call and costs several
microseconds; stubs read half a dozen registers per call, thousands of times per
test run.  These helpers call `uc_reg_read`/`uc_mem_read` directly on the engine
handle.  That reaches into the binding's private parts (its `uclib`, an engine's `_uch`
handle, `_callbacks` and `_hook_exception`): `DIRECT` says whether the installed binding
has them as the pinned unicorn==2.1.4 does, checked once at import, and where it does not
(or `EMU_UNICORN_PUBLIC=1` asks for it) every helper here is the public binding's own call
instead (emu.emulator.unicorn_public): slower, never wrong.

Memory emu maps from its own buffers (`HostBacked`: the stack, the host scratch area,
an image's data) is read and written as Python memory, with no call into Unicorn at
all; `uc_mem_write` would also toggle a read-only region writable and back, which
rebuilds Unicorn's memory map every time.
"""
from __future__ import annotations

import ctypes
import mmap
import os
import struct

from unicorn import UC_HOOK_CODE, Uc, UcError

from .backed_regions import backed_region


def binding_as_checked(engine_class: type = Uc) -> bool:
    """Whether the binding keeps what the direct calls read: libunicorn as `uclib`, the hook handle type, and
    engines that hold their handle in `_uch`, their hooks in `_callbacks` and a hook's exception in
    `_hook_exception` (read from the names the engine's constructor sets)."""
    try:
        from unicorn.unicorn_py3.unicorn import uc_hook_h, uclib    # noqa: F401 - present is what is checked
        names = set(engine_class.__init__.__code__.co_names)
        return {"_uch", "_callbacks", "_hook_exception"} <= names and all(
            hasattr(uclib, name) for name in ("uc_reg_read", "uc_reg_read_batch", "uc_mem_read", "uc_emu_start", "uc_hook_add"))
    except (ImportError, AttributeError):
        return False


DIRECT = os.environ.get("EMU_UNICORN_PUBLIC") != "1" and binding_as_checked()
if DIRECT:
    from unicorn.unicorn_py3.unicorn import uc_hook_h as _HOOK_HANDLE
    from unicorn.unicorn_py3.unicorn import uclib as _LIB


def _plain(name: str, *argtypes):
    """libunicorn's `name`, called with plain integers for the engine handle and pointers.

    The binding's prototypes declare pointer classes (uc_engine, POINTER(c_int)) whose
    per-argument conversion costs as much as the call itself; the same C function behind
    a prototype of c_void_p and integer types takes Python ints as they are.  Callers
    pass only addresses of buffers they keep alive.
    """
    address = ctypes.cast(getattr(_LIB, name), ctypes.c_void_p).value
    return ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(address)


# The C entry points with plain-integer prototypes:
# (engine, regid, value*), (engine, regids*, values**, count), (engine, address, buffer, size)
_P, _I, _Q = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64
if DIRECT:
    c_reg_read = _plain("uc_reg_read", _P, _I, _P)
    c_reg_write = _plain("uc_reg_write", _P, _I, _P)
    c_reg_read_batch = _plain("uc_reg_read_batch", _P, _P, _P, _I)
    c_reg_write_batch = _plain("uc_reg_write_batch", _P, _P, _P, _I)
    c_mem_read = _plain("uc_mem_read", _P, _Q, _P, _Q)
    c_mem_write = _plain("uc_mem_write", _P, _Q, ctypes.c_char_p, _Q)
    c_mem_protect = _plain("uc_mem_protect", _P, _Q, _Q, ctypes.c_uint32)
    c_emu_start = _plain("uc_emu_start", _P, _Q, _Q, _Q, ctypes.c_size_t)


def emu_start(uc: Uc, begin: int, until: int, timeout: int, count: int) -> None:
    """Uc.emu_start without the binding's argument conversion (a few microseconds per entry).

    An exception a Python hook (Uc.hook_add) raised is kept by the binding on the engine
    and re-raised here, as Uc.emu_start does.
    """
    uc._hook_exception = None
    status = c_emu_start(uc._uch.value, begin, until, timeout, count)
    if status:
        raise UcError(status)
    if uc._hook_exception is not None:
        raise uc._hook_exception


_U64 = ctypes.c_uint64()
_U64_ADDRESS = ctypes.addressof(_U64)


def reg_read64(uc: Uc, reg: int) -> int:
    status = c_reg_read(uc._uch.value, reg, _U64_ADDRESS)
    if status:
        raise UcError(status)
    return _U64.value


def reg_write64(uc: Uc, reg: int, value: int) -> None:
    _U64.value = value & 0xFFFFFFFFFFFFFFFF
    status = c_reg_write(uc._uch.value, reg, _U64_ADDRESS)
    if status:
        raise UcError(status)


_WIDE = ctypes.create_string_buffer(64)          # one register of up to 512 bits
_WIDE_ADDRESS = ctypes.addressof(_WIDE)


def reg_read_bytes(uc: Uc, reg: int, size: int) -> bytes:
    """The low `size` bytes (at most 64) of a vector register, little-endian."""
    status = c_reg_read(uc._uch.value, reg, _WIDE_ADDRESS)
    if status:
        raise UcError(status)
    return _WIDE.raw[:size]


def reg_write_bytes(uc: Uc, reg: int, data: bytes) -> None:
    """Write a vector register from `data`, zero-filled to 64 bytes (a zmm's full width)."""
    _WIDE.raw = data + bytes(64 - len(data)) if len(data) < 64 else data
    status = c_reg_write(uc._uch.value, reg, _WIDE_ADDRESS)
    if status:
        raise UcError(status)


def reg_clear_above(uc: Uc, reg: int, keep: int) -> None:
    """Zero a vector register from byte `keep` up, in place in one read and one write."""
    engine = uc._uch.value
    status = c_reg_read(engine, reg, _WIDE_ADDRESS)
    if status:
        raise UcError(status)
    ctypes.memset(_WIDE_ADDRESS + keep, 0, 64 - keep)
    status = c_reg_write(engine, reg, _WIDE_ADDRESS)
    if status:
        raise UcError(status)


class HostBacked:
    """A guest range whose bytes live in a host mmap that Unicorn maps with uc_mem_map_ptr."""

    __slots__ = ("address", "size", "perms", "end", "view", "_buffer", "_pin")

    def __init__(self, uc: Uc, address: int, size: int, perms: int):
        self.address, self.size, self.perms, self.end = address, size, perms, address + size
        self._buffer = mmap.mmap(-1, size)
        self._pin = ctypes.c_char.from_buffer(self._buffer)
        self.view = memoryview(self._buffer)
        uc.mem_map_ptr(address, size, perms, ctypes.addressof(self._pin))
        backed = uc.__dict__.setdefault("emu_backed", [])
        backed.append(self)

    def unmap(self, uc: Uc) -> None:
        uc.mem_unmap(self.address, self.size)
        if self in uc.emu_backed:              # not while inaccessible (protect)
            uc.emu_backed.remove(self)
        self.view.release()
        del self._pin
        self._buffer.close()

    def write(self, address: int, data: bytes) -> None:
        start = address - self.address
        self.view[start:start + len(data)] = data

    def protect(self, uc: Uc, perms: int) -> None:
        """Change what the guest may do here.  While it may do nothing, the region is left out of the
        regions emu reads and writes directly (`backed_region` scans them on every access)."""
        mem_protect(uc, self.address, self.size, perms)
        backed = uc.emu_backed
        if not perms:
            backed.remove(self)
        elif self not in backed:
            backed.append(self)
        self.perms = perms


def mem_read(uc: Uc, address: int, size: int) -> bytes:
    region = backed_region(uc, address, size)
    if region is not None:
        start = address - region.address
        return region.view[start:start + size].tobytes()
    buffer = ctypes.create_string_buffer(size)
    status = c_mem_read(uc._uch.value, address, ctypes.addressof(buffer), size)
    if status:
        raise UcError(status)
    return buffer.raw


def mem_write(uc: Uc, address: int, data: bytes) -> None:
    """Write guest memory whatever its permissions (as uc_mem_write does: emu's own writes)."""
    region = backed_region(uc, address, len(data))
    if region is not None:
        region.write(address, data)
        return
    status = c_mem_write(uc._uch.value, address, bytes(data), len(data))
    if status:
        raise UcError(status)


def mem_protect(uc: Uc, address: int, size: int, perms: int) -> None:
    status = c_mem_protect(uc._uch.value, address, size, perms)
    if status:
        raise UcError(status)


class RegisterBatch:
    """Reads a fixed list of 64-bit registers with one uc_reg_read_batch call."""

    def __init__(self, regs: tuple[int, ...]):
        self.regs = regs
        self._ids = (ctypes.c_int * len(regs))(*regs)
        self._values = (ctypes.c_uint64 * len(regs))()
        self._pointers = (ctypes.c_void_p * len(regs))(*(ctypes.addressof(self._values) + 8 * i for i in range(len(regs))))
        self._call = (ctypes.addressof(self._ids), ctypes.addressof(self._pointers), len(regs))
        # the values move through the array's buffer with struct: a third of indexing a ctypes array
        self._words = struct.Struct(f"<{len(regs)}Q")

    def read(self, uc: Uc) -> tuple[int, ...]:
        status = c_reg_read_batch(uc._uch.value, *self._call)
        if status:
            raise UcError(status)
        return self._words.unpack_from(self._values)

    def write(self, uc: Uc, values) -> None:
        """Write the registers, in order, with one uc_reg_write_batch call."""
        self._words.pack_into(self._values, 0, *[value & 0xFFFFFFFFFFFFFFFF for value in values])
        status = c_reg_write_batch(uc._uch.value, *self._call)
        if status:
            raise UcError(status)


# uc_cb_hookcode_t, with the engine as a plain integer: the binding's prototype builds a
# uc_engine object for it on every callback.
_HOOK_CODE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_void_p)


def code_hook_callback(callback):
    """`callback(engine, address, size, key)` as the C function a code hook calls (see hook_code_direct).

    Made once and passed to every hook of one callback: a machine that hooks each
    vector site of every object it loads would otherwise build a C thunk per site.
    """
    return _HOOK_CODE(callback)


def hook_code_direct(uc: Uc, callback, begin: int, end: int) -> int:
    """A code hook whose C callback is `callback(engine, address, size, key)` itself.

    Unicorn's Python hook_add wraps every callback in two more Python frames (an
    exception guard and an argument adapter); on the stub window that runs for every
    stub call.  The callback must not raise: an exception raised in a ctypes callback
    is printed and dropped, so it keeps its own guard.  `callback` may be one that
    `code_hook_callback` made already.
    """
    function = callback if isinstance(callback, _HOOK_CODE) else _HOOK_CODE(callback)
    handle = _HOOK_HANDLE()
    status = _LIB.uc_hook_add(uc._uch, ctypes.byref(handle), UC_HOOK_CODE, function, ctypes.c_void_p(0),
                              ctypes.c_uint64(begin), ctypes.c_uint64(end))
    if status:
        raise UcError(status)
    uc._callbacks[handle.value] = function       # kept alive, and hook_del works as for any hook
    return handle.value


# libunicorn 2.1.4 lays a hook out as `struct hook` (include/uc_priv.h): five ints and a bool, then the
# two uint64 bounds a code hook fires within.  emu.emulator.site_hooks moves hooks by writing their bounds (it says
# when that is sound); `hook_bounds_movable` checks this layout on the loaded library first.
_HOOK_BOUNDS_OFFSET = 24
_BOUNDS = ctypes.c_uint64 * 2
_NO_CALLBACK = _HOOK_CODE(lambda *_: None)


def hook_bounds_view(handle: int):
    """The [begin, end] the hook `handle` (from hook_code_direct) fires within, as a two-item ctypes array:
    writing it moves the hook from then on.  Made once per hook; valid until the hook is deleted."""
    return _BOUNDS.from_address(handle + _HOOK_BOUNDS_OFFSET)


def hook_bounds(handle: int) -> tuple[int, int]:
    """The [begin, end] the hook `handle` fires within now (as hook_bounds_view's writes left them)."""
    return tuple(hook_bounds_view(handle))


def hook_bounds_movable(uc: Uc) -> bool:
    """Whether this libunicorn keeps a hook's bounds where hook_bounds_view writes them: a hook made with
    known bounds reads them back there."""
    probe = hook_code_direct(uc, _NO_CALLBACK, 0x5EED_0000_1000, 0x5EED_0000_1001)
    try:
        return hook_bounds(probe) == (0x5EED_0000_1000, 0x5EED_0000_1001)
    finally:
        uc.hook_del(probe)


class WideRegisterBatch:
    """A fixed list of vector registers read and written with one batch call, as one contiguous buffer.

    Register i occupies bytes [64 i, 64 i + 64) of `buffer` (512 bits each, whatever the
    register's width), so a caller can work on all of them as one bytes object.
    """

    def __init__(self, regs: tuple[int, ...]):
        self.regs = regs
        self.buffer = ctypes.create_string_buffer(64 * len(regs))
        base = ctypes.addressof(self.buffer)
        self._ids = (ctypes.c_int * len(regs))(*regs)
        self._pointers = (ctypes.c_void_p * len(regs))(*(base + 64 * i for i in range(len(regs))))
        self._call = (ctypes.addressof(self._ids), ctypes.addressof(self._pointers), len(regs))

    def read(self, uc: Uc) -> bytes:
        status = c_reg_read_batch(uc._uch.value, *self._call)
        if status:
            raise UcError(status)
        return self.buffer.raw

    def write(self, uc: Uc, data: bytes | None = None) -> None:
        """Write the registers from `data` (64 bytes each), or from the buffer as it is."""
        if data is not None:
            ctypes.memmove(self.buffer, data, len(self.buffer))
        status = c_reg_write_batch(uc._uch.value, *self._call)
        if status:
            raise UcError(status)


if not DIRECT:          # the binding is not as checked (or EMU_UNICORN_PUBLIC=1): its public calls instead
    from .unicorn_public import (RegisterBatch, WideRegisterBatch, code_hook_callback, emu_start,  # noqa: F811, E402
                                 hook_bounds_movable, hook_code_direct, mem_protect, mem_read, mem_write, reg_clear_above,
                                 reg_read64, reg_read_bytes, reg_write64, reg_write_bytes)
