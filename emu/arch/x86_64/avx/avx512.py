"""The AVX-512 forms LLVM emits in DSL host code for AVX-512 CPUs, carried out in Python.

Exports built for Sapphire Rapids, Skylake-SP or Zen 4 (or without --host-target on one)
use, besides the zmm moves semantics.py carries out, a few instructions that have no
VEX form (tests/data/avx512/README.md lists what each real export holds):
- integer compares into a mask register: vpcmpeq/gt d/q and vpcmp[u]d/q with a predicate
  (LLVM's floor division of a vector of int32 extents: `vpcmpneqd k0, ...; vpcmpgtd k1, ...`);
- mask logic (kand/kandn/kor/kxnor/kxor/knot b/w/d/q), kunpckbw/wd/dq (flash-attn-4's forward kernel
  built for TVM-FFI on an AVX-512 CPU) and kmov from a mask to a general register;
- vpmovm2d/q: a mask to a vector of all-ones/zero elements;
- vpadd/vpsub d/q with an embedded broadcast memory operand (`{1to4}`);
- the unsigned conversions vcvtusi2ss/sd and vcvttss2usi/vcvttsd2usi (unsigned_convert.py).
Unicorn 2.1.4 has no mask registers (it ignores writes to k0-k7 and reads 0), so they live
in VectorFile.masks.  Anything else with a mask (a write mask `{k1}`, zeroing `{z}`, a
broadcast on another instruction, embedded rounding) stays refused: no export uses it.
Every form here is checked against an AVX-512 CPU: tests/data/avx512/make_cases.py.
"""
from __future__ import annotations

import operator
from typing import Callable

from capstone import x86_const as CX

from .operands import GeneralRegister, Immediate, Instruction, Memory, VectorRegister, operand
from .unsigned_convert import CONVERSIONS
from .vector_file import VectorFile

_PREFIXES = (0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x67)
_MASK_IDS = {getattr(CX, f"X86_REG_K{i}"): i for i in range(8)}
_WIDTH = {"b": 8, "w": 16, "d": 32, "q": 64}
_SIGNED_PREDICATES: tuple[Callable[[int, int], bool], ...] = (
    operator.eq, operator.lt, operator.le, lambda a, b: False,
    operator.ne, operator.ge, operator.gt, lambda a, b: True)


class MaskRegister:
    """k0-k7, as the unit keeps them (VectorFile.masks); a write keeps the low 64 bits."""

    __slots__ = ("index", "nbytes")

    def __init__(self, index: int) -> None:
        self.index, self.nbytes = index, 8

    def read(self, vf: VectorFile, insn: Instruction) -> int:
        return vf.masks[self.index]

    def write(self, vf: VectorFile, insn: Instruction, value: int) -> None:
        vf.masks[self.index] = value & 0xFFFF_FFFF_FFFF_FFFF


def _operand(op, next_address: int):
    if op.type == CX.X86_OP_REG and op.reg in _MASK_IDS:
        return MaskRegister(_MASK_IDS[op.reg])
    return operand(op, next_address)


def _fields(raw: bytes) -> tuple[int, int, int, int, int] | None:
    """(map, opcode, W, aaa, b) of an EVEX instruction, or None for another encoding."""
    i = 0
    while raw[i] in _PREFIXES:
        i += 1
    if raw[i] != 0x62:
        return None
    p0, p1, p2 = raw[i + 1], raw[i + 2], raw[i + 3]
    return p0 & 7, raw[i + 4], p1 >> 7, p2 & 7, p2 >> 4 & 1


# ---------------------------------------------------------------- handlers, made per decoded form
def _compare(esize: int, predicate: int, signed: bool):
    """dst k = one bit per element of src1, src2: predicate(src1[i], src2[i]); bits above the count 0."""
    bits = 8 * esize
    mask, sign, test = (1 << bits) - 1, 1 << (bits - 1), _SIGNED_PREDICATES[predicate]

    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, a, b = insn.ops
        x, y, out = a.read(vf, insn), b.read(vf, insn), 0
        for i in range(8 * a.nbytes // bits):
            p, q = (x >> (bits * i)) & mask, (y >> (bits * i)) & mask
            if signed:
                p, q = p - ((p & sign) << 1), q - ((q & sign) << 1)
            if test(p, q):
                out |= 1 << i
        dst.write(vf, insn, out)
    return handler


def _mask_logic(name: str, width: int):
    full = (1 << width) - 1
    function = {"kand": operator.and_, "kor": operator.or_, "kxor": operator.xor,
                "kandn": lambda a, b: ~a & b, "kxnor": lambda a, b: ~(a ^ b)}[name]

    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, a, b = insn.ops
        dst.write(vf, insn, function(a.read(vf, insn), b.read(vf, insn)) & full)
    return handler


def _mask_not(width: int):
    full = (1 << width) - 1

    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, src = insn.ops
        dst.write(vf, insn, ~src.read(vf, insn) & full)
    return handler


def _mask_unpack(half: int):
    """kunpckbw/wd/dq dst, src1, src2: the low `half` bits of src2, then those of src1 above them; the rest 0."""
    low = (1 << half) - 1

    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, a, b = insn.ops
        dst.write(vf, insn, (a.read(vf, insn) & low) << half | b.read(vf, insn) & low)
    return handler


def _mask_to_general(width: int):
    """kmov r32/r64, k: the low `width` bits, zero-extended."""
    full = (1 << width) - 1

    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, src = insn.ops
        dst.write(vf, insn, src.read(vf, insn) & full)
    return handler


def _mask_to_vector(esize: int):
    """vpmovm2d/q: element i all ones where mask bit i is set, else zero."""
    ones = (1 << (8 * esize)) - 1

    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, src = insn.ops
        k, out = src.read(vf, insn), 0
        for i in range(dst.nbytes // esize):
            if k >> i & 1:
                out |= ones << (8 * esize * i)
        dst.write(vf, insn, out)
    return handler


def _broadcast_arithmetic(esize: int, subtract: bool):
    """vpadd/vpsub d/q dst, src1, m{1toN}: each element of src1 with the one memory element, modulo 2^bits."""
    bits = 8 * esize
    mask = (1 << bits) - 1

    def handler(vf: VectorFile, insn: Instruction) -> None:
        dst, a, m = insn.ops
        x, y, out = a.read(vf, insn), m.read(vf, insn) & mask, 0
        for i in range(dst.nbytes // esize):
            e = (x >> (bits * i)) & mask
            out |= ((e - y if subtract else e + y) & mask) << (bits * i)
        dst.write(vf, insn, out)
    return handler


# ---------------------------------------------------------------- decoding
_COMPARE_OPCODES = {(1, 0x76): ("eq", 4), (1, 0x66): ("gt", 4), (2, 0x29): ("eq", 8), (2, 0x37): ("gt", 8)}
_MASK_LOGIC = ("kand", "kandn", "kor", "kxnor", "kxor")


def decode(insn) -> Instruction | None:
    """The Instruction for a capstone instruction this module carries out; None when it is not one of them.

    Raises UnsupportedInstruction for a mask-register or broadcast form of them it does not
    carry out (write masks, zeroing, other operand kinds).
    """
    name, raw = insn.mnemonic, bytes(insn.bytes)
    fields = _fields(raw)
    if name[0] == "k":
        make = _mask_form(name)
    elif fields is None:
        return None
    else:
        make = _evex_form(name, raw, fields)
    if make is None:
        return None
    ops = tuple(_operand(op, insn.address + insn.size) for op in insn.operands)
    decoded = Instruction(insn.address, insn.size, name, insn.op_str, ops, None, raw)
    if fields is not None and fields[3]:
        raise decoded.fail("EVEX write masking is not supported")
    if isinstance(make, str):
        raise decoded.fail(make)
    handler, kinds = make
    if len(ops) == len(kinds) + 1 and isinstance(ops[-1], Immediate) and name.startswith("vpcmp"):
        ops = ops[:-1]                            # the predicate, already in the handler (capstone lists 3 and 7)
        decoded = decoded._replace(ops=ops)
    if len(ops) != len(kinds) or not all(isinstance(op, kind) for op, kind in zip(ops, kinds)):
        raise decoded.fail("operand form not carried out")
    return decoded._replace(handler=handler)


_K, _V, _G, _M = MaskRegister, VectorRegister, GeneralRegister, Memory


def _mask_form(name: str):
    """(handler, operand kinds) of a VEX-encoded mask instruction carried out, or None."""
    if name in ("kunpckbw", "kunpckwd", "kunpckdq"):
        return _mask_unpack(_WIDTH[name[-2]]), (_K, _K, _K)
    base, width = name[:-1], _WIDTH.get(name[-1])
    if width is None:
        return None
    if base in _MASK_LOGIC:
        return _mask_logic(base, width), (_K, _K, _K)
    if base == "knot":
        return _mask_not(width), (_K, _K)
    if base == "kmov":
        return _mask_to_general(width), (_G, _K)      # kmov k, r/m and k, k: not emitted, refused by the kinds
    return None


def _evex_form(name: str, raw: bytes, fields):
    """(handler, operand kinds) of an EVEX instruction carried out, or None (the other modules decide)."""
    mapping, opcode, w, _, broadcast = fields
    if name.startswith("vpcmp"):
        if (mapping, opcode) in _COMPARE_OPCODES:
            kind, esize = _COMPARE_OPCODES[mapping, opcode]
            handler = _compare(esize, 0 if kind == "eq" else 6, True)
        elif mapping == 3 and opcode in (0x1E, 0x1F):
            handler = _compare(8 if w else 4, raw[-1] & 7, opcode == 0x1F)
        else:
            return None
        if broadcast:
            return "a compare with an embedded broadcast is not supported"
        return handler, (_K, _V, (_V, _M))
    if name in CONVERSIONS:
        if broadcast:
            return "embedded rounding or {sae} is not supported"
        kinds = (_V, _V, (_G, _M)) if name.startswith("vcvtusi") else (_G, (_V, _M))
        return CONVERSIONS[name], kinds
    if name in ("vpmovm2d", "vpmovm2q"):
        return _mask_to_vector(4 if name[-1] == "d" else 8), (_V, _K)
    if broadcast and name in ("vpaddd", "vpaddq", "vpsubd", "vpsubq") and raw[raw.index(0x62) + 5] >> 6 != 3:
        return _broadcast_arithmetic(4 if name[-1] == "d" else 8, name.startswith("vpsub")), (_V, _V, _M)
    return None
