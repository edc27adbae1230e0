"""Carry out, in Python, the x86-64 vector instructions Unicorn 2.1.4 cannot run.

Exports compiled for the host CPU (no ``--host-target``) contain AVX code: VEX.256
``vmovaps``/``vmovups`` on ymm, ``vzeroupper``, and on AVX-512 hosts possibly EVEX forms.
Unicorn 2.1.4's QEMU 5 core has no AVX: every VEX.256/EVEX instruction raises
UC_ERR_INSN_INVALID, and VEX.128 instructions run as if they were legacy SSE (the
third operand is ignored, bits 255:128 of the destination are not cleared, and
``vzeroupper``/``vzeroall`` do nothing).  ``AvxUnit`` hooks UC_HOOK_INSN_INVALID to carry
out the first kind; ``AvxUnit.scan`` finds VEX/EVEX sites in a code range so that
``install(uc, sites)`` can carry out the second kind too (through per-address code
hooks).  Only data movement and bitwise idioms are implemented; anything else stops
with ``UnsupportedInstruction`` rather than computing a wrong result.
"""

from __future__ import annotations

import ctypes
from typing import Callable, Iterable, NamedTuple

from capstone import CS_ARCH_X86, CS_MODE_64, Cs
from capstone import x86_const as CX

try:  # capstone's C entry points, for the scan's single-instruction decodes (see AvxUnit._decoder)
    from capstone import _cs as _CAPSTONE_LIB, _cs_insn as _CS_INSN
    _CS_DISASM, _CS_FREE = _CAPSTONE_LIB.cs_disasm, _CAPSTONE_LIB.cs_free
except ImportError:  # pragma: no cover - other capstone layouts use disasm_lite
    _CS_DISASM = _CS_FREE = _CS_INSN = None
from unicorn import UC_HOOK_CODE, UC_HOOK_INSN_INVALID, Uc, UcError
from unicorn import x86_const as UX

from ..fast_uc import (RegisterBatch, c_mem_read, c_reg_read, c_reg_read_batch, c_reg_write, c_reg_write_batch, mem_read,
                       mem_write, reg_read64, reg_write64)

__all__ = ["AvxUnit", "UnsupportedInstruction", "MisalignedAccess", "MemoryFault"]


class UnsupportedInstruction(Exception):
    """An instruction this unit does not carry out (or cannot, see subclasses)."""

    def __init__(self, address: int, size: int, mnemonic: str, op_str: str, why: str = "") -> None:
        self.address, self.size, self.mnemonic, self.op_str = address, size, mnemonic, op_str
        text = f"{mnemonic} {op_str}".strip()
        super().__init__(f"unsupported instruction '{text}' at {address:#x}" + (f": {why}" if why else ""))


class MisalignedAccess(UnsupportedInstruction):
    """An aligned vector move with a misaligned memory operand (#GP on real hardware)."""

    def __init__(self, address: int, size: int, mnemonic: str, op_str: str, ea: int, width: int) -> None:
        self.ea, self.width = ea, width
        super().__init__(address, size, mnemonic, op_str)
        self.args = (f"misaligned {width}-byte access at {ea:#x} by '{mnemonic} {op_str}' "
                     f"at {address:#x} (#GP on hardware)",)


class MemoryFault(UnsupportedInstruction):
    """Emulated memory could not be read or written."""

    def __init__(self, address: int, size: int, mnemonic: str, op_str: str,
                 ea: int, width: int, err: UcError) -> None:
        self.ea, self.width, self.error = ea, width, err
        super().__init__(address, size, mnemonic, op_str)
        self.args = (f"memory fault ({err}) accessing {width} bytes at {ea:#x} "
                     f"by '{mnemonic} {op_str}' at {address:#x}",)


# ---------------------------------------------------------------- register tables
# Operand tuples (decoded once per instruction):
#   ("v", zmm_reg, nbytes)               vector register, read/written as its full zmm
#   ("g", read_reg, write_reg64, nbytes) general register (writes zero-extend to 64 bits)
#   ("m", base, index, scale, disp, nbytes)  memory (base/index are Unicorn ids or 0)
#   ("i", value)                          immediate
_VEC: dict[int, tuple] = {}
for _i in range(32):
    _zmm = getattr(UX, f"UC_X86_REG_ZMM{_i}")
    for _kind, _n in (("XMM", 16), ("YMM", 32), ("ZMM", 64)):
        _VEC[getattr(CX, f"X86_REG_{_kind}{_i}")] = ("v", _zmm, _n)

_GPR64 = ["RAX", "RBX", "RCX", "RDX", "RSI", "RDI", "RBP", "RSP"] + [f"R{i}" for i in range(8, 16)]
_GPR32 = ["EAX", "EBX", "ECX", "EDX", "ESI", "EDI", "EBP", "ESP"] + [f"R{i}D" for i in range(8, 16)]
_GPR: dict[int, tuple] = {}   # capstone id -> (unicorn read id, unicorn 64-bit id, nbytes)
for _r64, _r32 in zip(_GPR64, _GPR32):
    _u64 = getattr(UX, f"UC_X86_REG_{_r64}")
    _GPR[getattr(CX, f"X86_REG_{_r64}")] = (_u64, _u64, 8)
    _GPR[getattr(CX, f"X86_REG_{_r32}")] = (getattr(UX, f"UC_X86_REG_{_r32}"), _u64, 4)

_ZMM = [getattr(UX, f"UC_X86_REG_ZMM{i}") for i in range(32)]
_LOW16 = {reg: 1 << i for i, reg in enumerate(_ZMM[:16])}     # the registers vzeroupper and vzeroall clear -> bit
_ALL16 = 0xFFFF
_M64 = (1 << 64) - 1
_M128 = (1 << 128) - 1
_BUF = ctypes.create_string_buffer(64)
_MBUF = ctypes.create_string_buffer(64)
_BUF_ADDRESS, _MBUF_ADDRESS = ctypes.addressof(_BUF), ctypes.addressof(_MBUF)


def _mem_read(uc: Uc, address: int, n: int) -> bytes:
    """Read n <= 64 bytes; raises UcError."""
    if c_mem_read is None:
        return bytes(uc.mem_read(address, n))
    status = c_mem_read(uc._uch.value, address, _MBUF_ADDRESS, n)
    if status:
        raise UcError(status)
    return _MBUF.raw[:n]


def _reg_read(uc: Uc, reg: int, n: int) -> int:
    if c_reg_read is None:
        return uc.reg_read(reg) & ((1 << (8 * n)) - 1)
    status = c_reg_read(uc._uch.value, reg, _BUF_ADDRESS)
    if status:
        raise UcError(status)
    return int.from_bytes(_BUF.raw[:n], "little")


def _reg_write(uc: Uc, reg: int, value: int) -> None:
    """Write a zmm (zero-extended to 512 bits) or a 64-bit general register."""
    if c_reg_write is None:
        uc.reg_write(reg, value)
        return
    _BUF.raw = value.to_bytes(64, "little")
    status = c_reg_write(uc._uch.value, reg, _BUF_ADDRESS)
    if status:
        raise UcError(status)


# ---------------------------------------------------------------- decoded instruction
class Decoded(NamedTuple):
    address: int
    size: int
    mnemonic: str
    op_str: str
    ops: tuple
    handler: Callable[[Uc, "Decoded"], None]

    def fail(self, why: str = "") -> UnsupportedInstruction:
        return UnsupportedInstruction(self.address, self.size, self.mnemonic, self.op_str, why)


def _ea(uc: Uc, op: tuple) -> int:
    _, base, index, scale, disp, _n = op
    if base and index:                     # both registers in one call
        base_value, index_value = _address_batch(base, index).read(uc)
        return (disp + base_value + index_value * scale) & _M64
    ea = disp
    if base:
        ea += reg_read64(uc, base)
    if index:
        ea += reg_read64(uc, index) * scale
    return ea & _M64


_ADDRESS_BATCHES: dict[tuple[int, int], RegisterBatch] = {}   # (base, index) -> its batch read (at most 16 x 16)


def _address_batch(base: int, index: int) -> RegisterBatch:
    batch = _ADDRESS_BATCHES.get((base, index))
    if batch is None:
        batch = _ADDRESS_BATCHES[(base, index)] = RegisterBatch((base, index))
    return batch
_RIP = UX.UC_X86_REG_RIP


def _load(uc: Uc, d: Decoded, ea: int, n: int) -> int:
    try:
        return int.from_bytes(mem_read(uc, ea, n), "little")
    except UcError as err:
        raise MemoryFault(d.address, d.size, d.mnemonic, d.op_str, ea, n, err) from None


def _store(uc: Uc, d: Decoded, ea: int, n: int, value: int) -> None:
    try:
        mem_write(uc, ea, (value & ((1 << (8 * n)) - 1)).to_bytes(n, "little"))
    except UcError as err:
        raise MemoryFault(d.address, d.size, d.mnemonic, d.op_str, ea, n, err) from None


def _read(uc: Uc, d: Decoded, op: tuple) -> int:
    kind = op[0]
    if kind == "v":
        return _reg_read(uc, op[1], op[2])
    if kind == "m":
        return _load(uc, d, _ea(uc, op), op[5])
    if kind == "g":
        return _reg_read(uc, op[1], op[3])
    return op[1]


def _write(uc: Uc, d: Decoded, op: tuple, value: int) -> None:
    """VEX/EVEX semantics: a register destination is zero-extended to the full zmm."""
    kind = op[0]
    if kind == "v":
        value &= (1 << (8 * op[2])) - 1
        if value >> 128 and op[1] in _LOW16:     # see _VectorFile.clear
            uc.emu_vector_uppers = uc.__dict__.get("emu_vector_uppers", _ALL16) | _LOW16[op[1]]
        _reg_write(uc, op[1], value)
    elif kind == "m":
        _store(uc, d, _ea(uc, op), op[5], value)
    elif kind == "g":
        _reg_write(uc, op[2], value & ((1 << (8 * op[3])) - 1))
    else:
        raise d.fail("immediate destination")


def _nbytes(op: tuple) -> int:
    return op[5] if op[0] == "m" else op[2] if op[0] == "v" else op[3]


# ---------------------------------------------------------------- handlers
def _mov(uc: Uc, d: Decoded) -> None:
    """Register/memory moves of one width."""
    dst, src = d.ops
    _write(uc, d, dst, _read(uc, d, src))


def _mov_low(bits: int) -> Callable[[Uc, Decoded], None]:
    """vmovd/vmovq: move the low 32/64 bits, zero-extending into a vector register."""
    mask = (1 << bits) - 1

    def handler(uc: Uc, d: Decoded) -> None:
        dst, src = d.ops
        _write(uc, d, dst, _read(uc, d, src) & mask)
    return handler


def _mov_aligned(uc: Uc, d: Decoded) -> None:
    """vmovaps & co: as _mov, but a memory operand must be aligned to its width (#GP)."""
    dst, src = d.ops
    if src[0] == "m":
        value = _load(uc, d, _aligned_ea(uc, d, src), src[5])
    else:
        value = _read(uc, d, src)
    if dst[0] == "m":
        _store(uc, d, _aligned_ea(uc, d, dst), dst[5], value)
    else:
        _write(uc, d, dst, value)


def _aligned_ea(uc: Uc, d: Decoded, op: tuple) -> int:
    ea = _ea(uc, op)
    if ea % op[5]:
        raise MisalignedAccess(d.address, d.size, d.mnemonic, d.op_str, ea, op[5])
    return ea


def _vector_move(d: Decoded) -> Callable[[Uc, Decoded], None] | None:
    """A handler made for one decoded full-width move between a vector register and memory.

    The loaders' ymm copies are most of the sites a run executes.  The generic path
    turns the bytes into an integer and back and looks up the address registers on
    every execution; this one keeps the bytes as bytes and reads the address registers
    with a batch made once.  Same semantics, exceptions and checks as _mov/_mov_aligned.
    """
    if d.handler not in (_mov, _mov_aligned) or len(d.ops) != 2:
        return None
    dst, src = d.ops
    aligned = d.handler is _mov_aligned
    if dst[0] == "v" and src[0] == "m" and src[5] == dst[2]:
        return _vector_load(dst[1], src, aligned)
    if dst[0] == "m" and src[0] == "v" and dst[5] == src[2]:
        return _vector_store(src[1], dst, aligned)
    return None


def _address_reader(op: tuple) -> Callable[[Uc], int]:
    """ea(uc) for one memory operand, as _ea computes it."""
    _, base, index, scale, disp, _ = op
    if base and index:
        batch = _address_batch(base, index)

        def both(uc: Uc) -> int:
            base_value, index_value = batch.read(uc)
            return (disp + base_value + index_value * scale) & _M64
        return both
    if base:
        return lambda uc: (disp + reg_read64(uc, base)) & _M64
    return lambda uc: _ea(uc, op)


def _vector_load(zmm: int, src: tuple, aligned: bool) -> Callable[[Uc, Decoded], None]:
    address, n = _address_reader(src), src[5]
    tail = bytes(64 - n)                           # VEX/EVEX zero the register above the loaded bytes
    wide_bit = _LOW16.get(zmm, 0) if n > 16 else 0

    def load(uc: Uc, d: Decoded) -> None:
        ea = address(uc)
        if aligned and ea % n:
            raise MisalignedAccess(d.address, d.size, d.mnemonic, d.op_str, ea, n)
        try:
            data = mem_read(uc, ea, n)
        except UcError as err:
            raise MemoryFault(d.address, d.size, d.mnemonic, d.op_str, ea, n, err) from None
        if wide_bit and data.count(0, 16) != n - 16:      # bits above 127 set: see _VectorFile.clear
            uc.emu_vector_uppers = uc.__dict__.get("emu_vector_uppers", _ALL16) | wide_bit
        if c_reg_write is None:
            uc.reg_write(zmm, int.from_bytes(data, "little"))
            return
        _BUF.raw = data + tail
        status = c_reg_write(uc._uch.value, zmm, _BUF_ADDRESS)
        if status:
            raise UcError(status)
    return load


def _vector_store(zmm: int, dst: tuple, aligned: bool) -> Callable[[Uc, Decoded], None]:
    address, n = _address_reader(dst), dst[5]

    def store(uc: Uc, d: Decoded) -> None:
        if c_reg_read is None:
            data = (uc.reg_read(zmm) & ((1 << (8 * n)) - 1)).to_bytes(n, "little")
        else:
            status = c_reg_read(uc._uch.value, zmm, _BUF_ADDRESS)
            if status:
                raise UcError(status)
            data = _BUF.raw[:n]
        ea = address(uc)
        if aligned and ea % n:
            raise MisalignedAccess(d.address, d.size, d.mnemonic, d.op_str, ea, n)
        try:
            mem_write(uc, ea, data)
        except UcError as err:
            raise MemoryFault(d.address, d.size, d.mnemonic, d.op_str, ea, n, err) from None
    return store


def _mov_scalar(uc: Uc, d: Decoded) -> None:
    """vmovss/vmovsd: a load zero-extends, a store writes the element, reg-reg merges."""
    if len(d.ops) == 2:
        _mov(uc, d)
        return
    dst, src1, src2 = d.ops
    mask = (1 << (32 if d.mnemonic == "vmovss" else 64)) - 1
    merged = (_read(uc, d, src1) & _M128 & ~mask) | (_read(uc, d, src2) & mask)
    _write(uc, d, dst, merged)


def _logic(fn: Callable[[int, int], int]) -> Callable[[Uc, Decoded], None]:
    def handler(uc: Uc, d: Decoded) -> None:
        dst, a, b = d.ops
        _write(uc, d, dst, fn(_read(uc, d, a), _read(uc, d, b)))
    return handler


def _pcmpeq(esize: int) -> Callable[[Uc, Decoded], None]:
    emask = (1 << (8 * esize)) - 1

    def handler(uc: Uc, d: Decoded) -> None:
        dst, a, b = d.ops
        if dst[0] != "v":
            raise d.fail("compare into a mask register")
        x, y, out = _read(uc, d, a), _read(uc, d, b), 0
        for shift in range(0, 8 * dst[2], 8 * esize):
            if (x >> shift) & emask == (y >> shift) & emask:
                out |= emask << shift
        _write(uc, d, dst, out)
    return handler


def _ternlog(uc: Uc, d: Decoded) -> None:
    """vpternlogd/q: bit i of the result = imm[(a_i << 2) | (b_i << 1) | c_i]."""
    dst, b, c, imm = d.ops
    full = (1 << (8 * dst[2])) - 1
    a, b, c, imm = _read(uc, d, dst), _read(uc, d, b), _read(uc, d, c), imm[1]
    out = 0
    for k in range(8):
        if imm >> k & 1:
            out |= (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c)
    _write(uc, d, dst, out & full)


def _broadcast(esize: int) -> Callable[[Uc, Decoded], None]:
    def handler(uc: Uc, d: Decoded) -> None:
        dst, src = d.ops
        elem = (_read(uc, d, src) & ((1 << (8 * esize)) - 1)).to_bytes(esize, "little")
        _write(uc, d, dst, int.from_bytes(elem * (dst[2] // esize), "little"))
    return handler


def _insert(uc: Uc, d: Decoded) -> None:
    """vinsertf128 & co: replace lane imm of src1 by src2 (lane width = src2 width)."""
    dst, src1, src2, imm = d.ops
    lane = 8 * _nbytes(src2)
    shift = lane * (imm[1] % (dst[2] * 8 // lane))
    value = _read(uc, d, src1) & ~(((1 << lane) - 1) << shift)
    _write(uc, d, dst, value | (_read(uc, d, src2) << shift))


def _extract(uc: Uc, d: Decoded) -> None:
    """vextractf128 & co: lane imm of src (lane width = destination width)."""
    dst, src, imm = d.ops
    lane = 8 * _nbytes(dst)
    shift = lane * (imm[1] % (src[2] * 8 // lane))
    _write(uc, d, dst, (_read(uc, d, src) >> shift) & ((1 << lane) - 1))


def _perm2x128(uc: Uc, d: Decoded) -> None:
    """vperm2f128/vperm2i128: each half picks a half of src1:src2, or zero (bit 3)."""
    dst, src1, src2, imm = d.ops
    pool = _read(uc, d, src1) | (_read(uc, d, src2) << 256)
    out = 0
    for half in range(2):
        ctl = imm[1] >> (4 * half)
        if not ctl & 8:
            out |= ((pool >> (128 * (ctl & 3))) & _M128) << (128 * half)
    _write(uc, d, dst, out)


class _VectorFile:
    """zmm0-15 read and written with one uc_reg_read_batch / uc_reg_write_batch each.

    vzeroupper touches all sixteen registers; one C call per register made it the
    costliest instruction the unit carries out.  The registers land in one contiguous
    buffer, so checking and clearing their upper parts is plain bytes work.

    Only this unit ever sets bits above 127 of zmm0-15 (Unicorn runs no AVX: its own SSE
    instructions leave them alone), so an emulator carries `emu_vector_uppers`, a bit
    per register that may hold such bits: set when a handler writes them, cleared here,
    and all set on an emulator the unit has not cleared yet.  A vzeroupper after a
    loader's one or two ymm moves then rewrites those registers alone.
    """

    def __init__(self) -> None:
        self._ids = (ctypes.c_int * 16)(*_ZMM[:16])
        self._buffer = ctypes.create_string_buffer(64 * 16)
        base = ctypes.addressof(self._buffer)
        self._pointers = (ctypes.c_void_p * 16)(*(base + 64 * i for i in range(16)))
        self._call = (ctypes.addressof(self._ids), ctypes.addressof(self._pointers), 16)

    def clear(self, uc: Uc, keep: int) -> None:
        """Zero every register from byte `keep` up (16: vzeroupper, 0: vzeroall)."""
        dirty = uc.__dict__.get("emu_vector_uppers", _ALL16) if keep else _ALL16
        if dirty == _ALL16 or c_reg_read is None:
            self._clear(uc, keep)
        else:
            engine = uc._uch.value
            for index in range(16):
                if dirty >> index & 1:          # its bits 511:128 cleared in place in the register buffer
                    status = c_reg_read(engine, _ZMM[index], _BUF_ADDRESS)
                    if status:
                        raise UcError(status)
                    ctypes.memset(_BUF_ADDRESS + 16, 0, 48)
                    status = c_reg_write(engine, _ZMM[index], _BUF_ADDRESS)
                    if status:
                        raise UcError(status)
        uc.emu_vector_uppers = 0

    def _clear(self, uc: Uc, keep: int) -> None:
        if c_reg_read_batch is None:
            for reg in _ZMM[:16]:
                _reg_write(uc, reg, _reg_read(uc, reg, keep) if keep else 0)
            return
        if keep:
            status = c_reg_read_batch(uc._uch.value, *self._call)
            if status:
                raise UcError(status)
            registers = int.from_bytes(self._buffer.raw, "little")
            if not registers & _UPPERS:        # the usual case: nothing above bit 127 is set
                return
            ctypes.memmove(self._buffer, (registers & ~_UPPERS).to_bytes(64 * 16, "little"), 64 * 16)
        else:
            ctypes.memset(self._buffer, 0, 64 * 16)
        status = c_reg_write_batch(uc._uch.value, *self._call)
        if status:
            raise UcError(status)


# Bits 128-511 of each of the sixteen 512-bit registers, as one integer over the batch buffer.
_UPPERS = sum(((1 << 384) - 1) << (512 * i + 128) for i in range(16))
_VECTOR_FILE = _VectorFile()


def _vzeroupper(uc: Uc, d: Decoded) -> None:
    _VECTOR_FILE.clear(uc, 16)


def _vzeroall(uc: Uc, d: Decoded) -> None:
    _VECTOR_FILE.clear(uc, 0)


_MOVES = ("vmovups", "vmovupd", "vmovdqu", "vmovdqu8", "vmovdqu16", "vmovdqu32", "vmovdqu64",
          "vlddqu")
_ALIGNED_MOVES = ("vmovaps", "vmovapd", "vmovdqa", "vmovdqa32", "vmovdqa64",
                  "vmovntps", "vmovntpd", "vmovntdq", "vmovntdqa")
_BROADCASTS = {"vpbroadcastb": 1, "vpbroadcastw": 2, "vpbroadcastd": 4, "vpbroadcastq": 8,
               "vbroadcastss": 4, "vbroadcastsd": 8, "vbroadcastf32x2": 8, "vbroadcasti32x2": 8,
               "vbroadcastf128": 16, "vbroadcasti128": 16, "vbroadcastf32x4": 16, "vbroadcasti32x4": 16,
               "vbroadcastf64x2": 16, "vbroadcasti64x2": 16, "vbroadcastf32x8": 32, "vbroadcasti32x8": 32,
               "vbroadcastf64x4": 32, "vbroadcasti64x4": 32}
_INSERTS = ("vinsertf128", "vinserti128", "vinsertf32x4", "vinserti32x4", "vinsertf64x2", "vinserti64x2",
            "vinsertf32x8", "vinserti32x8", "vinsertf64x4", "vinserti64x4")
_EXTRACTS = tuple(m.replace("insert", "extract") for m in _INSERTS)
_XOR = _logic(lambda a, b: a ^ b)
_AND = _logic(lambda a, b: a & b)
_OR = _logic(lambda a, b: a | b)
_ANDN = _logic(lambda a, b: ~a & b)

HANDLERS: dict[str, Callable[[Uc, Decoded], None]] = {
    **{m: _mov for m in _MOVES},
    **{m: _mov_aligned for m in _ALIGNED_MOVES},
    "vmovd": _mov_low(32), "vmovq": _mov_low(64),
    "vmovss": _mov_scalar, "vmovsd": _mov_scalar,
    **{m: _XOR for m in ("vxorps", "vxorpd", "vpxor", "vpxord", "vpxorq")},
    **{m: _AND for m in ("vandps", "vandpd", "vpand", "vpandd", "vpandq")},
    **{m: _OR for m in ("vorps", "vorpd", "vpor", "vpord", "vporq")},
    **{m: _ANDN for m in ("vandnps", "vandnpd", "vpandn", "vpandnd", "vpandnq")},
    "vpcmpeqb": _pcmpeq(1), "vpcmpeqw": _pcmpeq(2), "vpcmpeqd": _pcmpeq(4), "vpcmpeqq": _pcmpeq(8),
    "vpternlogd": _ternlog, "vpternlogq": _ternlog,
    **{m: _broadcast(n) for m, n in _BROADCASTS.items()},
    **{m: _insert for m in _INSERTS},
    **{m: _extract for m in _EXTRACTS},
    "vperm2f128": _perm2x128, "vperm2i128": _perm2x128,
    "vzeroupper": _vzeroupper, "vzeroall": _vzeroall,
}
"""Mnemonic -> handler.  Every handler writes vector destinations with VEX/EVEX semantics."""


# ---------------------------------------------------------------- decoding
def _operand(op, next_address: int) -> tuple | None:
    if op.type == CX.X86_OP_REG:
        if op.reg in _VEC:
            return _VEC[op.reg]
        if op.reg in _GPR:
            read, write64, n = _GPR[op.reg]
            return ("g", read, write64, n)
        return None                                   # mask, segment, x87... registers
    if op.type == CX.X86_OP_IMM:
        return ("i", op.imm & 0xFF)
    mem = op.mem
    if mem.segment != CX.X86_REG_INVALID:
        return None
    base, disp = 0, mem.disp
    if mem.base == CX.X86_REG_RIP:
        disp += next_address
    elif mem.base != CX.X86_REG_INVALID:
        if mem.base not in _GPR:
            return None
        base = _GPR[mem.base][0]
    index = 0
    if mem.index != CX.X86_REG_INVALID:
        if mem.index not in _GPR:                     # VSIB (gathers) is not supported
            return None
        index = _GPR[mem.index][0]
    return ("m", base, index, mem.scale, disp, op.size)


def _decode(insn) -> Decoded:
    handler = HANDLERS.get(insn.mnemonic)
    ops = tuple(_operand(op, insn.address + insn.size) for op in insn.operands)
    d = Decoded(insn.address, insn.size, insn.mnemonic, insn.op_str, ops, handler)
    if handler is None:
        raise d.fail()
    if "{" in insn.op_str:
        raise d.fail("EVEX masking, broadcast or rounding is not supported")
    if None in ops:
        raise d.fail("operand kind not supported")
    move = _vector_move(d)
    return d if move is None else d._replace(handler=move)


_ADDRESS_PREFIXES = (0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x67)
def _vex_leads(code: bytes) -> list[int]:
    """Offsets of every C4, C5 and 62 byte (bytes.find: ten times faster than a regex class)."""
    offsets = []
    for lead in (0xC4, 0xC5, 0x62):
        offset = code.find(lead)
        while offset >= 0:
            offsets.append(offset)
            offset = code.find(lead, offset + 1)
    offsets.sort()
    return offsets


# An instruction's form: its VEX (C5 xx, C4 xx xx) or EVEX (62 xx xx xx) prefix, opcode
# and ModRM.  These decide capstone's mnemonic and operand kinds (bytes after them are
# SIB, displacement and immediate), so the scan's verdict on a form is kept for the
# process.  Bounded: hostile code can hold any number of forms.
_FORM_LENGTH = {0xC5: 4, 0xC4: 5, 0x62: 6}
_FORMS: dict[bytes, bool] = {}
_FORMS_MAX = 1 << 16

# A C4 byte starts a VEX instruction only if its next byte names opcode map 1, 2 or 3
# (its low five bits; the other values are reserved and fault on hardware).  Code is
# full of C4 bytes inside displacements and immediates, and each candidate costs a
# disassembly: the map check drops most of them before that.
_VEX3_MAPS = frozenset(b for b in range(256) if b & 0x1F in (1, 2, 3))


def _is_xmm_store(mnemonic: str, op_str: str) -> bool:
    """A VEX.128 move from an xmm register to memory: Unicorn carries it out correctly.

    It writes no register (so no upper bits to zero) and has no third operand, the two
    things Unicorn gets wrong; leaving it unhooked saves a Python call per execution.
    """
    return (mnemonic.startswith("vmov") and op_str.startswith(("xmmword ptr", "qword ptr", "dword ptr"))
            and "ymm" not in op_str and "zmm" not in op_str and "{" not in op_str)


def _is_vector_vex(raw: bytes, mnemonic: str) -> bool:
    """VEX (C4/C5) or EVEX (62) encoded, and a vector or mask instruction (not BMI)."""
    i = 0
    while i < len(raw) and raw[i] in _ADDRESS_PREFIXES:
        i += 1
    return i < len(raw) and raw[i] in (0xC4, 0xC5, 0x62) and mnemonic[0] in "vk"


# ---------------------------------------------------------------- the unit
class AvxUnit:
    """Carries out the vector instructions Unicorn's QEMU 5 core lacks."""

    def __init__(self) -> None:
        self._cs = Cs(CS_ARCH_X86, CS_MODE_64)
        self._cs.detail = True
        self._lite = Cs(CS_ARCH_X86, CS_MODE_64)
        self._cache: dict[int, tuple[bytes, Decoded]] = {}
        self.last_error: UnsupportedInstruction | None = None
        # Whether a cached decode is checked against the bytes now at its address.  An
        # owner that knows when code changes (emu's Machine: code is read-only to the
        # guest and rewritten only between runs) turns this off and calls forget().
        self.verify_cache = True

    def forget(self) -> None:
        """Drop every cached decode (the code they came from has changed)."""
        self._cache.clear()

    def install(self, uc: Uc, sites: Iterable[int] = ()) -> None:
        """Hook invalid instructions; also take over the VEX.128 `sites` (see `scan`)."""
        uc.hook_add(UC_HOOK_INSN_INVALID, self._on_invalid)
        for address in sites:
            uc.hook_add(UC_HOOK_CODE, self._on_site, begin=address, end=address)

    def scan(self, code: bytes, address: int) -> list[int]:
        """Addresses where a VEX/EVEX vector instruction that needs carrying out may start.

        Unicorn runs VEX.128 instructions itself, wrongly (no third operand, no zeroing
        of bits 255:128, `vzeroupper` as a no-op); pass these to `install` to carry them out
        here.  VEX.256/EVEX ones are included too: a code hook is cheaper than the fault.
        VEX.128 stores are left out (see _is_xmm_store).

        In 64-bit mode every such instruction starts with C4, C5 or 62, after at most a
        few segment/address-size prefixes.  Each such byte is decoded as if an instruction
        started there; where that gives a vector instruction, it and the run of prefixes
        just before it are sites.  Some sites are bytes inside another instruction: a code
        hook fires only where an instruction starts, so those never run, and every real
        vector instruction is found without sweeping the code (a linear disassembly costs
        ten times more).  The verdict depends only on the instruction's form (its prefix,
        opcode and ModRM bytes), so capstone decodes each form once per process.
        """
        decode, sites, forms, length = None, [], _FORMS, len(code)
        for lead in _vex_leads(code):
            byte = code[lead]
            if byte == 0xC4 and (lead + 1 >= length or code[lead + 1] not in _VEX3_MAPS):
                continue
            form = code[lead:lead + _FORM_LENGTH[byte]]
            verdict = forms.get(form)
            if verdict is None:
                if decode is None:
                    decode = self._decoder(code, address)
                insn = decode(lead)
                verdict = (insn is not None and _is_vector_vex(code[lead:lead + insn[0]], insn[1])
                           and not _is_xmm_store(insn[1], insn[2]))
                if (insn is not None or lead + 15 <= length) and len(form) == _FORM_LENGTH[byte] and len(forms) < _FORMS_MAX:
                    forms[form] = verdict        # not a decode cut short by the end of the code
            if verdict:
                first = lead
                while first > 0 and lead - first < 4 and code[first - 1] in _ADDRESS_PREFIXES:
                    first -= 1
                sites.extend(range(address + first, address + lead + 1))
        return sorted(set(sites))

    def _decoder(self, code: bytes, address: int) -> Callable[[int], tuple[int, str, str] | None]:
        """decode(offset) -> (size, mnemonic, op_str) of one instruction in `code`, or None.

        A scan decodes a few dozen single instructions; capstone's disasm_lite copies the
        window and builds a generator for each.  Where its C entry point is reachable this
        calls cs_disasm on the code in place (a quarter cheaper), else disasm_lite.
        """
        lite = self._lite
        if _CS_DISASM is None:
            def decode_lite(offset: int):
                insn = next(lite.disasm_lite(code[offset:offset + 15], address + offset, 1), None)
                return insn[1:] if insn is not None else None
            return decode_lite
        buffer = bytearray(code)
        base, found = ctypes.c_char.from_buffer(buffer), ctypes.POINTER(_CS_INSN)()
        handle, found_ref, length = lite.csh, ctypes.byref(found), len(code)

        def decode(offset: int):
            count = _CS_DISASM(handle, ctypes.byref(base, offset), min(15, length - offset), address + offset, 1, found_ref)
            if count <= 0:
                return None
            insn = found[0]
            result = (insn.size, insn.mnemonic.decode("ascii"), insn.op_str.decode("ascii"))
            _CS_FREE(found, count)
            return result
        return decode

    def decode(self, uc: Uc, address: int) -> Decoded:
        cached = self._cache.get(address)
        if cached is not None:
            raw, d = cached
            if not self.verify_cache or _mem_read(uc, address, len(raw)) == raw:
                return d
        raw = self._fetch(uc, address)
        insn = next(self._cs.disasm(raw, address, 1), None)
        if insn is None:
            raise UnsupportedInstruction(address, 0, "(bad)", raw.hex())
        d = _decode(insn)
        self._cache[address] = (bytes(insn.bytes), d)
        return d

    def execute(self, uc: Uc, address: int) -> int:
        """Carry out the instruction at `address`; return its size."""
        d = self.decode(uc, address)
        d.handler(uc, d)
        return d.size

    @staticmethod
    def _fetch(uc: Uc, address: int) -> bytes:
        for n in (15, 8, 4, 2, 1):                    # the instruction may end a mapping
            try:
                return _mem_read(uc, address, n)
            except UcError:
                continue
        raise UnsupportedInstruction(address, 0, "(unmapped)", "")

    def _on_invalid(self, uc: Uc, user_data: object) -> bool:
        rip = reg_read64(uc, _RIP)
        try:
            size = self.execute(uc, rip)
        except UnsupportedInstruction as err:
            self.last_error = err
            return False
        reg_write64(uc, _RIP, rip + size)
        return True

    def _on_site(self, uc: Uc, address: int, size: int, user_data: object) -> None:
        try:
            d = self.decode(uc, address)      # execute(), without its frame: this runs per executed site
            d.handler(uc, d)
        except UnsupportedInstruction as err:
            self.last_error = err
            uc.emu_stop()
            return
        # RIP gets a uc_reg_write of its own: in Unicorn 2.1.4 a uc_reg_write_batch that
        # includes RIP, made inside a code hook, does not redirect execution (the site runs again).
        reg_write64(uc, _RIP, address + d.size)
