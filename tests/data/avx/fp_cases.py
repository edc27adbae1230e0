"""The floating-point cases of make_cases.py: snippets, MXCSR settings, and the values they start from.

Random register bytes rarely make the values that decide a float instruction (ties,
exact cancellation, results at the edge of the subnormal range, NaNs with payloads,
infinities, signed zeros), so these cases fill the registers and memory with crafted
values: per element of a vector, a scenario (independent values of every class; a
product just below/above 2**emin added to ±2**emin; an addend that cancels the rounded
product; equal operands for compares) shared by every register and memory slot.
ymm12 is the first source ("A"), ymm13 and the memory slots the second ("B"), the
other registers destinations that are also read ("D").  Each case runs under one MXCSR
(rounding mode, DAZ, FTZ) and records the CPU's MXCSR after it; `flags` says whether
the exception flags are to match too (not where an SSE twin runs: Unicorn's SSE sets no
flags).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

FP_SEED = 20261203
MODES = {"rne": 0x1F80, "rd": 0x3F80, "ru": 0x5F80, "rz": 0x7F80, "ftz_daz": 0x9FC0, "ftz": 0x9F80, "daz": 0x1FC0}
FORMATS = {"s": (32, 24, 127), "d": (64, 53, 1023), "h": (16, 11, 15)}     # bits, precision, emax


@dataclass
class FpCase:
    name: str
    asm: str
    mxcsr: int
    flags: bool
    element: str                      # "s", "d" or "h": what the registers hold
    scenarios: tuple = ("indep", "boundary", "cancel", "equal")

    def fill(self, init: dict, rng) -> None:
        fill(init, rng, self.element, self.scenarios)
        init["mxcsr"] = self.mxcsr


# ---------------------------------------------------------------- values
def make(fmt, sign: int, biased: int, fraction: int) -> int:
    bits, p, _ = fmt
    return sign << (bits - 1) | biased << (p - 1) | fraction


def one_value(rng, fmt) -> int:
    """An element of any class, the classes that decide results weighted up."""
    bits, p, emax = fmt
    sign, frac, top = rng.getrandbits(1), rng.getrandbits(p - 1), 2 * emax + 1
    c = rng.random()
    if c < 0.30:                                            # ordinary, near 1
        return make(fmt, sign, emax + rng.randint(-4, 4), frac)
    if c < 0.45:                                            # short significand: exact products, ties
        return make(fmt, sign, emax + rng.randint(-3, 3), rng.getrandbits(p // 2) << (p - 1 - p // 2))
    if c < 0.55:                                            # products near the under/overflow thresholds
        half = emax // 2
        return make(fmt, sign, emax + rng.choice([-half - 1, -half, -half + 1, half, half + 1]) + rng.randint(-2, 2), frac)
    if c < 0.63:                                            # near 2**emin, or subnormal
        return make(fmt, sign, rng.choice([0, 0, 1, 1, 2, p]), frac or 1)
    if c < 0.68:                                            # huge
        return make(fmt, sign, top - 1 - rng.randint(0, 2), frac)
    if c < 0.90:
        special = rng.choice(["zero", "inf", "qnan", "snan", "max", "min", "tiny", "one"])
        return {"zero": make(fmt, sign, 0, 0), "inf": make(fmt, sign, top, 0),
                "qnan": make(fmt, sign, top, 1 << (p - 2) | rng.getrandbits(p - 2)),
                "snan": make(fmt, sign, top, rng.getrandbits(p - 2) or 1),
                "max": make(fmt, sign, top - 1, (1 << (p - 1)) - 1), "min": make(fmt, sign, 1, 0),
                "tiny": make(fmt, sign, 0, 1), "one": make(fmt, sign, emax, 0)}[special]
    return rng.getrandbits(bits)


def rounded_product(a: int, b: int, fmt) -> int:
    """The product of two elements rounded to nearest (Python floats: exact for binary32, one rounding for binary64)."""
    code = "f" if fmt[0] == 32 else "d"
    x, y = (struct.unpack("<" + code, v.to_bytes(fmt[0] // 8, "little"))[0] for v in (a, b))
    try:
        return int.from_bytes(struct.pack("<" + code, x * y), "little")
    except OverflowError:
        return make(fmt, 0, 2 * fmt[2] + 1, 0)


def element_values(rng, fmt, scenario: str, roles: list[str]) -> dict[str, list[int]]:
    """One element position's values: role -> a value per register/slot of that role."""
    bits, p, emax = fmt
    emin = 1 - emax
    out = {role: [] for role in set(roles)}
    a = one_value(rng, fmt)
    b = one_value(rng, fmt)
    if scenario == "boundary":                             # A*B within a few ulps of 2**emin's rounding point
        a = make(fmt, rng.getrandbits(1), emax - p - 1 + rng.randint(0, 2), rng.getrandbits(3) << (p - 4))
        b = make(fmt, 0, 1, rng.choice([0, 1 << (p - 2)]))
    if scenario == "equal" and rng.random() < 0.8:
        b = a if rng.random() < 0.8 else a ^ (1 << (bits - 1))
    for role in roles:
        if role == "A":
            value = a
        elif role == "B":
            value = b if scenario in ("boundary", "equal", "cancel") or rng.random() < 0.3 else one_value(rng, fmt)
        elif scenario == "boundary":
            value = make(fmt, rng.getrandbits(1), rng.choice([0, 1, 1, 2]), rng.choice([0, (1 << (p - 1)) - 1, 1]))
        elif scenario == "cancel":
            value = rounded_product(a, b, fmt) ^ (1 << (bits - 1)) ^ rng.choice([0, 0, 1, 2, (1 << (bits - 1)) | 1])
        elif scenario == "equal":
            value = a if rng.random() < 0.5 else one_value(rng, fmt)
        else:
            value = one_value(rng, fmt)
        out[role].append(value)
    return out


def fill(init: dict, rng, element: str, scenarios: tuple) -> None:
    """Overwrite ymm0-15 and the first 256 bytes of memory (8 slots of 32) with crafted elements."""
    fmt = FORMATS[element]
    size = fmt[0] // 8
    roles = ["D"] * 12 + ["A", "B", "D", "D"] + ["B"] * 8           # ymm0-15, then the memory slots
    vectors = [bytearray(32) for _ in roles]
    for position in range(32 // size):
        values = element_values(rng, fmt, rng.choice(scenarios), roles)
        taken = {role: iter(v) for role, v in values.items()}
        for vector, role in zip(vectors, roles):
            vector[position * size:(position + 1) * size] = next(taken[role]).to_bytes(size, "little")
    init["ymm"] = [v.hex() for v in vectors[:16]]
    mem = bytearray.fromhex(init["mem"])
    mem[:256] = b"".join(vectors[16:])
    init["mem"] = mem.hex()


# ---------------------------------------------------------------- FMA3
def fma_asm(kind: str, width: int) -> str:
    r = "ymm" if width == 256 else "xmm"
    ptr = {"ss": "dword", "sd": "qword"}.get(kind, "ymmword" if width == 256 else "xmmword")
    forms = [(op, order) for op in ("fmadd", "fmsub", "fnmadd", "fnmsub") for order in ("132", "213", "231")]
    lines = [f"v{op}{order}{kind} {r}{i}, {r}12, " + (f"{ptr} ptr [rbx+{32 * (i % 8)}]" if i % 2 else f"{r}13")
             for i, (op, order) in enumerate(forms)]
    # the rounding error of a product (a*b - round(a*b)), exactly: deep cancellation
    lines += [f"vxorps {r}14, {r}14, {r}14", f"vfmadd231{kind} {r}14, {r}12, {r}13", f"vfmsub231{kind} {r}14, {r}12, {r}13",
              f"vxorps {r}15, {r}15, {r}15", f"vfmadd231{kind} {r}15, {r}0, {r}13", f"vfnmadd231{kind} {r}15, {r}0, {r}13"]
    return "\n".join(lines)


FMA_CASES = [FpCase(f"fma_{kind}_{width}_{mode}", fma_asm(kind, width), mxcsr, True, kind[1], ("indep", "boundary", "cancel"))
             for kind, width in (("ss", 128), ("sd", 128), ("ps", 128), ("ps", 256), ("pd", 128), ("pd", 256))
             for mode, mxcsr in MODES.items()]

FP_CASES: list[FpCase] = FMA_CASES
