"""The AAPCS64 calling convention, for integer and pointer arguments.

Arguments 1-8 are in x0-x7; the rest are on the stack at [sp], [sp+8], ... at function
entry (one 8-byte slot each for the integer and pointer types the loaders take, as on
Linux; Apple's variant packs them tighter).  The result is in x0, the return address
in x30 (the link register), and sp must be 16-byte aligned.
"""
from __future__ import annotations

import struct

from unicorn import Uc
from unicorn import arm64_const as arm64

ARG_REGS = tuple(getattr(arm64, f"UC_ARM64_REG_X{n}") for n in range(8))
MASK64 = 0xFFFFFFFFFFFFFFFF


class Aapcs64:
    def read_args(self, uc: Uc, count: int) -> list[int]:
        args = [uc.reg_read(reg) for reg in ARG_REGS[:count]]
        if count > len(ARG_REGS):
            sp = uc.reg_read(arm64.UC_ARM64_REG_SP)
            extra = count - len(ARG_REGS)
            args.extend(struct.unpack(f"<{extra}Q", uc.mem_read(sp, 8 * extra)))
        return args

    def return_address(self, uc: Uc) -> int:
        return uc.reg_read(arm64.UC_ARM64_REG_X30)

    def set_return(self, uc: Uc, value: int) -> None:
        uc.reg_write(arm64.UC_ARM64_REG_X0, value & MASK64)

    def return_value(self, uc: Uc) -> int:
        return uc.reg_read(arm64.UC_ARM64_REG_X0)

    def enter(self, uc: Uc, function: int, args: list[int], stack_top: int, return_to: int) -> None:
        stack_args = args[len(ARG_REGS):]
        sp = (stack_top - 8 * len(stack_args)) & ~0xF       # no pushed return address: sp itself is 16-aligned
        if stack_args:
            uc.mem_write(sp, struct.pack(f"<{len(stack_args)}Q", *(a & MASK64 for a in stack_args)))
        for reg, value in zip(ARG_REGS, args):
            uc.reg_write(reg, value & MASK64)
        uc.reg_write(arm64.UC_ARM64_REG_X30, return_to)
        uc.reg_write(arm64.UC_ARM64_REG_SP, sp)
        uc.reg_write(arm64.UC_ARM64_REG_PC, function)
