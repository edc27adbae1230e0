"""The System V AMD64 calling convention, for integer and pointer arguments.

Arguments 1-6 are in rdi, rsi, rdx, rcx, r8, r9 (rcx, not the syscall register r10);
the rest are on the stack above the return address.  A function is entered with
rsp = 8 (mod 16), the return address at [rsp].
"""
from __future__ import annotations

import struct

from unicorn import Uc
from unicorn.x86_const import (UC_X86_REG_R8, UC_X86_REG_R9, UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDI,
                               UC_X86_REG_RDX, UC_X86_REG_RIP, UC_X86_REG_RSI, UC_X86_REG_RSP)

ARG_REGS = (UC_X86_REG_RDI, UC_X86_REG_RSI, UC_X86_REG_RDX, UC_X86_REG_RCX, UC_X86_REG_R8, UC_X86_REG_R9)


class SystemVAmd64:
    def read_args(self, uc: Uc, count: int) -> list[int]:
        args = [uc.reg_read(reg) for reg in ARG_REGS[:count]]
        if count > len(ARG_REGS):
            rsp = uc.reg_read(UC_X86_REG_RSP)
            extra = count - len(ARG_REGS)
            args.extend(struct.unpack(f"<{extra}Q", uc.mem_read(rsp + 8, 8 * extra)))
        return args

    def return_address(self, uc: Uc) -> int:
        return struct.unpack("<Q", uc.mem_read(uc.reg_read(UC_X86_REG_RSP), 8))[0]

    def set_return(self, uc: Uc, value: int) -> None:
        uc.reg_write(UC_X86_REG_RAX, value & 0xFFFFFFFFFFFFFFFF)

    def return_value(self, uc: Uc) -> int:
        return uc.reg_read(UC_X86_REG_RAX)

    def enter(self, uc: Uc, function: int, args: list[int], stack_top: int, return_to: int) -> None:
        stack_args = args[len(ARG_REGS):]
        rsp = (stack_top - 8 * len(stack_args)) & ~0xF      # stack arguments start 16-aligned
        if stack_args:
            uc.mem_write(rsp, struct.pack(f"<{len(stack_args)}Q", *(a & 0xFFFFFFFFFFFFFFFF for a in stack_args)))
        rsp -= 8                                             # the pushed return address: rsp = 8 mod 16
        uc.mem_write(rsp, struct.pack("<Q", return_to))
        for reg, value in zip(ARG_REGS, args):
            uc.reg_write(reg, value & 0xFFFFFFFFFFFFFFFF)
        uc.reg_write(UC_X86_REG_RSP, rsp)
        uc.reg_write(UC_X86_REG_RIP, function)
