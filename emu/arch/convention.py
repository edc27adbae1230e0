"""Calling conventions as data: which registers, where the stack arguments start.

Both conventions emu needs pass integer and pointer arguments in registers, then in
8-byte stack slots, and return in one register; they differ only in register names and
in where the return address lives (pushed on the stack, or in a link register).  A
variadic call's doubles go in vector registers, then into the same stack area, in order
(x86-64 adds %al, an upper bound on the vector registers used).  An architecture declares
those facts; these classes do the reading and writing.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from unicorn import Uc

from ..emulator.unicorn_c import RegisterBatch, mem_read, mem_write, reg_read64, reg_write64
from ..binary.memory_map import FRAME_SP
from ..errors import StubFailure

MASK64 = 0xFFFFFFFFFFFFFFFF


@dataclass(frozen=True)
class RegisterConvention:
    arg_regs: tuple[int, ...]
    return_reg: int
    stack_pointer: int
    program_counter: int
    link_register: int | None      # None: the call pushed the return address at [sp]
    float_arg_regs: tuple[int, ...] = ()     # a variadic call's doubles, in order (their low 64 bits)
    vector_count: tuple[int, str] | None = None   # the register (and its name) whose low byte bounds the vector registers used

    def __post_init__(self) -> None:
        object.__setattr__(self, "_entry_writes", {})      # register-argument count -> RegisterBatch
        object.__setattr__(self, "_exit_state", RegisterBatch((self.program_counter, self.return_reg)))

    def frame_args(self, words: tuple[int, ...], count: int, uc: Uc) -> tuple[int, ...]:
        """The first `count` integer arguments of a stub call, from its frame (emu.binary.memory_map):
        the registers the entry path stored, then the stack slots above the saved stack pointer."""
        regs = len(self.arg_regs)
        if count <= regs:
            return words[:count]
        first = words[FRAME_SP] + (0 if self.link_register is not None else 8)
        return words[:regs] + struct.unpack(f"<{count - regs}Q", mem_read(uc, first, 8 * (count - regs)))

    def variadic(self, uc: Uc, fixed: int) -> VariadicArgs:
        """The variadic arguments of the call being answered, after `fixed` integer ones, read at its entry."""
        return VariadicArgs(self, uc, fixed)

    def read_args(self, uc: Uc, count: int) -> list[int]:
        regs = self.arg_regs
        args = [reg_read64(uc, reg) for reg in regs[:count]]
        if count > len(regs):
            sp = reg_read64(uc, self.stack_pointer)
            first = sp if self.link_register is not None else sp + 8
            extra = count - len(regs)
            args.extend(struct.unpack(f"<{extra}Q", mem_read(uc, first, 8 * extra)))
        return args

    def return_address(self, uc: Uc) -> int:
        if self.link_register is not None:
            return reg_read64(uc, self.link_register)
        return struct.unpack("<Q", mem_read(uc, reg_read64(uc, self.stack_pointer), 8))[0]

    def set_return(self, uc: Uc, value: int) -> None:
        reg_write64(uc, self.return_reg, value & MASK64)

    def return_value(self, uc: Uc) -> int:
        return reg_read64(uc, self.return_reg)

    def exit_state(self, uc: Uc) -> tuple[int, int]:
        """The program counter and the return register, in one read, once an entry stops."""
        pc, value = self._exit_state.read(uc)
        return pc, value

    def enter(self, uc: Uc, function: int, args: list[int], stack_top: int, return_to: int) -> None:
        """Registers and stack as right after a call: stack arguments 16-aligned, then the return address."""
        stack_args = args[len(self.arg_regs):]
        sp = (stack_top - 8 * len(stack_args)) & ~0xF
        if stack_args:
            mem_write(uc, sp, struct.pack(f"<{len(stack_args)}Q", *(a & MASK64 for a in stack_args)))
        if self.link_register is None:
            sp -= 8                                  # x86-64: rsp = 8 (mod 16) at entry
            mem_write(uc, sp, struct.pack("<Q", return_to))
        in_registers = min(len(args), len(self.arg_regs))
        batch = self._entry_writes.get(in_registers)
        if batch is None:
            link = (self.link_register,) if self.link_register is not None else ()
            batch = self._entry_writes[in_registers] = RegisterBatch(self.arg_regs[:in_registers] + (self.stack_pointer,) + link)
        values = [*args[:in_registers], sp]          # the program counter: emu_start sets it to `function`
        if self.link_register is not None:
            values.append(return_to)
        batch.write(uc, values)


class VariadicArgs:
    """The variadic arguments after `fixed` integer ones, read in order as a format asks.

    Integers take the argument registers the fixed ones left, doubles the vector registers; past
    either register file, each argument takes the next 8-byte slot of the one stack area both
    spill into (the System V AMD64 psABI's variable argument lists; AAPCS64's parameter
    passing rules, as Linux applies them to variadic calls).
    """

    def __init__(self, convention: RegisterConvention, uc: Uc, fixed: int):
        self.uc = uc
        self.int_regs, self.fp_regs = convention.arg_regs, convention.float_arg_regs
        sp = reg_read64(uc, convention.stack_pointer)
        self.stack = sp if convention.link_register is not None else sp + 8    # x86-64: the return address sits at [rsp]
        self.next_int, self.next_fp = fixed, 0
        # x86-64: %al is an upper bound on the vector registers used; a caller that says 0 passed no double there
        count = convention.vector_count
        self.fp_limit = len(self.fp_regs) if count is None else min(len(self.fp_regs), reg_read64(uc, count[0]) & 0xFF)
        self.fp_limit_name = count[1] if count is not None else ""

    def _stack_word(self) -> bytes:
        word = mem_read(self.uc, self.stack, 8)
        self.stack += 8
        return word

    def integer(self) -> int:
        if self.next_int < len(self.int_regs):
            self.next_int += 1
            return reg_read64(self.uc, self.int_regs[self.next_int - 1])
        return struct.unpack("<Q", self._stack_word())[0]

    def double(self) -> float:
        if self.next_fp < len(self.fp_regs):
            self.next_fp += 1
            if self.next_fp > self.fp_limit:
                raise StubFailure(f"the format reads double {self.next_fp} but {self.fp_limit_name} says only {self.fp_limit} "
                                  "vector register(s) carry arguments")
            raw = self.uc.reg_read(self.fp_regs[self.next_fp - 1])      # 128 bits on x86-64: not reg_read64
            return struct.unpack("<d", (raw & MASK64).to_bytes(8, "little"))[0]
        return struct.unpack("<d", self._stack_word())[0]
