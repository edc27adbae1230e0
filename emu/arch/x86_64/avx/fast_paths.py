"""Handlers made for one decoded full-width move between a vector register and memory.

The loaders' ymm copies are most of the sites a run executes.  The generic path turns
the bytes into an integer and back and looks the address registers up on every
execution; these keep the bytes as bytes and compute the address with what the
operand prepared once.  Same semantics, exceptions and checks as semantics.move and
semantics.move_aligned.
"""
from __future__ import annotations

from unicorn import UcError

from ....emulator.unicorn_c import mem_read, mem_write, reg_read_bytes
from .errors import MemoryFault, MisalignedAccess
from .operands import Instruction, Memory, VectorRegister
from .semantics import Handler, move, move_aligned
from .vector_file import VectorFile


def vector_move(insn: Instruction) -> Handler | None:
    """A specialised handler for `insn`, or None when it is not a full-width register<->memory move."""
    if insn.handler not in (move, move_aligned) or len(insn.ops) != 2:
        return None
    dst, src = insn.ops
    aligned = insn.handler is move_aligned
    if isinstance(dst, VectorRegister) and isinstance(src, Memory) and src.nbytes == dst.nbytes:
        return _load(dst.zmm, src, aligned)
    if isinstance(dst, Memory) and isinstance(src, VectorRegister) and dst.nbytes == src.nbytes:
        return _store(src.zmm, dst, aligned)
    return None


def _load(zmm: int, src: Memory, aligned: bool) -> Handler:
    address, n = src.address, src.nbytes

    def load(vf: VectorFile, insn: Instruction) -> None:
        uc = vf.uc
        ea = address(uc)
        if aligned and ea % n:
            raise MisalignedAccess(insn.address, insn.size, insn.mnemonic, insn.op_str, ea, n)
        if vf.observer is not None:
            vf.observer(ea, n)
        try:
            data = mem_read(uc, ea, n)
        except UcError as err:
            raise MemoryFault(insn.address, insn.size, insn.mnemonic, insn.op_str, ea, n, err) from None
        vf.write_bytes(zmm, data)                  # VEX/EVEX zero the register above the loaded bytes
    return load


def _store(zmm: int, dst: Memory, aligned: bool) -> Handler:
    address, n = dst.address, dst.nbytes

    def store(vf: VectorFile, insn: Instruction) -> None:
        uc = vf.uc
        data = reg_read_bytes(uc, zmm, n)
        ea = address(uc)
        if aligned and ea % n:
            raise MisalignedAccess(insn.address, insn.size, insn.mnemonic, insn.op_str, ea, n)
        try:
            mem_write(uc, ea, data)
        except UcError as err:
            raise MemoryFault(insn.address, insn.size, insn.mnemonic, insn.op_str, ea, n, err) from None
    return store
