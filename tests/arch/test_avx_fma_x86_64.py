"""FMA3's exact rounding against an independent reference: CPython's correctly rounded int/int division.

The CPU cases (test_avx_x86_64.py) decide the x86 rules (NaNs, flags, DAZ/FTZ, modes);
this checks the arithmetic on many more binary64 values: float(Fraction) rounds the
exact a*b+c to nearest-even once, subnormals included.
"""
import struct
from fractions import Fraction

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from emu.arch.x86_64.avx.fma import fused
from emu.arch.x86_64.avx.ieee import F64, RNE

FINITE = st.floats(allow_nan=False, allow_infinity=False)


def bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


@settings(max_examples=800, deadline=None)
@given(a=FINITE, b=FINITE, c=FINITE, negate=st.sampled_from([(0, 0), (0, 1), (1, 0), (1, 1)]))
def test_fused_rounds_the_exact_value_once(a, b, c, negate):
    exact = (-1) ** negate[0] * Fraction(a) * Fraction(b) + (-1) ** negate[1] * Fraction(c)
    assume(exact != 0)                                     # the sign of an exact zero: the CPU cases
    try:
        want = bits(float(exact))
    except OverflowError:
        want = bits(float("inf") if exact > 0 else float("-inf"))
    got, _ = fused(F64, bits(a), bits(b), bits(c), *negate, RNE, False, False)
    assert got == want


@settings(max_examples=200, deadline=None)
@given(a=FINITE, b=FINITE)
def test_fused_with_the_rounded_product_gives_its_error(a, b):
    """a*b - round(a*b) is exactly representable (when nothing over/underflows): FMA must give it exactly."""
    product = a * b
    assume(product != 0 and abs(product) < 1e300 and abs(product) > 1e-290)
    got, _ = fused(F64, bits(a), bits(b), bits(product), 0, 1, RNE, False, False)
    assert Fraction(struct.unpack("<d", struct.pack("<Q", got))[0]) == Fraction(a) * Fraction(b) - Fraction(product)
