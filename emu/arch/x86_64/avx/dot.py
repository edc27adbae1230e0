"""vdpps/vdppd: dot products, in Python, in the CPU's order of operations.

Unicorn's dpps adds the four products one after another; the CPU adds them in pairs
((p0 + p1) + (p2 + p3)), each product and sum rounded in MXCSR's mode, so the twin's
result can differ in the last bit (measured: tests/data/avx/fp_cases.py).  A product
whose imm8[7:4] bit is clear is +0.0; the sum goes to the elements whose imm8[3:0] bit
is set, the others get +0.0.  vdpps ymm does this in each 128-bit lane.
"""
from __future__ import annotations

from .ieee import (DE, F32, F64, FINITE, IE, INF, QNAN, RD, SNAN, ZERO, controls, decode, infinity, join, lanes,
                   quieted, raise_flags, round_value)
from .operands import Instruction, vex_three_operands
from .vector_file import VectorFile


def arithmetic(multiply: bool, fmt, a: int, b: int, mode: int, daz: bool, ftz: bool) -> tuple[int, int]:
    """(bits, flags) of a*b or a+b as one SSE instruction computes them (NaN: the first NaN operand, quieted)."""
    ka, sa, ma, ea, da = decode(a, fmt, daz)
    kb, sb, mb, eb, db = decode(b, fmt, daz)
    if ka in (QNAN, SNAN) or kb in (QNAN, SNAN):
        return quieted(a if ka in (QNAN, SNAN) else b, fmt), IE if SNAN in (ka, kb) else 0
    flags = DE if da or db else 0
    if multiply:
        sign = sa ^ sb
        if INF in (ka, kb):
            return (fmt.default_nan, flags | IE) if ZERO in (ka, kb) else (infinity(fmt, sign), flags)
        if ZERO in (ka, kb):
            return sign << (fmt.bits - 1), flags
        bits, raised = round_value(fmt, sign, ma * mb, ea + eb, mode, ftz)
        return bits, flags | raised
    if ka == INF or kb == INF:
        if ka == kb and sa != sb:
            return fmt.default_nan, flags | IE
        return infinity(fmt, sa if ka == INF else sb), flags
    x = (-ma if sa else ma) if ka == FINITE else 0
    y = (-mb if sb else mb) if kb == FINITE else 0
    if not x and not y:
        return (sa if sa == sb else int(mode == RD)) << (fmt.bits - 1), flags
    if not x:
        total, exponent = y, eb
    elif not y:
        total, exponent = x, ea
    else:
        exponent = min(ea, eb)
        total = (x << (ea - exponent)) + (y << (eb - exponent))
    if total == 0:
        return int(mode == RD) << (fmt.bits - 1), flags
    bits, raised = round_value(fmt, int(total < 0), abs(total), exponent, mode, ftz)
    return bits, flags | raised


def dot_lane(fmt, xs: list[int], ys: list[int], imm: int, mode: int, daz: bool, ftz: bool) -> tuple[list[int], int]:
    """One 128-bit lane of dpps (4 elements) or dppd (2)."""
    flags, products = 0, []
    for i, (x, y) in enumerate(zip(xs, ys)):
        if imm >> (4 + i) & 1:
            bits, raised = arithmetic(True, fmt, x, y, mode, daz, ftz)
            products.append(bits)
            flags |= raised
        else:
            products.append(0)
    while len(products) > 1:
        sums = []
        for x, y in zip(products[::2], products[1::2]):
            bits, raised = arithmetic(False, fmt, x, y, mode, daz, ftz)
            sums.append(bits)
            flags |= raised
        products = sums
    return [products[0] if imm >> i & 1 else 0 for i in range(len(xs))], flags


def build(insn: Instruction):
    dst, src1, src2 = vex_three_operands(insn)
    imm = insn.ops[3]
    fmt = F32 if insn.mnemonic == "vdpps" else F64
    size, per_lane = fmt.bits, 128 // fmt.bits
    count, control = dst.nbytes * 8 // size, imm.value

    def handler(vf: VectorFile, insn: Instruction) -> None:
        mxcsr, mode, daz, ftz = controls(vf)
        xs, ys = lanes(src1.read(vf, insn), size, count), lanes(src2.read(vf, insn), size, count)
        out, flags = [], 0
        for start in range(0, count, per_lane):
            lane, raised = dot_lane(fmt, xs[start:start + per_lane], ys[start:start + per_lane], control, mode, daz, ftz)
            out += lane
            flags |= raised
        raise_flags(vf, insn, mxcsr, flags)
        dst.write(vf, insn, join(out, size))
    return handler


BUILDERS = {"vdpps": build, "vdppd": build}
