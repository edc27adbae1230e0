"""IEEE binary16/32/64 values from their bits, and one correctly rounded result as MXCSR asks.

The Python-carried arithmetic (FMA, F16C, compares) works on exact integers: a finite
value is sign, integer significand and power of two, so a*b+c is computed exactly
and rounded once.  MXCSR gives the rounding mode, DAZ (denormal inputs read as zero)
and FTZ (tiny results written as zero); the exception flags an instruction raises are
ORed into it as the CPU does, and an unmasked one stops the run (the CPU would trap
with #XM, which emu does not model).  Tininess is detected after rounding, as x86 does
(checked against the CPU: tests/data/avx/fp_cases.py).
"""
from __future__ import annotations

from typing import NamedTuple

from unicorn import x86_const as UX

from ....emulator.unicorn_c import reg_read64, reg_write64
from .operands import Instruction
from .vector_file import VectorFile

MXCSR = UX.UC_X86_REG_MXCSR
IE, DE, ZE, OE, UE, PE = 1, 2, 4, 8, 16, 32
DAZ, FTZ = 0x40, 0x8000
RNE, RD, RU, RZ = 0, 1, 2, 3
MXCSR_RESET = 0x1F80            # every exception masked, round to nearest: what a process starts with
FLAG_NAMES = {IE: "invalid", DE: "denormal", ZE: "divide-by-zero", OE: "overflow", UE: "underflow", PE: "inexact"}


class Format(NamedTuple):
    """A binary interchange format: `bits` wide, `precision` significand bits (hidden one included)."""

    bits: int
    precision: int
    emax: int

    @property
    def emin(self) -> int:
        return 1 - self.emax

    @property
    def quiet(self) -> int:
        return 1 << (self.precision - 2)

    @property
    def exponent_mask(self) -> int:
        return ((1 << (self.bits - self.precision)) - 1) << (self.precision - 1)

    @property
    def default_nan(self) -> int:
        """The x86 "real indefinite": negative, quiet, empty payload."""
        return 1 << (self.bits - 1) | self.exponent_mask | self.quiet


F16, F32, F64 = Format(16, 11, 15), Format(32, 24, 127), Format(64, 53, 1023)

# what a decoded operand is
ZERO, FINITE, INF, QNAN, SNAN = range(5)


def decode(bits: int, fmt: Format, daz: bool) -> tuple[int, int, int, int, bool]:
    """(kind, sign, significand, exponent, was_denormal): a finite value is significand * 2**exponent."""
    p = fmt.precision
    sign = bits >> (fmt.bits - 1) & 1
    biased = (bits & fmt.exponent_mask) >> (p - 1)
    fraction = bits & ((1 << (p - 1)) - 1)
    if biased == (fmt.exponent_mask >> (p - 1)):
        if fraction == 0:
            return INF, sign, 0, 0, False
        return (QNAN if fraction & fmt.quiet else SNAN), sign, 0, 0, False
    if biased == 0:
        if fraction == 0:
            return ZERO, sign, 0, 0, False
        if daz:
            return ZERO, sign, 0, 0, False
        return FINITE, sign, fraction, fmt.emin - (p - 1), True
    return FINITE, sign, fraction | 1 << (p - 1), biased - fmt.emax - (p - 1), False


def infinity(fmt: Format, sign: int) -> int:
    return sign << (fmt.bits - 1) | fmt.exponent_mask


def round_value(fmt: Format, sign: int, significand: int, exponent: int, mode: int, ftz: bool) -> tuple[int, int]:
    """(bits, flags) of (-1)**sign * significand * 2**exponent (significand > 0) rounded to `fmt`."""
    p, emin = fmt.precision, fmt.emin
    top = exponent + significand.bit_length() - 1            # exponent of the leading bit
    quantum = max(top, emin) - (p - 1)
    m, inexact = _round(significand, quantum - exponent, sign, mode)
    tiny = False
    if top < emin:
        # tiny after rounding: the value rounded to p bits with an unbounded exponent is below 2**emin
        unbounded, _ = _round(significand, top - (p - 1) - exponent, sign, mode)
        tiny = top + (unbounded >> p) < emin
    flags = PE if inexact else 0
    if tiny and ftz:
        return sign << (fmt.bits - 1), UE | PE
    if tiny and inexact:
        flags |= UE
    if m >> p:                                                # carried into the next binade
        m >>= 1
        quantum += 1
    if m >> (p - 1) == 0:                                     # subnormal (or rounded to zero)
        return sign << (fmt.bits - 1) | m, flags
    biased = quantum + (p - 1) + fmt.emax
    if biased >= 2 * fmt.emax + 1:                           # overflow
        to_infinity = mode == RNE or (mode == RU and not sign) or (mode == RD and sign)
        largest = sign << (fmt.bits - 1) | (fmt.exponent_mask - (1 << (p - 1))) | ((1 << (p - 1)) - 1)
        return (infinity(fmt, sign) if to_infinity else largest), OE | PE
    return sign << (fmt.bits - 1) | biased << (p - 1) | (m & ((1 << (p - 1)) - 1)), flags


def _round(significand: int, shift: int, sign: int, mode: int) -> tuple[int, bool]:
    """significand / 2**shift rounded to an integer by `mode`, and whether that was inexact."""
    if shift <= 0:
        return significand << -shift, False
    m = significand >> shift
    rest = significand & ((1 << shift) - 1)
    if not rest:
        return m, False
    half = 1 << (shift - 1)
    if mode == RNE:
        m += rest > half or (rest == half and m & 1)
    elif mode == RU:
        m += not sign
    elif mode == RD:
        m += sign
    return m, True


def flush_tiny(data: bytes, bits: int, count: int) -> bytes:
    """`data` with each of its first `count` elements of `bits` bits that is subnormal replaced by a signed zero."""
    fmt = F32 if bits == 32 else F64
    value, size = int.from_bytes(data, "little"), fmt.bits
    fraction = (1 << (fmt.precision - 1)) - 1
    for i in range(count):
        element = value >> (size * i)
        if not element & fmt.exponent_mask and element & fraction:
            value &= ~(fraction << (size * i))
    return value.to_bytes(len(data), "little")


def quieted(bits: int, fmt: Format) -> int:
    return bits | fmt.quiet


def controls(vf: VectorFile) -> tuple[int, int, bool, bool]:
    """(mxcsr, rounding mode, daz, ftz) of the guest now."""
    mxcsr = reg_read64(vf.uc, MXCSR)
    return mxcsr, mxcsr >> 13 & 3, bool(mxcsr & DAZ), bool(mxcsr & FTZ)


def raise_flags(vf: VectorFile, insn: Instruction, mxcsr: int, flags: int) -> None:
    """OR the instruction's exception flags into MXCSR; refuse an exception MXCSR unmasks (#XM on the CPU)."""
    unmasked = flags & ~(mxcsr >> 7) & 0x3F
    if unmasked:
        names = ", ".join(FLAG_NAMES[f] for f in FLAG_NAMES if unmasked & f)
        raise insn.fail(f"it raises a SIMD floating-point exception that MXCSR unmasks ({names}): "
                        f"the CPU would trap (#XM), which emu does not model")
    if flags & ~mxcsr:
        reg_write64(vf.uc, MXCSR, mxcsr | flags)


def lanes(value: int, size: int, count: int) -> list[int]:
    mask = (1 << size) - 1
    return [value >> (size * i) & mask for i in range(count)]


def join(values: list[int], size: int) -> int:
    out = 0
    for i, v in enumerate(values):
        out |= v << (size * i)
    return out
