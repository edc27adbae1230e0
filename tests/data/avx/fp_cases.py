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
    element: str | None               # "s", "d" or "h": what the registers hold (None: random bytes)
    scenarios: tuple = ("indep", "boundary", "cancel", "equal")

    def __post_init__(self) -> None:
        if self.flags:
            self.asm = flag_log(self.asm)

    def fill(self, init: dict, rng) -> None:
        if self.element is not None:
            fill(init, rng, self.element, self.scenarios)
        init["mxcsr"] = self.mxcsr
        if self.flags:
            mem = bytearray.fromhex(init["mem"])
            mem[FLAG_RESET:FLAG_RESET + 4] = self.mxcsr.to_bytes(4, "little")
            init["mem"] = mem.hex()


FLAG_LOG, FLAG_RESET = 256, 508          # memory offsets: MXCSR after each instruction; MXCSR to restart from


def flag_log(asm: str) -> str:
    """Each instruction followed by a store of MXCSR (its flags alone: they are cleared again after it)."""
    lines = []
    for i, line in enumerate(asm.splitlines()):
        lines += [line, f"stmxcsr [rbx+{FLAG_LOG + 4 * i}]", f"ldmxcsr [rbx+{FLAG_RESET}]"]
    assert FLAG_LOG + 4 * len(asm.splitlines()) <= 384
    return "\n".join(lines)


# ---------------------------------------------------------------- values
def make(fmt, sign: int, biased: int, fraction: int) -> int:
    bits, p, _ = fmt
    return sign << (bits - 1) | biased << (p - 1) | fraction


def half_range_value(rng) -> int:
    """A binary32 element for vcvtps2ph: mostly within binary16's range, ties and near-ties to its precision."""
    sign, c = rng.getrandbits(1), rng.random()
    if c < 0.55:
        low = rng.choice([rng.getrandbits(13), 0x1000, 0x0FFF, 0x1001, 0, 0x1FFF])
        return make(FORMATS["s"], sign, 127 + rng.randint(-26, 16), rng.getrandbits(10) << 13 | low)
    if c < 0.65:                                            # NaNs whose payload binary16 cuts
        return make(FORMATS["s"], sign, 255, (1 << 22 if c < 0.6 else 0) | (rng.getrandbits(22) or 1))
    return one_value(rng, FORMATS["s"])


def one_value(rng, fmt) -> int:
    """An element of any class, the classes that decide results weighted up."""
    if fmt == "hs":
        return half_range_value(rng)
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


def element_values(rng, fmt, scenario: str, roles: list[str], source=None) -> dict[str, list[int]]:
    """One element position's values: role -> a value per register/slot of that role."""
    bits, p, emax = fmt
    emin = 1 - emax
    out = {role: [] for role in set(roles)}
    a = one_value(rng, source or fmt)
    b = one_value(rng, source or fmt)
    if scenario == "boundary":                             # A*B within a few ulps of 2**emin's rounding point
        a = make(fmt, rng.getrandbits(1), emax - p - 1 + rng.randint(0, 2), rng.getrandbits(3) << (p - 4))
        b = make(fmt, 0, 1, rng.choice([0, 1 << (p - 2)]))
    if scenario == "nans":                                 # NaNs in both sources: which one comes out
        a, b = (make(fmt, rng.getrandbits(1), 2 * emax + 1, rng.getrandbits(p - 1) or 1) for _ in range(2))
    if scenario == "equal" and rng.random() < 0.8:
        b = a if rng.random() < 0.8 else a ^ (1 << (bits - 1))
    for role in roles:
        if role == "A":
            value = a
        elif role == "B":
            value = b if scenario in ("boundary", "equal", "cancel", "nans") or rng.random() < 0.3 else one_value(rng, source or fmt)
        elif scenario == "boundary":
            value = make(fmt, rng.getrandbits(1), rng.choice([0, 1, 1, 2]), rng.choice([0, (1 << (p - 1)) - 1, 1]))
        elif scenario == "cancel":
            value = rounded_product(a, b, fmt) ^ (1 << (bits - 1)) ^ rng.choice([0, 0, 1, 2, (1 << (bits - 1)) | 1])
        elif scenario == "equal":
            value = a if rng.random() < 0.5 else one_value(rng, source or fmt)
        else:
            value = one_value(rng, source or fmt)
        out[role].append(value)
    return out


def fill(init: dict, rng, element: str, scenarios: tuple) -> None:
    """Overwrite ymm0-15 and the first 256 bytes of memory (8 slots of 32) with crafted elements."""
    fmt = FORMATS["s" if element == "hs" else element]
    size = fmt[0] // 8
    roles = ["D"] * 12 + ["A", "B", "D", "D"] + ["B"] * 8           # ymm0-15, then the memory slots
    vectors = [bytearray(32) for _ in roles]
    for position in range(32 // size):
        values = element_values(rng, fmt, rng.choice(scenarios), roles, "hs" if element == "hs" else None)
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

# ---------------------------------------------------------------- VEX.256 through two runs of the SSE twin
def float_wide(k: str) -> str:
    return "\n".join([
        f"vadd{k} ymm0, ymm12, ymm13", f"vsub{k} ymm1, ymm12, [rbx]", f"vmul{k} ymm2, ymm12, ymm13",
        f"vdiv{k} ymm3, ymm12, [rbx+32]", f"vmin{k} ymm4, ymm12, ymm13", f"vmax{k} ymm5, ymm13, ymm12",
        f"vsqrt{k} ymm6, ymm12", f"vsqrt{k} ymm7, [rbx+64]", f"vhadd{k} ymm8, ymm12, ymm13",
        f"vaddsub{k} ymm9, ymm12, ymm13", f"vround{k} ymm10, ymm12, 9", f"vround{k} ymm11, [rbx+96], 4",
        f"vhsub{k} ymm14, ymm13, [rbx+128]", f"vmax{k} ymm15, ymm15, ymm15"]
        + (["vdpps ymm0, ymm0, ymm13, 0xf3"] if k == "ps" else ["vandnpd ymm0, ymm0, ymm13"]))


def compare_wide(k: str) -> str:
    return "\n".join(f"vcmp{k} ymm{p}, ymm12, " + (f"[rbx+{32 * p}], {p}" if p % 2 else f"ymm13, {p}")
                     for p in range(8))


CONVERT_S = "\n".join(["vcvtdq2ps ymm0, ymm1", "vcvtps2dq ymm2, ymm12", "vcvttps2dq ymm3, [rbx]", "vcvtps2pd ymm4, xmm12",
                       "vcvtps2pd ymm5, xmmword ptr [rbx+16]", "vcvtdq2pd ymm6, xmm7", "vcvtdq2pd ymm8, xmmword ptr [rbx+40]",
                       "vcvtps2dq ymm9, [rbx+64]", "vcvttps2dq ymm10, ymm13"])
CONVERT_D = "\n".join(["vcvtpd2ps xmm8, ymm12", "vcvtpd2ps xmm9, ymmword ptr [rbx+32]", "vcvtpd2dq xmm10, ymm13",
                       "vcvttpd2dq xmm11, ymm12", "vcvttpd2dq xmm14, ymmword ptr [rbx+64]",
                       "vcvtpd2dq xmm15, ymmword ptr [rbx+96]"])
INTEGER_WIDE = [
    ("int_arith", "vpaddd ymm0, ymm1, ymm2\nvpsubd ymm3, ymm4, [rbx]\nvpmulld ymm5, ymm6, ymm7\nvpaddq ymm8, ymm9, ymm10\n"
                  "vpsubb ymm11, ymm12, [rbx+32]\nvpaddw ymm13, ymm14, ymm15\nvpmuludq ymm1, ymm2, ymm3\n"
                  "vpmuldq ymm4, ymm5, ymm6\nvpmaddwd ymm7, ymm8, ymm9\nvpsadbw ymm10, ymm11, ymm12\n"
                  "vpavgb ymm14, ymm15, [rbx+64]\nvpmulhw ymm2, ymm3, ymm4\nvpaddsb ymm6, ymm7, ymm8\nvpsubusw ymm9, ymm10, ymm11"),
    ("int_minmax_cmp", "vpmaxsd ymm0, ymm1, ymm2\nvpminud ymm3, ymm4, [rbx+32]\nvpmaxub ymm5, ymm6, ymm7\n"
                       "vpminsw ymm8, ymm9, ymm10\nvpcmpgtd ymm11, ymm12, ymm13\nvpcmpgtq ymm14, ymm15, ymm1\n"
                       "vpcmpgtb ymm2, ymm3, [rbx]\nvpcmpgtw ymm4, ymm4, ymm5\nvpabsd ymm6, ymm7\nvpabsb ymm9, [rbx+64]\n"
                       "vpsignd ymm10, ymm11, ymm12\nvpmulhuw ymm13, ymm14, ymm15\nvpmullw ymm1, ymm1, ymm2"),
    ("int_shift", "vpcmpeqd xmm15, xmm15, xmm15\nvpsrlq xmm15, xmm15, 60\nvpslld ymm0, ymm1, 5\nvpsrlq ymm2, ymm3, 33\n"
                  "vpsraw ymm4, ymm5, 3\nvpsrad ymm6, ymm6, 31\nvpslldq ymm7, ymm8, 3\nvpsrldq ymm9, ymm10, 7\n"
                  "vpsrlq ymm11, ymm12, xmm15\nvpsllw ymm13, ymm14, xmm15\nvpsrad ymm1, ymm2, xmmword ptr [rbx]\n"
                  "vpsllq ymm3, ymm3, xmm15\nvpsraw ymm5, ymm5, xmm15\nvpsrld ymm8, ymm8, 0x1f"),
    ("int_shuffle", "vpshufd ymm0, ymm1, 0x1b\nvpshufb ymm2, ymm3, ymm4\nvunpcklps ymm5, ymm6, ymm7\n"
                    "vunpckhpd ymm8, ymm9, [rbx]\nvshufps ymm10, ymm11, ymm12, 0x4e\nvshufpd ymm13, ymm14, ymm15, 0x6\n"
                    "vblendps ymm1, ymm2, ymm3, 0xa5\nvblendpd ymm4, ymm5, [rbx+32], 0x9\nvpblendw ymm6, ymm7, ymm8, 0x3c\n"
                    "vpalignr ymm9, ymm10, ymm11, 5\nvpunpcklbw ymm12, ymm13, ymm14\nvpunpckhqdq ymm15, ymm0, ymm1\n"
                    "vpackssdw ymm3, ymm2, ymm4\nvmovddup ymm7, ymm5\nvmovshdup ymm11, [rbx+64]\nvmovsldup ymm14, ymm6"),
    ("int_shuffle2", "vpshuflw ymm0, ymm1, 0x93\nvpshufhw ymm2, [rbx], 0x39\nvpacksswb ymm4, ymm5, ymm6\n"
                     "vpackusdw ymm7, ymm8, [rbx+32]\nvpackuswb ymm9, ymm10, ymm11\nvunpcklpd ymm12, ymm13, ymm14\n"
                     "vunpckhps ymm15, ymm1, ymm2\nvpunpckhwd ymm1, ymm3, ymm5\nvpunpckldq ymm3, ymm3, ymm3\n"
                     "vshufpd ymm5, ymm6, ymm7, 0x9\nvblendpd ymm6, ymm6, ymm8, 0x6\nvblendps ymm8, ymm9, ymm10, 0x5a"),
    ("int_widen", "vpmovzxbw ymm0, xmm1\nvpmovsxbd ymm2, xmm3\nvpmovzxbq ymm4, dword ptr [rbx+4]\n"
                  "vpmovsxwd ymm5, xmmword ptr [rbx+16]\nvpmovzxwq ymm6, qword ptr [rbx+8]\nvpmovsxdq ymm7, xmm8\n"
                  "vpmovzxdq ymm9, [rbx+32]\nvpmovsxbq ymm10, xmm11\nvpmovzxwd ymm12, xmm13\nvpmovsxbw ymm14, [rbx+48]\n"
                  "vpmovzxbd ymm15, qword ptr [rbx+72]\nvpmovsxwq ymm1, xmm1"),
    ("int_masks", "vmovmskps eax, ymm1\nvmovmskpd ecx, ymm2\nvpmovmskb edx, ymm3\nvptest ymm4, ymm5\nsetz r8b\n"
                  "setc r10b\nvpxor xmm7, xmm7, xmm7\nvptest ymm7, ymm8\nsetz r11b\nsetc r12b\nvptest ymm9, ymm9\n"
                  "setc r13b\nvpcmpeqd ymm10, ymm10, ymm10\nvpand ymm11, ymm9, ymm10\nvptest ymm11, ymm9\nsetc r14b\n"
                  "setz r15b\nvptest ymm12, [rbx]\nsetz dil\nsetc ch\nvpxor xmm13, xmm13, xmm13\n"
                  "vinserti128 ymm13, ymm13, xmm9, 1\nvptest ymm13, ymm7\nsetz bpl\nvptest ymm9, ymm13\nsetc dh"),
]
WIDE_CASES = ([FpCase(f"wide_{k}_{mode}", float_wide(k), MODES[mode], False, k[1], ("indep", "equal", "nans"))
               for k in ("ps", "pd") for mode in ("rne", "rd", "ftz_daz")]
              + [FpCase(f"wide_cmp_{k}", compare_wide(k), MODES["rne"], False, k[1], ("indep", "equal")) for k in ("ps", "pd")]
              + [FpCase(f"wide_convert_{e}_{mode}", asm, MODES[mode], False, e, ("indep",))
                 for e, asm in (("s", CONVERT_S), ("d", CONVERT_D)) for mode in ("rne", "rz", "ftz_daz")]
              + [FpCase(f"wide_{name}", asm, MODES["rne"], False, None) for name, asm in INTEGER_WIDE])

# ---------------------------------------------------------------- VEX.128 twins under each MXCSR mode
TWIN_FLOAT = {
    "s": "vaddss xmm0, xmm12, xmm13\nvsubss xmm1, xmm12, dword ptr [rbx]\nvmulss xmm2, xmm12, xmm13\n"
         "vdivss xmm3, xmm12, [rbx+32]\nvminss xmm4, xmm12, xmm13\nvmaxss xmm5, xmm13, xmm12\nvsqrtss xmm6, xmm12, xmm13\n"
         "vaddps xmm7, xmm12, xmm13\nvmulps xmm8, xmm12, [rbx+64]\nvminps xmm9, xmm12, xmm13\n"
         "vmaxps xmm10, xmm12, [rbx+96]\nvhaddps xmm11, xmm12, xmm13\nvdpps xmm14, xmm12, xmm13, 0xff\n"
         "vcvtss2sd xmm15, xmm12, xmm13",
    "d": "vaddsd xmm0, xmm12, xmm13\nvsubsd xmm1, xmm12, qword ptr [rbx]\nvmulsd xmm2, xmm12, xmm13\n"
         "vdivsd xmm3, xmm12, [rbx+32]\nvminsd xmm4, xmm12, xmm13\nvmaxsd xmm5, xmm13, xmm12\nvsqrtsd xmm6, xmm12, xmm13\n"
         "vsubpd xmm7, xmm12, xmm13\nvdivpd xmm8, xmm12, [rbx+64]\nvminpd xmm9, xmm12, xmm13\n"
         "vmaxpd xmm10, xmm12, [rbx+96]\nvaddsubpd xmm11, xmm12, xmm13\nvcvtpd2ps xmm14, xmm13\n"
         "vcvtsd2ss xmm15, xmm12, xmm13",
}
TWIN_CASES = [FpCase(f"twin_{e}_{mode}", asm, mxcsr, False, e, ("indep", "equal", "nans"))
              for e, asm in TWIN_FLOAT.items() for mode, mxcsr in MODES.items()]


# ---------------------------------------------------------------- compares, permutes, blends, F16C in Python
def compare_asm(kind: str, width: int, predicates: range) -> str:
    r = "ymm" if width == 256 else "xmm"
    ptr = {"ss": "dword", "sd": "qword"}.get(kind, "ymmword" if width == 256 else "xmmword")
    return "\n".join(f"vcmp{kind} {r}{i}, {r}12, " + (f"{ptr} ptr [rbx+{32 * (i % 8)}]" if i % 2 else f"{r}13") + f", {p}"
                     for i, p in enumerate(predicates))


COMPARE_CASES = [FpCase(f"cmp_{kind}_{width}_{first}_{mode}", compare_asm(kind, width, range(first, first + 12)),
                        MODES[mode], True, kind[1], ("indep", "equal", "equal"))
                 for kind, width in (("ss", 128), ("sd", 128), ("ps", 128), ("ps", 256), ("pd", 128), ("pd", 256))
                 for first in (8, 20) for mode in ("rne", "daz")]
PERMUTE_CASES = [
    FpCase("permute_in_lane", "vpermilps ymm0, ymm1, 0x1b\nvpermilps xmm2, [rbx], 0x4e\nvpermilps ymm3, ymm4, ymm5\n"
           "vpermilps xmm6, xmm7, [rbx+32]\nvpermilpd ymm8, ymm9, 0x6\nvpermilpd xmm10, [rbx+64], 1\n"
           "vpermilpd ymm11, ymm12, ymm13\nvpermilpd xmm14, xmm15, xmm1\nvpermilps ymm15, [rbx+96], 0xb1\n"
           "vpermilpd ymm1, ymm1, [rbx+128]", MODES["rne"], True, None),
    FpCase("permute_cross_lane", "vpermd ymm0, ymm1, ymm2\nvpermd ymm3, ymm4, [rbx]\nvpermps ymm5, ymm6, ymm7\n"
           "vpermq ymm8, ymm9, 0x4e\nvpermq ymm10, [rbx+32], 0x1b\nvpermpd ymm11, ymm12, 0xd8\n"
           "vpermps ymm13, ymm13, [rbx+64]\nvpermpd ymm14, ymm14, 0x93", MODES["rne"], True, None),
    FpCase("blend_variable", "vblendvps ymm0, ymm1, ymm2, ymm3\nvblendvps xmm4, xmm5, [rbx], xmm6\n"
           "vblendvpd ymm7, ymm8, [rbx+32], ymm9\nvblendvpd xmm10, xmm11, xmm12, xmm13\n"
           "vpblendvb ymm14, ymm15, ymm1, ymm2\nvpblendvb xmm1, xmm3, xmm4, xmm5\nvpblendvb ymm2, ymm2, [rbx+64], ymm2",
           MODES["rne"], True, None),
]


def ps2ph_asm() -> str:
    lines = [f"vcvtps2ph xmm{i}, {'ymm' if i % 2 else 'xmm'}{12 + i % 2}, {i}" for i in range(8)]
    return "\n".join(lines + ["vcvtps2ph xmmword ptr [rbx+384], ymm13, 4", "vcvtps2ph qword ptr [rbx+416], xmm12, 3",
                               "vcvtps2ph xmm8, ymm14, 0", "vcvtps2ph xmm9, xmm15, 4"])


PH2PS = ("vcvtph2ps ymm0, xmm12\nvcvtph2ps xmm1, xmm13\nvcvtph2ps ymm2, [rbx]\nvcvtph2ps xmm3, qword ptr [rbx+32]\n"
         "vcvtph2ps ymm4, xmm4\nvcvtph2ps xmm5, xmm14\nvcvtph2ps ymm6, xmmword ptr [rbx+64]\nvcvtph2ps ymm7, xmm15")
F16C_CASES = ([FpCase(f"f16c_ps2ph_{mode}", ps2ph_asm(), mxcsr, True, "hs", ("indep",)) for mode, mxcsr in MODES.items()]
              + [FpCase(f"f16c_ph2ps_{mode}", PH2PS, MODES[mode], True, "h", ("indep",)) for mode in ("rne", "daz", "ftz_daz")])

FP_CASES: list[FpCase] = FMA_CASES + WIDE_CASES + TWIN_CASES + COMPARE_CASES + PERMUTE_CASES + F16C_CASES
