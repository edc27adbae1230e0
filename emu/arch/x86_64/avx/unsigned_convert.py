"""AVX-512's conversions between unsigned integers and floats (vcvtusi2ss/sd, vcvttss2usi, vcvttsd2usi).

LLVM emits them for an AVX-512 CPU wherever host code converts an unsigned 32/64-bit integer
(AVX2 code needs a sequence of signed conversions instead).  Exact, on ieee's rounding:
an integer converts rounded by MXCSR.RC, raising inexact; a float truncates toward zero, and a
NaN, an infinity or a value outside 0..2^w-1 after truncation gives 2^w-1 with invalid.
Embedded rounding ({rz-sae}) stays refused (avx512.py).  Checked on an AVX-512 CPU under each
rounding mode and DAZ: tests/data/avx512/make_cases.py.
"""
from __future__ import annotations

from .ieee import F32, F64, IE, INF, PE, QNAN, SNAN, ZERO, Format, controls, decode, raise_flags, round_value
from .operands import Instruction
from .vector_file import VectorFile

_M128 = (1 << 128) - 1


def to_float(fmt: Format):
    """vcvtusi2ss/sd dst, src1, r/m32|64: src1 with its low element replaced by the integer, rounded."""
    low = (1 << fmt.bits) - 1

    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, src1, src = insn.ops
        mxcsr, mode, _, _ = controls(vf)
        n = src.read(vf, insn)
        bits, flags = round_value(fmt, 0, n, 0, mode, False) if n else (0, 0)
        raise_flags(vf, insn, mxcsr, flags)
        dst.write(vf, insn, (src1.read(vf, insn) & _M128 & ~low) | bits)
    return handler


def truncate_to_unsigned(fmt: Format):
    """vcvttss2usi/vcvttsd2usi r32|64, xmm/m: the float truncated toward zero, or 2^w-1 (invalid)."""
    element = (1 << fmt.bits) - 1

    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, src = insn.ops
        mxcsr, _, daz, _ = controls(vf)
        width = 8 * dst.nbytes
        kind, sign, significand, exponent, _ = decode(src.read(vf, insn) & element, fmt, daz)
        if kind in (INF, QNAN, SNAN):
            value, flags = (1 << width) - 1, IE
        elif kind == ZERO:
            value, flags = 0, 0
        else:
            if exponent >= 0:
                whole, inexact = significand << exponent, False
            else:
                whole, inexact = significand >> -exponent, bool(significand & ((1 << -exponent) - 1))
            if (sign and whole) or whole >> width:
                value, flags = (1 << width) - 1, IE
            else:
                value, flags = whole, (PE if inexact else 0)
        raise_flags(vf, insn, mxcsr, flags)
        dst.write(vf, insn, value)
    return handler


CONVERSIONS = {"vcvtusi2ss": to_float(F32), "vcvtusi2sd": to_float(F64),
               "vcvttss2usi": truncate_to_unsigned(F32), "vcvttsd2usi": truncate_to_unsigned(F64)}
