"""Permutes and variable blends that have no SSE twin, in Python.

vpermilps/vpermilpd pick elements within each 128-bit lane (by immediate or by a control
vector); vpermd/vpermps/vpermq/vpermpd pick across the whole ymm; vblendvps/vblendvpd/
vpblendvb take each element from src2 where the top bit of the same element of the
fourth operand is set, else from src1.
"""
from __future__ import annotations

from .ieee import join, lanes
from .operands import Immediate, Instruction, Memory, VectorRegister, is_evex
from .vector_file import VectorFile


def _selector(insn: Instruction, size: int, pick):
    """A handler: dst element i = pick(i, source elements, control elements or None, immediate or None)."""
    dst = insn.ops[0]
    count = dst.nbytes * 8 // size

    def handler(vf: VectorFile, insn: Instruction) -> None:
        ops = insn.ops
        values = lanes(ops[1].read(vf, insn), size, count)
        last = ops[-1]
        if isinstance(last, Immediate):
            control, imm = None, last.value
        else:
            control, imm = lanes(last.read(vf, insn), size, count), None
        dst.write(vf, insn, join([pick(i, values, control, imm) for i in range(count)], size))
    return handler


def _permil_ps(i, values, control, imm):
    lane = i & ~3
    return values[lane + ((imm >> (2 * (i & 3))) if control is None else control[i]) % 4]


def _permil_pd(i, values, control, imm):
    lane = i & ~1
    return values[lane + ((imm >> i) & 1 if control is None else control[i] >> 1 & 1)]


def _perm_q(i, values, control, imm):
    return values[imm >> (2 * i) & 3]


def build_permil(insn: Instruction):
    _vex_vectors(insn)
    size = 32 if insn.mnemonic == "vpermilps" else 64
    return _selector(insn, size, _permil_ps if size == 32 else _permil_pd)


def build_permq(insn: Instruction):
    _vex_vectors(insn, wide=True)
    return _selector(insn, 64, _perm_q)


def build_permd(insn: Instruction):
    """vpermd/vpermps dst, indices, table: dst[i] = table[indices[i] % 8]."""
    _vex_vectors(insn, wide=True)
    dst, indices, table = insn.ops

    def handler(vf: VectorFile, insn: Instruction) -> None:
        picks, values = lanes(indices.read(vf, insn), 32, 8), lanes(table.read(vf, insn), 32, 8)
        dst.write(vf, insn, join([values[k & 7] for k in picks], 32))
    return handler


def build_blendv(insn: Instruction):
    _vex_vectors(insn)
    dst, src1, src2, mask = insn.ops
    size = {"vblendvps": 32, "vblendvpd": 64, "vpblendvb": 8}[insn.mnemonic]
    count = dst.nbytes * 8 // size
    element, top = (1 << size) - 1, 1 << (size - 1)

    def handler(vf: VectorFile, insn: Instruction) -> None:
        selector = mask.read(vf, insn)
        take = 0
        for i in range(count):
            if selector >> (size * i) & top:
                take |= element << (size * i)
        dst.write(vf, insn, (src1.read(vf, insn) & ~take) | (src2.read(vf, insn) & take))
    return handler


def _vex_vectors(insn: Instruction, wide: bool = False) -> None:
    """Refuse EVEX and operand forms these handlers do not expect."""
    if is_evex(insn.raw):
        raise insn.fail("the EVEX (AVX-512) form is not carried out")
    dst = insn.ops[0]
    if not isinstance(dst, VectorRegister) or dst.nbytes not in ((32,) if wide else (16, 32)) or not all(
            isinstance(op, (VectorRegister, Memory, Immediate)) for op in insn.ops):
        raise insn.fail("operand form not carried out")


BUILDERS = {"vpermilps": build_permil, "vpermilpd": build_permil, "vpermq": build_permq, "vpermpd": build_permq,
            "vpermd": build_permd, "vpermps": build_permd,
            "vblendvps": build_blendv, "vblendvpd": build_blendv, "vpblendvb": build_blendv}
