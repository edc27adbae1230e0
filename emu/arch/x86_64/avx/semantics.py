"""What each data-movement and bitwise VEX/EVEX instruction does, written in Python.

Every handler takes the vector file and the decoded instruction and writes vector
destinations with VEX/EVEX semantics (zero-extended to the full register).  Arithmetic
forms are carried out by `sse_twin` instead: the SSE instruction Unicorn runs correctly.
"""
from __future__ import annotations

from typing import Callable

from .errors import MisalignedAccess
from .operands import Instruction, Memory, VectorRegister
from .vector_file import VectorFile

Handler = Callable[[VectorFile, Instruction], None]
M128 = (1 << 128) - 1


def move(vf: VectorFile, insn: Instruction) -> None:
    """Register/memory moves of one width."""
    dst, src = insn.ops
    dst.write(vf, insn, src.read(vf, insn))


def move_low(bits: int) -> Handler:
    """vmovd/vmovq: move the low 32/64 bits, zero-extending into a vector register."""
    mask = (1 << bits) - 1

    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, src = insn.ops
        dst.write(vf, insn, src.read(vf, insn) & mask)
    return handler


def aligned_address(vf: VectorFile, insn: Instruction, op: Memory) -> int:
    ea = op.address(vf.uc)
    if ea % op.nbytes:
        raise MisalignedAccess(insn.address, insn.size, insn.mnemonic, insn.op_str, ea, op.nbytes)
    return ea


def move_aligned(vf: VectorFile, insn: Instruction) -> None:
    """vmovaps & co: as move, but a memory operand must be aligned to its width (#GP)."""
    dst, src = insn.ops
    if isinstance(src, Memory):
        value = int.from_bytes(src.load(vf, insn, aligned_address(vf, insn, src)), "little")
    else:
        value = src.read(vf, insn)
    if isinstance(dst, Memory):
        dst.store(vf, insn, value.to_bytes(dst.nbytes, "little"), aligned_address(vf, insn, dst))
    else:
        dst.write(vf, insn, value)


def move_scalar(vf: VectorFile, insn: Instruction) -> None:
    """vmovss/vmovsd: a load zero-extends, a store writes the element, reg-reg merges."""
    if len(insn.ops) == 2:
        move(vf, insn)
        return
    dst, src1, src2 = insn.ops
    mask = (1 << (32 if insn.mnemonic == "vmovss" else 64)) - 1
    dst.write(vf, insn, (src1.read(vf, insn) & M128 & ~mask) | (src2.read(vf, insn) & mask))


def logic(fn: Callable[[int, int], int]) -> Handler:
    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, a, b = insn.ops
        dst.write(vf, insn, fn(a.read(vf, insn), b.read(vf, insn)))
    return handler


def compare_equal(esize: int) -> Handler:
    emask = (1 << (8 * esize)) - 1

    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, a, b = insn.ops
        if not isinstance(dst, VectorRegister):
            raise insn.fail("compare into a mask register")
        x, y, out = a.read(vf, insn), b.read(vf, insn), 0
        for shift in range(0, 8 * dst.nbytes, 8 * esize):
            if (x >> shift) & emask == (y >> shift) & emask:
                out |= emask << shift
        dst.write(vf, insn, out)
    return handler


def ternary_logic(vf: VectorFile, insn: Instruction) -> None:
    """vpternlogd/q: bit i of the result = imm[(a_i << 2) | (b_i << 1) | c_i]."""
    dst, b, c, imm = insn.ops
    full = (1 << (8 * dst.nbytes)) - 1
    a, b, c, table = dst.read(vf, insn), b.read(vf, insn), c.read(vf, insn), imm.value
    out = 0
    for k in range(8):
        if table >> k & 1:
            out |= (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c)
    dst.write(vf, insn, out & full)


def broadcast(esize: int) -> Handler:
    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, src = insn.ops
        elem = (src.read(vf, insn) & ((1 << (8 * esize)) - 1)).to_bytes(esize, "little")
        dst.write(vf, insn, int.from_bytes(elem * (dst.nbytes // esize), "little"))
    return handler


def insert(vf: VectorFile, insn: Instruction) -> None:
    """vinsertf128 & co: replace lane imm of src1 by src2 (lane width = src2 width)."""
    dst, src1, src2, imm = insn.ops
    lane = 8 * src2.nbytes
    shift = lane * (imm.value % (dst.nbytes * 8 // lane))
    value = src1.read(vf, insn) & ~(((1 << lane) - 1) << shift)
    dst.write(vf, insn, value | (src2.read(vf, insn) << shift))


def extract(vf: VectorFile, insn: Instruction) -> None:
    """vextractf128 & co: lane imm of src (lane width = destination width)."""
    dst, src, imm = insn.ops
    lane = 8 * dst.nbytes
    shift = lane * (imm.value % (src.nbytes * 8 // lane))
    dst.write(vf, insn, (src.read(vf, insn) >> shift) & ((1 << lane) - 1))


def permute_halves(vf: VectorFile, insn: Instruction) -> None:
    """vperm2f128/vperm2i128: each half picks a half of src1:src2, or zero (bit 3)."""
    dst, src1, src2, imm = insn.ops
    pool = src1.read(vf, insn) | (src2.read(vf, insn) << 256)
    out = 0
    for half in range(2):
        control = imm.value >> (4 * half)
        if not control & 8:
            out |= ((pool >> (128 * (control & 3))) & M128) << (128 * half)
    dst.write(vf, insn, out)


def variable_shift(direction: str, esize: int) -> Handler:
    """vpsllv/vpsrlv/vpsrav (AVX2): each element shifted by the count in the same element of src2.

    A count of the element width or more gives 0, or the sign bit everywhere for vpsrav.
    """
    bits = 8 * esize
    mask, sign = (1 << bits) - 1, 1 << (bits - 1)

    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, src1, src2 = insn.ops
        values, counts, out = src1.read(vf, insn), src2.read(vf, insn), 0
        for shift in range(0, 8 * dst.nbytes, bits):
            value, count = (values >> shift) & mask, (counts >> shift) & mask
            if direction == "left":
                result = (value << count) & mask if count < bits else 0
            elif direction == "right":
                result = value >> count if count < bits else 0
            else:
                signed = value - (1 << bits) if value & sign else value
                result = (signed >> min(count, bits - 1)) & mask
            out |= result << shift
        dst.write(vf, insn, out)
    return handler


def zero_upper(vf: VectorFile, insn: Instruction) -> None:
    vf.clear(16)


def zero_all(vf: VectorFile, insn: Instruction) -> None:
    vf.clear(0)


MOVES = ("vmovups", "vmovupd", "vmovdqu", "vmovdqu8", "vmovdqu16", "vmovdqu32", "vmovdqu64", "vlddqu")
ALIGNED_MOVES = ("vmovaps", "vmovapd", "vmovdqa", "vmovdqa32", "vmovdqa64",
                 "vmovntps", "vmovntpd", "vmovntdq", "vmovntdqa")
BROADCASTS = {"vpbroadcastb": 1, "vpbroadcastw": 2, "vpbroadcastd": 4, "vpbroadcastq": 8,
              "vbroadcastss": 4, "vbroadcastsd": 8, "vbroadcastf32x2": 8, "vbroadcasti32x2": 8,
              "vbroadcastf128": 16, "vbroadcasti128": 16, "vbroadcastf32x4": 16, "vbroadcasti32x4": 16,
              "vbroadcastf64x2": 16, "vbroadcasti64x2": 16, "vbroadcastf32x8": 32, "vbroadcasti32x8": 32,
              "vbroadcastf64x4": 32, "vbroadcasti64x4": 32}
INSERTS = ("vinsertf128", "vinserti128", "vinsertf32x4", "vinserti32x4", "vinsertf64x2", "vinserti64x2",
           "vinsertf32x8", "vinserti32x8", "vinsertf64x4", "vinserti64x4")
EXTRACTS = tuple(m.replace("insert", "extract") for m in INSERTS)
_XOR = logic(lambda a, b: a ^ b)
_AND = logic(lambda a, b: a & b)
_OR = logic(lambda a, b: a | b)
_ANDN = logic(lambda a, b: ~a & b)

HANDLERS: dict[str, Handler] = {
    **{m: move for m in MOVES},
    **{m: move_aligned for m in ALIGNED_MOVES},
    "vmovd": move_low(32), "vmovq": move_low(64),
    "vmovss": move_scalar, "vmovsd": move_scalar,
    **{m: _XOR for m in ("vxorps", "vxorpd", "vpxor", "vpxord", "vpxorq")},
    **{m: _AND for m in ("vandps", "vandpd", "vpand", "vpandd", "vpandq")},
    **{m: _OR for m in ("vorps", "vorpd", "vpor", "vpord", "vporq")},
    **{m: _ANDN for m in ("vandnps", "vandnpd", "vpandn", "vpandnd", "vpandnq")},
    "vpcmpeqb": compare_equal(1), "vpcmpeqw": compare_equal(2), "vpcmpeqd": compare_equal(4),
    "vpcmpeqq": compare_equal(8),
    "vpternlogd": ternary_logic, "vpternlogq": ternary_logic,
    **{m: broadcast(n) for m, n in BROADCASTS.items()},
    **{m: insert for m in INSERTS},
    **{m: extract for m in EXTRACTS},
    "vperm2f128": permute_halves, "vperm2i128": permute_halves,
    "vpsllvd": variable_shift("left", 4), "vpsllvq": variable_shift("left", 8),
    "vpsrlvd": variable_shift("right", 4), "vpsrlvq": variable_shift("right", 8),
    "vpsravd": variable_shift("arithmetic", 4),
    "vzeroupper": zero_upper, "vzeroall": zero_all,
}
"""Mnemonic -> handler, for the forms carried out in Python."""
