"""VEX.128 arithmetic carried out by its SSE twin, on a private Unicorn that runs SSE correctly.

Unicorn 2.1.4 runs a VEX.128 instruction as if it were legacy SSE: it ignores the
VEX.vvvv operand (so `vaddss xmm0, xmm1, xmm2` computes xmm0 + xmm2) and leaves bits
255:128 of the destination alone.  Its SSE itself is right.  So each arithmetic,
conversion, compare, shuffle or integer form below is re-encoded once, at decode, as
the legacy SSE instruction with the same opcode (`addss xmm0, xmm2`), its memory
operand pointed at a scratch slot; to carry it out, the operands' values are copied
into a private emulator (the destination register first receives src1, as the
three-operand form means dst = op(src1, src2)), the twin runs there, and the result
goes back to the guest's destination, zero-extended above bit 127 as VEX.128 does.

Only the mnemonics in TWINS are lowered: each has an SSE instruction of the same opcode
and meaning (checked against this machine's CPU, tests/data/avx/cases.json).  A form
whose legacy encoding means something else (VEX-only instructions, the four-operand
blends, compare predicates above 7), VEX.256 and EVEX stop as unsupported.
"""
from __future__ import annotations

from unicorn import x86_const as UX

from ....emulator.unicorn_c import mem_read, mem_write, reg_read64, reg_read_bytes, reg_write64, reg_write_bytes
from .calculator import CODE, DATA, EFLAGS, MXCSR
from .calculator import calculator as shared_calculator
from .ieee import DAZ, FTZ, flush_tiny
from .nan_rule import FIRST_NAN, checked
from .operands import GeneralRegister, Immediate, Instruction, Memory, VectorRegister
from .vector_file import VectorFile
from .wide import wide_handler

_ZMM = tuple(getattr(UX, f"UC_X86_REG_ZMM{i}") for i in range(16))
_ADDRESS_PREFIXES = (0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x67)
_LEGACY_PREFIX = {0: b"", 1: b"\x66", 2: b"\xf3", 3: b"\xf2"}
_MAP_ESCAPE = {1: b"\x0f", 2: b"\x0f\x38", 3: b"\x0f\x3a"}
_SHIFT_GROUPS = (0x71, 0x72, 0x73)        # map 1: shift by immediate; VEX.vvvv is the destination
_EXTRACTS = (0x14, 0x15, 0x16, 0x17)      # map 3: pextrb/w/d/q, extractps; ModRM.rm is the destination

_FLOAT = [f"{op}{kind}" for op in ("add", "sub", "mul", "div", "min", "max", "sqrt") for kind in ("ss", "sd", "ps", "pd")]
# Not rcpps/rsqrtps and their scalar forms: their approximations differ between CPU makers.
APPROXIMATIONS = frozenset(("vrcpps", "vrcpss", "vrsqrtps", "vrsqrtss"))
_FLOAT += ["haddps", "haddpd", "hsubps", "hsubpd", "addsubps", "addsubpd"]      # not dpps/dppd: dot.py
_CONVERT = ["cvtsi2ss", "cvtsi2sd", "cvtss2sd", "cvtsd2ss", "cvttss2si", "cvttsd2si", "cvtss2si", "cvtsd2si",
            "cvtdq2ps", "cvtps2dq", "cvttps2dq", "cvtdq2pd", "cvtpd2dq", "cvttpd2dq", "cvtps2pd", "cvtpd2ps"]
# capstone names a compare by its predicate (vcmpltss); SSE has predicates 0-7, VEX 0-31.
_PREDICATES = ("eq", "lt", "le", "unord", "neq", "nlt", "nle", "ord")
_COMPARE = [f"cmp{p}{kind}" for p in _PREDICATES for kind in ("ss", "sd", "ps", "pd")] + ["ucomiss", "ucomisd", "comiss", "comisd", "ptest",
            "pcmpgtb", "pcmpgtw", "pcmpgtd", "pcmpgtq"]
_ROUND = ["roundss", "roundsd", "roundps", "roundpd"]
_SHUFFLE = ["shufps", "shufpd", "unpcklps", "unpcklpd", "unpckhps", "unpckhpd", "pshufd", "pshufb", "pshuflw",
            "pshufhw", "palignr", "blendps", "blendpd", "pblendw", "insertps", "extractps", "movhlps", "movlhps",
            "movddup", "movshdup", "movsldup", "movlps", "movhps", "movlpd", "movhpd", "packsswb", "packssdw", "packuswb", "packusdw", "movmskps", "movmskpd",
            "pmovmskb"] + [f"punpck{half}{kind}" for half in ("l", "h") for kind in ("bw", "wd", "dq", "qdq")]
_INTEGER = [f"p{op}{kind}" for op in ("add", "sub") for kind in "bwdq"] + [
    "pmulld", "pmullw", "pmulhw", "pmulhuw", "pmuludq", "pmuldq", "pmaddwd", "psadbw", "pavgb", "pavgw",
    "psllw", "pslld", "psllq", "psrlw", "psrld", "psrlq", "psraw", "psrad", "pslldq", "psrldq",
    "pabsb", "pabsw", "pabsd", "psignb", "psignw", "psignd", "paddsb", "paddsw", "paddusb", "paddusw",
    "psubsb", "psubsw", "psubusb", "psubusw", "pinsrb", "pinsrw", "pinsrd", "pinsrq", "pextrb", "pextrw", "pextrd",
    "pextrq"] + [f"p{op}{kind}" for op in ("min", "max") for kind in ("sb", "sw", "sd", "ub", "uw", "ud")] + [
    f"pmov{ext}x{kind}" for ext in "sz" for kind in ("bw", "bd", "bq", "wd", "wq", "dq")]
TWINS = frozenset("v" + name for name in _FLOAT + _CONVERT + _COMPARE + _ROUND + _SHUFFLE + _INTEGER)
"""The VEX mnemonics carried out by their SSE twin."""
# Unicorn 2.1.4's SSE ignores MXCSR.FTZ, and under DAZ its min/max return a subnormal operand as it
# is (it honours DAZ elsewhere, and the rounding mode): the subnormal results of these forms are
# flushed to a signed zero here, as the CPU does under FTZ (arithmetic) or DAZ (min/max).
# name -> (MXCSR bit, element bits, elements written by the operation)
_ELEMENTS = {"ss": (32, 1), "sd": (64, 1), "ps": (32, 4), "pd": (64, 2)}
FLUSHED = {f"v{op}{kind}": (FTZ, *_ELEMENTS[kind]) for kind in _ELEMENTS
           for op in ("add", "sub", "mul", "div", "sqrt", "hadd", "hsub", "addsub")}
FLUSHED.update({f"v{op}{kind}": (DAZ, *_ELEMENTS[kind]) for op in ("min", "max") for kind in _ELEMENTS})
FLUSHED.update({"vcvtsd2ss": (FTZ, 32, 1), "vcvtpd2ps": (FTZ, 32, 2)})
FLAGS_ONLY = frozenset(("vucomiss", "vucomisd", "vcomiss", "vcomisd", "vptest"))


def handler(insn, decoded: Instruction):
    """The handler that carries `insn` (a capstone instruction) out through its SSE twin; raises when it has none."""
    if decoded.mnemonic in APPROXIMATIONS:
        raise decoded.fail("its result is an approximation whose bits depend on the CPU model "
                           "(AMD and Intel processors give different values), so emu cannot know them")
    if decoded.mnemonic not in TWINS:
        raise decoded.fail()
    raw = bytes(insn.bytes)
    start = 0
    while raw[start] in _ADDRESS_PREFIXES:
        start += 1
    if raw[start] not in (0xC4, 0xC5):
        raise decoded.fail("the EVEX (AVX-512) form is not carried out")
    widths = {op.nbytes for op in decoded.ops if isinstance(op, VectorRegister)}
    if 32 in widths or any(isinstance(op, Memory) and op.nbytes == 32 for op in decoded.ops):
        run = wide_handler(raw[start:], decoded, _Twin)
    elif widths - {16}:
        raise decoded.fail("operand width not carried out")
    else:
        run = _Twin(raw[start:], decoded).run
    if decoded.mnemonic in FIRST_NAN and len(decoded.ops) == 3:
        return checked(run, decoded)
    return run


class _Twin:
    """One decoded VEX.128 instruction, its legacy twin, and how values move between guest and calculator."""

    def __init__(self, vex: bytes, decoded: Instruction) -> None:
        if vex[0] == 0xC5:
            r, b, mapping, w = ~vex[1] >> 7 & 1, 0, 1, 0
            vvvv, pp, rest = ~vex[1] >> 3 & 15, vex[1] & 3, vex[2:]
        else:
            r, b, mapping = ~vex[1] >> 7 & 1, ~vex[1] >> 5 & 1, vex[1] & 31
            w, vvvv, pp, rest = vex[2] >> 7, ~vex[2] >> 3 & 15, vex[2] & 3, vex[3:]
        if mapping not in _MAP_ESCAPE:
            raise decoded.fail("unknown VEX opcode map")
        opcode, modrm = rest[0], rest[1]
        mod, reg, rm = modrm >> 6, (modrm >> 3 & 7) | r << 3, (modrm & 7) | b << 3
        ops = [op for op in decoded.ops if not isinstance(op, Immediate)]
        if decoded.mnemonic.startswith("vcmp") and rest[-1] > 7:      # a predicate SSE lacks, capstone-named
            raise decoded.fail("compare predicate above 7 has no SSE form")
        # Which operand each ModRM/VEX field names (capstone lists the destination first).
        src1 = None
        if mapping == 1 and opcode in _SHIFT_GROUPS:            # vpsrld xmm(vvvv), xmm(rm), imm
            destination, reg_op, rm_op, result_reg = ops[0], None, ops[1], rm
        elif mapping == 3 and opcode in _EXTRACTS:              # vpextrd r/m32(rm), xmm(reg), imm
            destination, reg_op, rm_op, result_reg = ops[0], ops[1], ops[0], None
        elif len(ops) == 3:                                     # dst(reg) = op(src1(vvvv), src2(rm))
            destination, reg_op, src1, rm_op, result_reg = ops[0], ops[0], ops[1], ops[2], reg
        elif len(ops) == 2:
            destination, reg_op, rm_op, result_reg = ops[0], ops[0], ops[1], reg
        else:
            raise decoded.fail("operand form not carried out")
        self.inputs: list[tuple[int, int]] = []                # (guest zmm, calculator zmm) copied in, in order
        self.input_operands: list = []                          # the operand each input is (wide.py slices by it)
        self.flush_when, *self.flush = FLUSHED.get(decoded.mnemonic, (0, 0, 0))
        self.general = sorted({op.write_id for op in ops if isinstance(op, GeneralRegister)})
        self.memory = rm_op if isinstance(rm_op, Memory) else None
        if isinstance(reg_op, VectorRegister):
            self.inputs.append((_ZMM[reg], _ZMM[reg]))
            self.input_operands.append(reg_op)
        if isinstance(rm_op, VectorRegister):
            if src1 is not None and rm == reg and vvvv != reg:  # src1 would overwrite src2: give src2 another register
                moved = next(i for i in range(16) if i not in (reg, vvvv))
                self.inputs.append((_ZMM[rm], _ZMM[moved]))
                rm = moved
            else:
                self.inputs.append((_ZMM[rm], _ZMM[rm]))
            self.input_operands.append(rm_op)
        if src1 is not None:
            self.inputs.append((_ZMM[vvvv], _ZMM[reg]))       # src1 into the destination, where SSE reads it
            self.input_operands.append(src1)
        if decoded.mnemonic in FLAGS_ONLY:
            self.result = ("flags", None, None)
        elif isinstance(destination, VectorRegister):
            self.result = ("vector", _ZMM[result_reg], destination)
        elif isinstance(destination, GeneralRegister):
            self.result = ("general", None, destination)
        else:
            self.result = ("memory", None, destination)
        if mod == 3:
            immediate = rest[2:]
            addressing = bytes([0xC0 | (reg & 7) << 3 | (rm & 7)])
            rex = 0x40 | w << 3 | (reg >> 3) << 2 | rm >> 3
        else:                                                   # [rip + disp32] -> the data page
            immediate = rest[1 + _modrm_length(rest[1:]):]
            rex = 0x40 | w << 3 | (reg >> 3) << 2
        prefix = _LEGACY_PREFIX[pp] + (bytes([rex]) if rex != 0x40 else b"") + _MAP_ESCAPE[mapping]
        if mod != 3:
            length = len(prefix) + 2 + 4 + len(immediate)
            addressing = bytes([(reg & 7) << 3 | 5]) + (DATA - (CODE + length)).to_bytes(4, "little", signed=True)
        self.code = prefix + bytes([opcode]) + addressing + immediate

    def run(self, vf: VectorFile, insn: Instruction) -> None:
        guest, calculator = vf.uc, shared_calculator()
        uc = calculator.uc
        for source, target in self.inputs:
            reg_write_bytes(uc, target, reg_read_bytes(guest, source, 16))
        for reg in self.general:
            reg_write64(uc, reg, reg_read64(guest, reg))
        mxcsr = reg_read64(guest, MXCSR)
        reg_write64(uc, MXCSR, mxcsr)
        memory, ea = self.memory, None
        if memory is not None:
            ea = memory.address(guest)
            mem_write(uc, DATA, memory.load(vf, insn, ea))
        calculator.run(self.code)
        kind, register, destination = self.result
        if kind == "vector":
            data = reg_read_bytes(uc, register, 16)
            if mxcsr & self.flush_when:
                data = flush_tiny(data, *self.flush)
            vf.write_bytes(destination.zmm, data)
        elif kind == "general":
            reg_write64(guest, destination.write_id, reg_read64(uc, destination.write_id))
        elif kind == "memory":
            destination.store(vf, insn, mem_read(uc, DATA, destination.nbytes), ea)
        else:
            reg_write64(guest, EFLAGS, reg_read64(uc, EFLAGS) & 0x8D5 | reg_read64(guest, EFLAGS) & ~0x8D5)


def _modrm_length(bytes_: bytes) -> int:
    """Bytes taken by ModRM, SIB and displacement at the start of `bytes_` (memory forms only)."""
    modrm = bytes_[0]
    mod, rm = modrm >> 6, modrm & 7
    length = 1
    base = None
    if rm == 4:
        base = bytes_[1] & 7
        length += 1
    if mod == 1:
        length += 1
    elif mod == 2 or (mod == 0 and (rm == 5 or base == 5)):
        length += 4
    return length

