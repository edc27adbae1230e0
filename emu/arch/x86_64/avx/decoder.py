"""Turn one instruction's bytes into an Instruction: typed operands and the handler that carries it out."""
from __future__ import annotations

from capstone import CS_ARCH_X86, CS_MODE_64, Cs

from . import avx512, sse_twin
from .errors import UnsupportedInstruction
from .fast_paths import vector_move
from .operands import Instruction, operand
from .python_forms import BUILDERS
from .semantics import HANDLERS


class Decoder:
    def __init__(self) -> None:
        self.capstone = Cs(CS_ARCH_X86, CS_MODE_64)
        self.capstone.detail = True

    def decode(self, raw: bytes, address: int) -> Instruction:
        """The instruction at the start of `raw`; raises UnsupportedInstruction naming it when it cannot be carried out."""
        insn = next(self.capstone.disasm(raw, address, 1), None)
        if insn is None:
            raise UnsupportedInstruction(address, 0, "(bad)", raw.hex())
        if insn.mnemonic[0] == "k" or raw[0] != 0xC5 and raw[0] != 0xC4:     # mask and EVEX forms: avx512.py
            decoded = avx512.decode(insn)
            if decoded is not None:
                return decoded
        ops = tuple(operand(op, insn.address + insn.size) for op in insn.operands)
        handler = HANDLERS.get(insn.mnemonic)
        decoded = Instruction(insn.address, insn.size, insn.mnemonic, insn.op_str, ops, handler, bytes(insn.bytes))
        build = BUILDERS.get(insn.mnemonic) if handler is None else None
        if handler is None and build is None:
            handler = sse_twin.handler(insn, decoded)      # raises UnsupportedInstruction when there is none
            decoded = decoded._replace(handler=handler)
        if "{" in insn.op_str:
            raise decoded.fail("EVEX masking, broadcast or rounding is not supported")
        if None in ops:
            raise decoded.fail("operand kind not supported")
        if build is not None:
            decoded = decoded._replace(handler=build(decoded))
        move = vector_move(decoded)
        return decoded if move is None else decoded._replace(handler=move)
