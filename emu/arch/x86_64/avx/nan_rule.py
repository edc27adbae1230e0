"""SSE's rule for two NaN operands, which Unicorn's SSE gets wrong.

When both operands of an SSE add, subtract, multiply or divide are NaNs, the CPU
returns the first one, quieted.  Unicorn 2.1.4 (QEMU 5) applies the x87 rule instead
(a quiet NaN before a signalling one, else the larger payload), so an SSE twin can
return the other NaN (measured: tests/data/avx/fp_cases.py, twin_* cases).  The
handlers of these forms are wrapped: when some element has a NaN in both sources,
that element of the twin's result is replaced by the first source's NaN, quieted.
The horizontal forms pair elements of one source, the even one first (hadd: a0+a1,
a2+a3, b0+b1, b2+b3: measured, whatever order the SDM writes the sum in).
"""
from __future__ import annotations

from .ieee import F32, F64, join
from .operands import Instruction
from .semantics import Handler
from .vector_file import VectorFile

_KINDS = ("ss", "sd", "ps", "pd")
FIRST_NAN = frozenset([f"v{op}{kind}" for op in ("add", "sub", "mul", "div") for kind in _KINDS]
                      + [f"v{op}{kind}" for op in ("addsub", "hadd", "hsub") for kind in ("ps", "pd")])


def checked(run: Handler, insn: Instruction) -> Handler:
    """`run` (the twin's handler), with the two-NaN elements of its result put right."""
    dst, src1, src2 = insn.ops
    name = insn.mnemonic
    fmt = F32 if name[-1] == "s" else F64
    size = fmt.bits
    count = 1 if name[-2] == "s" else dst.nbytes * 8 // size
    element, exponent, quiet = (1 << size) - 1, fmt.exponent_mask, fmt.quiet
    top_bit = 1 << (size - 1)
    per_lane = 128 // size
    if name.startswith(("vhadd", "vhsub")):
        # (source, element) pairs giving result element i of a 128-bit lane, lane offsets added below
        half = per_lane // 2
        pairs = [(0 if i < half else 1, 2 * (i % half)) for i in range(per_lane)]
        sources = [(s, lane + e, s, lane + e + 1) for lane in range(0, count, per_lane) for s, e in pairs]
    else:
        sources = [(0, i, 1, i) for i in range(count)]

    # NaN lanes at once: |x| + (2**(size-1) - 1 - |inf|) carries into a lane's top bit iff |x| > |inf|
    magnitude = join([element >> 1] * count, size)
    offset = join([(element >> 1) - exponent] * count, size)
    top = join([1 << (size - 1)] * count, size)
    elementwise = not name.startswith(("vhadd", "vhsub"))

    def handler(vf: VectorFile, insn: Instruction) -> None:
        first = src1.read(vf, insn)
        if elementwise and not ((first & magnitude) + offset) & top:     # the usual case: no NaN in src1
            run(vf, insn)
            return
        second = src2.read(vf, insn)
        run(vf, insn)
        values, fixes = (first, second), []
        for i, (s, j, t, k) in enumerate(sources):
            a, b = values[s] >> (size * j) & element, values[t] >> (size * k) & element
            if a & ~top_bit > exponent and b & ~top_bit > exponent:
                fixes.append((i, a | quiet))
        if fixes:
            result = dst.read(vf, insn)
            for i, nan in fixes:
                result = result & ~(element << (size * i)) | nan << (size * i)
            dst.write(vf, insn, result)
    return handler
