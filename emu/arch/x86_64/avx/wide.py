"""VEX.256 forms of the SSE-twin instructions, as two runs of the twin: one per 128-bit lane.

Unicorn has no VEX.256 at all, but AVX/AVX2 define almost every 256-bit arithmetic,
compare, shuffle and integer form lane by lane: bits 255:128 of the result are the
128-bit instruction applied to bits 255:128 of the sources.  So the twin of the
VEX.128 form runs twice, on each lane's inputs.  The forms that are not simply
lane by lane are told apart here (each checked against the CPU, tests/data/avx/fp_cases.py):
- an xmm shift count (vpsrlq ymm, ymm, xmm) is the same for both lanes;
- widening forms (vpmovzx*, vcvtps2pd, vcvtdq2pd ymm, xmm) read the upper lane's
  elements from the middle of their source;
- narrowing forms (vcvtpd2ps, vcvt(t)pd2dq xmm, ymm) put each lane's result in 64 bits;
- a mask (vmovmskps/pd, vpmovmskb) puts the upper lane's bits above the lower's;
- vptest's flags hold for the whole register when they hold for both lanes;
- vblendps/vblendpd/vshufpd give the upper lane the next bits of the immediate.
Cross-lane forms (vpermd, vpermq, vperm2f128...) are in Python (permute.py, semantics.py).
"""
from __future__ import annotations

from ....emulator.unicorn_c import mem_write, reg_read64, reg_read_bytes, reg_write64, reg_write_bytes
from .ieee import flush_tiny
from .operands import Instruction
from .calculator import DATA, EFLAGS, MXCSR, calculator as shared_calculator
from .vector_file import VectorFile

# dst element size / src element size: the upper lane's source starts 16/ratio bytes in
WIDENING = {**{f"vpmov{e}x{k}": r for e in "sz" for k, r in (("bw", 2), ("bd", 4), ("bq", 8), ("wd", 2), ("wq", 4), ("dq", 2))},
            "vcvtps2pd": 2, "vcvtdq2pd": 2}
NARROWING = frozenset(("vcvtpd2ps", "vcvtpd2dq", "vcvttpd2dq"))
MASK_BITS = {"vmovmskps": 4, "vmovmskpd": 2, "vpmovmskb": 16}
HIGH_IMMEDIATE = {"vblendps": 4, "vblendpd": 2, "vshufpd": 2}     # the upper lane's immediate = imm >> n
# twin forms that have no VEX.256 form (#UD with VEX.L=1, or scalar)
NOT_WIDE = frozenset(["vinsertps", "vextractps", "vmovhlps", "vmovlhps", "vmovlps", "vmovhps", "vmovlpd",
                      "vmovhpd", "vucomiss", "vucomisd", "vcomiss", "vcomisd"]
                     + [f"vp{op}{k}" for op in ("insr", "extr") for k in "bwdq"])
_ZF, _CF, _PTEST_FLAGS = 0x40, 0x01, 0x8D5


def wide_handler(vex: bytes, decoded: Instruction, twin_class):
    """The handler for a VEX.256 twin form; raises UnsupportedInstruction for those that have none."""
    name = decoded.mnemonic
    if name in NOT_WIDE or (name.endswith(("ss", "sd")) and not name.startswith("vp")) \
            or name.startswith(("vcvtsi", "vcvtss", "vcvtsd", "vcvttss", "vcvttsd")):
        raise decoded.fail("no 256-bit form")
    low = twin_class(vex, decoded)
    if name in HIGH_IMMEDIATE:
        high = twin_class(vex[:-1] + bytes([vex[-1] >> HIGH_IMMEDIATE[name]]), decoded)
    else:
        high = low
    return _WideTwin(decoded, low, high).run


class _WideTwin:
    def __init__(self, decoded: Instruction, low, high) -> None:
        ratio = WIDENING.get(decoded.mnemonic)
        self.codes = (low.code, high.code)
        self.general, self.memory = low.general, low.memory
        # (guest zmm, calculator zmm, bytes read, where the upper lane's 16 bytes start)
        self.inputs = [(source, target, op.nbytes, self._step(op.nbytes, ratio))
                       for (source, target), op in zip(low.inputs, low.input_operands)]
        self.memory_step = self._step(self.memory.nbytes, ratio) if self.memory is not None else 0
        self.kind, self.register, self.destination = low.result
        self.narrowing = decoded.mnemonic in NARROWING
        self.mask_shift = MASK_BITS.get(decoded.mnemonic, 0)
        self.flush_when, self.flush = low.flush_when, low.flush
        if self.kind == "memory":
            raise decoded.fail("no 256-bit form with a memory destination")

    @staticmethod
    def _step(nbytes: int, ratio: int | None) -> int:
        if ratio is not None and nbytes < 32:
            return 16 // ratio                # a widening source
        return 16 if nbytes == 32 else 0      # a lane of a ymm source, or an xmm count used whole by both lanes

    def run(self, vf: VectorFile, insn: Instruction) -> None:
        guest, calculator = vf.uc, shared_calculator()
        uc = calculator.uc
        values = [(target, reg_read_bytes(guest, source, 32), step) for source, target, _, step in self.inputs]
        for reg in self.general:
            reg_write64(uc, reg, reg_read64(guest, reg))
        mxcsr = reg_read64(guest, MXCSR)
        reg_write64(uc, MXCSR, mxcsr)
        memory: bytes | None = None
        if self.memory is not None:
            memory = self.memory.load(vf, insn) + bytes(32)
        results = []
        for half in (0, 1):
            for target, data, step in values:
                reg_write_bytes(uc, target, data[step * half:step * half + 16].ljust(16, b"\0"))
            if memory is not None:
                mem_write(uc, DATA, memory[self.memory_step * half:self.memory_step * half + 16])
            calculator.run(self.codes[half])
            if self.kind == "vector":
                data = reg_read_bytes(uc, self.register, 16)
                if mxcsr & self.flush_when:
                    data = flush_tiny(data, *self.flush)
                results.append(data)
            elif self.kind == "general":
                results.append(reg_read64(uc, self.destination.write_id))
            else:
                results.append(reg_read64(uc, EFLAGS))
        if self.kind == "vector":
            data = results[0][:8] + results[1][:8] if self.narrowing else results[0] + results[1]
            vf.write_bytes(self.destination.zmm, data)
        elif self.kind == "general":
            reg_write64(guest, self.destination.write_id, results[0] | results[1] << self.mask_shift)
        else:
            both = results[0] & results[1] & (_ZF | _CF)
            reg_write64(guest, EFLAGS, reg_read64(guest, EFLAGS) & ~_PTEST_FLAGS | both)

