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

from ..fast_uc import HostBacked, RegisterBatch, mem_read, mem_write, reg_read64, reg_write64
from ..memory_map import FRAME_ENTRY_ARGS, FRAME_SP

# the entry words: 8 registers, sp, the address, the link, the result and the done word (cleared)
_PACK_ENTRY = struct.Struct("<13Q").pack_into

MASK64 = 0xFFFFFFFFFFFFFFFF


@dataclass(frozen=True)
class RegisterConvention:
    arg_regs: tuple[int, ...]
    return_reg: int
    stack_pointer: int
    program_counter: int
    link_register: int | None      # None: the call pushed the return address at [sp]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_entry_writes", {})      # register-argument count -> RegisterBatch (enter)

    def frame_args(self, words: tuple[int, ...], count: int, uc: Uc) -> tuple[int, ...]:
        """The first `count` integer arguments of a stub call, from its frame (emu.memory_map):
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

    def stack_at_entry(self, args: list[int], stack_top: int, return_to: int) -> tuple[int, bytes]:
        """The stack pointer right after a call, and the bytes from there: stack arguments 16-aligned, below
        them the return address on x86-64 (rsp = 8 mod 16 at entry)."""
        stack_args = [a & MASK64 for a in args[len(self.arg_regs):]]
        sp = (stack_top - 8 * len(stack_args)) & ~0xF
        if self.link_register is None:
            return sp - 8, struct.pack(f"<{1 + len(stack_args)}Q", return_to, *stack_args)
        return sp, struct.pack(f"<{len(stack_args)}Q", *stack_args)

    def launch(self, frame: memoryview, stack: HostBacked, function: int, args: list[int], stack_top: int, return_to: int) -> None:
        """Write what the CPU's launch path loads (emu.memory_map): the frame's entry words and the stack."""
        sp, on_stack = self.stack_at_entry(args, stack_top, return_to)
        stack.write(sp, on_stack)
        registers = [a & MASK64 for a in args[:len(self.arg_regs)]]
        _PACK_ENTRY(frame, 8 * FRAME_ENTRY_ARGS, *registers, *[0] * (8 - len(registers)), sp, function, return_to, 0, 0)

    def enter(self, uc: Uc, function: int, args: list[int], stack_top: int, return_to: int) -> None:
        """Registers and stack as right after a call: stack arguments 16-aligned, then the return address."""
        sp, on_stack = self.stack_at_entry(args, stack_top, return_to)
        if on_stack:
            mem_write(uc, sp, on_stack)
        in_registers = min(len(args), len(self.arg_regs))
        batch = self._entry_writes.get(in_registers)
        if batch is None:
            link = (self.link_register,) if self.link_register is not None else ()
            batch = self._entry_writes[in_registers] = RegisterBatch(
                self.arg_regs[:in_registers] + (self.stack_pointer, self.program_counter) + link)
        values = list(args[:in_registers]) + [sp, function]
        if self.link_register is not None:
            values.append(return_to)
        batch.write(uc, values)
