"""F16C: vcvtph2ps (binary16 -> binary32, exact) and vcvtps2ph (binary32 -> binary16, rounded), in Python.

vcvtps2ph rounds by imm8[1:0], or by MXCSR.RC when imm8[2] is set.  A NaN keeps its sign
and the top of its payload, quieted (a signalling one raises the invalid flag).  What
the CPU does with DAZ/FTZ and subnormals here was measured (tests/data/avx/fp_cases.py):
vcvtps2ph reads subnormal binary32 inputs as zero under DAZ and never flushes its
binary16 results; vcvtph2ps converts binary16 subnormals exactly whatever DAZ says.
"""
from __future__ import annotations

from .ieee import (DE, F16, F32, IE, INF, QNAN, SNAN, ZERO, controls, decode, infinity, join, lanes, raise_flags,
                   round_value)
from .operands import Immediate, Instruction, Memory, VectorRegister, is_evex
from .vector_file import VectorFile

HALF_DAZ = False           # vcvtph2ps: DAZ does not apply to binary16 inputs
HALF_DENORMAL_FLAG = False  # ... nor does a binary16 subnormal input raise the denormal flag
SINGLE_FTZ = False          # vcvtps2ph: FTZ does not flush binary16 results


def to_single(h: int) -> tuple[int, int]:
    """(binary32 bits, flags) of one binary16 value."""
    kind, sign, m, e, denormal = decode(h, F16, HALF_DAZ)
    if kind in (QNAN, SNAN):
        return sign << 31 | 0x7FC00000 | (h & 0x3FF) << 13, IE if kind == SNAN else 0
    if kind == INF:
        return infinity(F32, sign), 0
    if kind == ZERO:
        return sign << 31, 0
    bits, _ = round_value(F32, sign, m, e, 0, False)            # exact
    return bits, DE if denormal and HALF_DENORMAL_FLAG else 0


def to_half(s: int, mode: int, daz: bool) -> tuple[int, int]:
    """(binary16 bits, flags) of one binary32 value rounded by `mode`."""
    kind, sign, m, e, denormal = decode(s, F32, daz)
    if kind in (QNAN, SNAN):
        return sign << 15 | 0x7E00 | (s >> 13 & 0x3FF), IE if kind == SNAN else 0
    if kind == INF:
        return infinity(F16, sign), 0
    if kind == ZERO:
        return sign << 15, 0
    bits, flags = round_value(F16, sign, m, e, mode, SINGLE_FTZ)
    return bits, flags | (DE if denormal else 0)


def build_ph2ps(insn: Instruction):
    dst, src = _operands(insn)
    count = dst.nbytes // 4

    def handler(vf: VectorFile, insn: Instruction) -> None:
        mxcsr = controls(vf)[0]
        out, flags = [], 0
        for h in lanes(src.read(vf, insn), 16, count):
            bits, raised = to_single(h)
            out.append(bits)
            flags |= raised
        raise_flags(vf, insn, mxcsr, flags)
        dst.write(vf, insn, join(out, 32))
    return handler


def build_ps2ph(insn: Instruction):
    if len(insn.ops) != 3 or not isinstance(insn.ops[2], Immediate):
        raise insn.fail("operand form not carried out")
    dst, src = _operands(insn, insn.ops[:2])
    count, imm = src.nbytes // 4, insn.ops[2].value

    def handler(vf: VectorFile, insn: Instruction) -> None:
        mxcsr, mode, daz, _ = controls(vf)
        if not imm & 4:
            mode = imm & 3
        out, flags = [], 0
        for s in lanes(src.read(vf, insn), 32, count):
            bits, raised = to_half(s, mode, daz)
            out.append(bits)
            flags |= raised
        raise_flags(vf, insn, mxcsr, flags)
        dst.write(vf, insn, join(out, 16))
    return handler


def _operands(insn: Instruction, ops: tuple | None = None):
    if is_evex(insn.raw):
        raise insn.fail("the EVEX (AVX-512) form is not carried out")
    dst, src = insn.ops[:2] if ops is None else ops
    if not all(isinstance(op, (VectorRegister, Memory)) for op in (dst, src)):
        raise insn.fail("operand form not carried out")
    return dst, src


BUILDERS = {"vcvtph2ps": build_ph2ps, "vcvtps2ph": build_ps2ph}
