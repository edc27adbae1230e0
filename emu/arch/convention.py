"""Integer calling conventions as data: which registers, where the stack arguments start.

Both conventions emu needs pass integer and pointer arguments in registers, then in
8-byte stack slots, and return in one register; they differ only in register names and
in where the return address lives (pushed on the stack, or in a link register).  An
architecture declares those facts; this class does the reading and writing.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from unicorn import Uc

from ..emulator.unicorn_c import RegisterBatch, mem_read, mem_write, reg_read64, reg_write64
from ..binary.memory_map import FRAME_SP

MASK64 = 0xFFFFFFFFFFFFFFFF


@dataclass(frozen=True)
class RegisterConvention:
    arg_regs: tuple[int, ...]
    return_reg: int
    stack_pointer: int
    program_counter: int
    link_register: int | None      # None: the call pushed the return address at [sp]

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
