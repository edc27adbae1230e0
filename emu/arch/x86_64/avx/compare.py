"""vcmpss/sd/ps/pd with the predicates SSE lacks (8-31), in Python.

A predicate is imm8[4:0].  Its low four bits say which of the four relations
(less, equal, greater, unordered) make an element all ones; bit 4 swaps the predicate's
signalling kind: a signalling compare raises the invalid flag for any NaN, a quiet one
only for a signalling NaN.  DAZ reads subnormal inputs as zero; a subnormal input sets
the denormal flag otherwise.  Predicates 0-7 of the VEX.128/256 forms run on the SSE
twin (sse_twin.py, wide.py).
"""
from __future__ import annotations

from .ieee import DE, F32, F64, FINITE, IE, INF, QNAN, SNAN, controls, decode, join, lanes, raise_flags
from .operands import Instruction, vex_three_operands
from .vector_file import VectorFile

LT, EQ, GT, UNORDERED = 1, 2, 4, 8
# predicate 0-15 -> the relations for which it is true
TRUE_FOR = [EQ, LT, LT | EQ, UNORDERED, LT | GT | UNORDERED, EQ | GT | UNORDERED, GT | UNORDERED, LT | EQ | GT,
            EQ | UNORDERED, LT | UNORDERED, LT | EQ | UNORDERED, 0, LT | GT, EQ | GT, GT, LT | EQ | GT | UNORDERED]
SIGNALLING = frozenset(p for p in range(32) if (p & 15 in (1, 2, 5, 6, 9, 10, 13, 14)) != bool(p & 16))
# capstone's names for predicates 8-31 (0-7 are SSE's: eq lt le unord neq nlt nle ord)
NAMES = ["eq_uq", "nge", "ngt", "false", "neq_oq", "ge", "gt", "true", "eq_os", "lt_oq", "le_oq", "unord_s",
         "neq_us", "nlt_uq", "nle_uq", "ord_s", "eq_us", "nge_uq", "ngt_uq", "false_os", "neq_os", "ge_oq",
         "gt_oq", "true_us"]


def relation(fmt, a: int, b: int, daz: bool) -> tuple[int, int]:
    """(relation of a to b, flags raised) for two elements; the invalid flag is left to the caller."""
    ka, sa, ma, ea, da = decode(a, fmt, daz)
    kb, sb, mb, eb, db = decode(b, fmt, daz)
    if ka in (QNAN, SNAN) or kb in (QNAN, SNAN):
        return UNORDERED, 0
    flags = DE if da or db else 0
    return _order(_key(ka, sa, ma, ea), _key(kb, sb, mb, eb)), flags


def _key(kind: int, sign: int, m: int, e: int) -> tuple[int, int, int]:
    """A sort key: (class, exponent, significand), negated for negative values; zeros of both signs equal."""
    if kind == INF:
        return (-2, 0, 0) if sign else (2, 0, 0)
    if kind != FINITE:
        return (0, 0, 0)
    shift = m.bit_length()
    key = (1, e + shift, m << (64 - shift))          # same exponent of the leading bit, then significand
    return (-key[0], -key[1], -key[2]) if sign else key


def _order(x: tuple, y: tuple) -> int:
    return LT if x < y else GT if x > y else EQ


def build(insn: Instruction):
    dst, src1, src2 = vex_three_operands(insn)
    kind = insn.mnemonic[-2:]
    predicate = insn.raw[-1] & 31
    true_for, signalling = TRUE_FOR[predicate & 15], predicate in SIGNALLING
    fmt = F32 if kind[1] == "s" else F64
    size = fmt.bits
    count = 1 if kind[0] == "s" else dst.nbytes * 8 // size
    ones = (1 << size) - 1
    keep = ((1 << 128) - 1) ^ ones if count == 1 else 0

    def handler(vf: VectorFile, insn: Instruction) -> None:
        mxcsr, _, daz, _ = controls(vf)
        first, second = src1.read(vf, insn), src2.read(vf, insn)
        out, flags = [], 0
        for a, b in zip(lanes(first, size, count), lanes(second, size, count)):
            found, raised = relation(fmt, a, b, daz)
            if found == UNORDERED and (signalling or _is_snan(a, fmt) or _is_snan(b, fmt)):
                raised |= IE
            out.append(ones if found & true_for else 0)
            flags |= raised
        raise_flags(vf, insn, mxcsr, flags)
        dst.write(vf, insn, join(out, size) | (first & keep))
    return handler


def _is_snan(bits: int, fmt) -> bool:
    return decode(bits, fmt, False)[0] == SNAN


BUILDERS = {f"vcmp{name}{kind}": build for name in NAMES + [""] for kind in ("ss", "sd", "ps", "pd")}
