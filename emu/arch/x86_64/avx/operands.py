"""Decoded operands as small typed objects, and the decoded instruction that holds them.

capstone's operands are turned into these once per instruction form and address;
carrying the instruction out then only reads and writes through them.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from capstone import x86_const as CX
from unicorn import Uc, UcError
from unicorn import x86_const as UX

from ....emulator.unicorn_c import RegisterBatch, mem_read, mem_write, reg_read64, reg_write64
from .errors import MemoryFault, UnsupportedInstruction
from .vector_file import VectorFile

M64 = (1 << 64) - 1


class VectorRegister:
    """xmm/ymm/zmm n: read as its low `nbytes`, written zero-extended to the full zmm (VEX/EVEX)."""

    __slots__ = ("zmm", "index", "nbytes")

    def __init__(self, index: int, nbytes: int) -> None:
        self.zmm, self.index, self.nbytes = getattr(UX, f"UC_X86_REG_ZMM{index}"), index, nbytes

    def read(self, vf: VectorFile, insn: "Instruction") -> int:
        return vf.read(self.zmm, self.nbytes)

    def write(self, vf: VectorFile, insn: "Instruction", value: int) -> None:
        vf.write(self.zmm, value & ((1 << (8 * self.nbytes)) - 1))


class GeneralRegister:
    """A 32- or 64-bit general register; a write zero-extends to 64 bits."""

    __slots__ = ("read_id", "write_id", "nbytes")

    def __init__(self, read_id: int, write_id: int, nbytes: int) -> None:
        self.read_id, self.write_id, self.nbytes = read_id, write_id, nbytes

    def read(self, vf: VectorFile, insn: "Instruction") -> int:
        return reg_read64(vf.uc, self.write_id) & ((1 << (8 * self.nbytes)) - 1)

    def write(self, vf: VectorFile, insn: "Instruction", value: int) -> None:
        reg_write64(vf.uc, self.write_id, value & ((1 << (8 * self.nbytes)) - 1))


class Memory:
    """[base + index * scale + disp] of `nbytes` (base and index are Unicorn register ids, or 0)."""

    __slots__ = ("base", "index", "scale", "disp", "nbytes", "address")

    def __init__(self, base: int, index: int, scale: int, disp: int, nbytes: int) -> None:
        self.base, self.index, self.scale, self.disp, self.nbytes = base, index, scale, disp, nbytes
        self.address: Callable[[Uc], int] = _address_function(base, index, scale, disp)

    def load(self, vf: VectorFile, insn: "Instruction", ea: int | None = None) -> bytes:
        ea = self.address(vf.uc) if ea is None else ea
        if vf.observer is not None:
            vf.observer(ea, self.nbytes)
        try:
            return mem_read(vf.uc, ea, self.nbytes)
        except UcError as err:
            raise MemoryFault(insn.address, insn.size, insn.mnemonic, insn.op_str, ea, self.nbytes, err) from None

    def store(self, vf: VectorFile, insn: "Instruction", data: bytes, ea: int | None = None) -> None:
        ea = self.address(vf.uc) if ea is None else ea
        try:
            mem_write(vf.uc, ea, data)
        except UcError as err:
            raise MemoryFault(insn.address, insn.size, insn.mnemonic, insn.op_str, ea, self.nbytes, err) from None

    def read(self, vf: VectorFile, insn: "Instruction") -> int:
        return int.from_bytes(self.load(vf, insn), "little")

    def write(self, vf: VectorFile, insn: "Instruction", value: int) -> None:
        self.store(vf, insn, (value & ((1 << (8 * self.nbytes)) - 1)).to_bytes(self.nbytes, "little"))


def _address_function(base: int, index: int, scale: int, disp: int) -> Callable[[Uc], int]:
    """address(uc) for one addressing form, with the register reads it needs and no others."""
    if base and index:
        both = RegisterBatch((base, index))            # one read for both registers

        def base_index(uc: Uc) -> int:
            base_value, index_value = both.read(uc)
            return (disp + base_value + index_value * scale) & M64
        return base_index
    if base:
        return lambda uc: (disp + reg_read64(uc, base)) & M64
    if index:
        return lambda uc: (disp + reg_read64(uc, index) * scale) & M64
    return lambda uc: disp & M64


class Immediate:
    __slots__ = ("value", "nbytes")

    def __init__(self, value: int) -> None:
        self.value, self.nbytes = value, 1

    def read(self, vf: VectorFile, insn: "Instruction") -> int:
        return self.value

    def write(self, vf: VectorFile, insn: "Instruction", value: int) -> None:
        raise insn.fail("immediate destination")


Operand = VectorRegister | GeneralRegister | Memory | Immediate


class Instruction(NamedTuple):
    """One decoded instruction and the handler that carries it out."""

    address: int
    size: int
    mnemonic: str
    op_str: str
    ops: tuple
    handler: Callable[[VectorFile, "Instruction"], None]
    raw: bytes = b""

    def fail(self, why: str = "") -> UnsupportedInstruction:
        return UnsupportedInstruction(self.address, self.size, self.mnemonic, self.op_str, why)


def is_evex(raw: bytes) -> bool:
    i = 0
    while raw[i] in (0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x67):
        i += 1
    return raw[i] == 0x62


def vex_three_operands(insn: Instruction) -> tuple:
    """(dst, src1, src2) of a VEX-only form carried out in Python: xmm/ymm, xmm/ymm, xmm/ymm or memory.

    Raises for an EVEX encoding (its AVX-512 semantics are not carried out) or other operands.
    """
    if is_evex(insn.raw):
        raise insn.fail("the EVEX (AVX-512) form is not carried out")
    dst, src1, src2 = insn.ops[:3]
    if not (isinstance(dst, VectorRegister) and isinstance(src1, VectorRegister)
            and isinstance(src2, (VectorRegister, Memory))):
        raise insn.fail("operand form not carried out")
    return dst, src1, src2


# ---------------------------------------------------------------- capstone operand -> operand
VECTORS: dict[int, tuple[int, int]] = {}     # capstone id -> (register number, nbytes)
for _i in range(32):
    for _kind, _n in (("XMM", 16), ("YMM", 32), ("ZMM", 64)):
        VECTORS[getattr(CX, f"X86_REG_{_kind}{_i}")] = (_i, _n)

_GPR64 = ["RAX", "RBX", "RCX", "RDX", "RSI", "RDI", "RBP", "RSP"] + [f"R{i}" for i in range(8, 16)]
_GPR32 = ["EAX", "EBX", "ECX", "EDX", "ESI", "EDI", "EBP", "ESP"] + [f"R{i}D" for i in range(8, 16)]
GENERAL: dict[int, tuple[int, int, int]] = {}   # capstone id -> (unicorn read id, unicorn 64-bit id, nbytes)
for _r64, _r32 in zip(_GPR64, _GPR32):
    _u64 = getattr(UX, f"UC_X86_REG_{_r64}")
    GENERAL[getattr(CX, f"X86_REG_{_r64}")] = (_u64, _u64, 8)
    GENERAL[getattr(CX, f"X86_REG_{_r32}")] = (getattr(UX, f"UC_X86_REG_{_r32}"), _u64, 4)


def operand(op, next_address: int) -> Operand | None:
    """The operand for one capstone operand, or None for kinds the unit does not handle."""
    if op.type == CX.X86_OP_REG:
        if op.reg in VECTORS:
            return VectorRegister(*VECTORS[op.reg])
        if op.reg in GENERAL:
            return GeneralRegister(*GENERAL[op.reg])
        return None                                   # mask, segment, x87... registers
    if op.type == CX.X86_OP_IMM:
        return Immediate(op.imm & 0xFF)
    mem = op.mem
    if mem.segment != CX.X86_REG_INVALID:
        return None
    base, disp = 0, mem.disp
    if mem.base == CX.X86_REG_RIP:
        disp += next_address
    elif mem.base != CX.X86_REG_INVALID:
        if mem.base not in GENERAL:
            return None
        base = GENERAL[mem.base][0]
    index = 0
    if mem.index != CX.X86_REG_INVALID:
        if mem.index not in GENERAL:                  # VSIB (gathers) is not supported
            return None
        index = GENERAL[mem.index][0]
    return Memory(base, index, mem.scale, disp, op.size)
