"""FMA3 (vfmadd/vfmsub/vfnmadd/vfnmsub 132/213/231 ss/sd/ps/pd): exact a*b+c, rounded once.

Unicorn has no FMA, and no SSE instruction computes it, so each lane is done here with
integers (ieee.py): the product and sum are exact, then rounded once in MXCSR's mode
with DAZ/FTZ, and the exception flags go to MXCSR.  What the CPU does with NaNs was
measured (tests/data/avx/fp_cases.py): the result is the first NaN operand, quieted and
never negated, in the order the form's digits name them (132: operand 1, 3, 2; 213: 2,
1, 3; 231: 2, 3, 1, i.e. first factor, second factor, addend); 0*inf plus a quiet NaN
gives that NaN without the invalid flag; 0*inf or inf-inf otherwise give the default NaN.
"""
from __future__ import annotations

from .ieee import (DE, F32, F64, FINITE, IE, INF, QNAN, RD, SNAN, ZERO, Format, controls, decode, infinity, join, lanes,
                   quieted, raise_flags, round_value)
from .operands import Instruction, vex_three_operands
from .vector_file import VectorFile

# the operands (1-based, as written) that are first factor, second factor and addend
ROLES = {"132": (0, 2, 1), "213": (1, 0, 2), "231": (1, 2, 0)}
SIGNS = {"fmadd": (0, 0), "fmsub": (0, 1), "fnmadd": (1, 0), "fnmsub": (1, 1)}   # (negate product, negate addend)


def fused(fmt: Format, a: int, b: int, c: int, negate_product: int, negate_addend: int,
          mode: int, daz: bool, ftz: bool) -> tuple[int, int]:
    """(bits, flags) of ±(a*b) ± c, each operand given as bits of `fmt`."""
    ka, sa, ma, ea, da = decode(a, fmt, daz)
    kb, sb, mb, eb, db = decode(b, fmt, daz)
    kc, sc, mc, ec, dc = decode(c, fmt, daz)
    if QNAN in (ka, kb, kc) or SNAN in (ka, kb, kc):
        flags = IE if SNAN in (ka, kb, kc) else 0
        first = next(x for x, k in ((a, ka), (b, kb), (c, kc)) if k in (QNAN, SNAN))
        return quieted(first, fmt), flags
    flags = DE if (da or db or dc) else 0
    sp, sc = sa ^ sb ^ negate_product, sc ^ negate_addend
    if INF in (ka, kb):
        if ZERO in (ka, kb) or (kc == INF and sc != sp):
            return fmt.default_nan, flags | IE
        return infinity(fmt, sp), flags
    if kc == INF:
        return infinity(fmt, sc), flags
    product = ma * mb if ka == FINITE and kb == FINITE else 0
    addend = mc if kc == FINITE else 0
    ep = ea + eb
    if not product and not addend:
        sign = sp if sp == sc else int(mode == RD)
        return sign << (fmt.bits - 1), flags
    if not product:
        total, exponent = (-addend if sc else addend), ec
    elif not addend:
        total, exponent = (-product if sp else product), ep
    else:
        exponent = min(ep, ec)
        total = ((-product if sp else product) << (ep - exponent)) + ((-addend if sc else addend) << (ec - exponent))
    if total == 0:                                            # exact cancellation
        return int(mode == RD) << (fmt.bits - 1), flags
    bits, more = round_value(fmt, int(total < 0), abs(total), exponent, mode, ftz)
    return bits, flags | more


def build(insn: Instruction):
    """The handler for one decoded FMA3 instruction (VEX only)."""
    name = insn.mnemonic[1:]
    kind, order, signs = name[-2:], name[-5:-2], name[:-5]
    dst, src2, src3 = vex_three_operands(insn)
    fmt = F32 if kind[1] == "s" else F64
    size = fmt.bits
    count = 1 if kind[0] == "s" else dst.nbytes * 8 // size
    first, second, addend = ROLES[order]
    negate_product, negate_addend = SIGNS[signs]
    ops = (dst, src2, src3)
    scalar_keep = ((1 << 128) - 1) ^ ((1 << size) - 1) if count == 1 else 0

    def handler(vf: VectorFile, insn: Instruction) -> None:
        mxcsr, mode, daz, ftz = controls(vf)
        values = [op.read(vf, insn) for op in ops]
        xs, ys, zs = (lanes(values[i], size, count) for i in (first, second, addend))
        out, flags = [], 0
        for x, y, z in zip(xs, ys, zs):
            bits, raised = fused(fmt, x, y, z, negate_product, negate_addend, mode, daz, ftz)
            out.append(bits)
            flags |= raised
        raise_flags(vf, insn, mxcsr, flags)
        result = join(out, size)
        dst.write(vf, insn, result | (values[0] & scalar_keep) if count == 1 else result)
    return handler


NAMES = [f"v{signs}{order}{kind}" for signs in SIGNS for order in ROLES for kind in ("ss", "sd", "ps", "pd")]
BUILDERS = {name: build for name in NAMES}
