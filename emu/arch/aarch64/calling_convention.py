"""The AAPCS64 calling convention, for integer and pointer arguments.

Arguments 1-8 are in x0-x7; the rest are on the stack at [sp], [sp+8], ... at function
entry (one 8-byte slot each for the integer and pointer types the loaders take, as on
Linux; Apple's variant packs them tighter).  The result is in x0, the return address
in x30 (the link register), and sp must be 16-byte aligned.  A variadic call passes its
doubles in d0-d7 (Linux; Apple puts every variadic argument on the stack); what does not fit
goes on the stack with the integers, in order.
"""
from unicorn import arm64_const as arm64

from ..convention import RegisterConvention

AAPCS64 = RegisterConvention(
    arg_regs=tuple(getattr(arm64, f"UC_ARM64_REG_X{n}") for n in range(8)),
    return_reg=arm64.UC_ARM64_REG_X0,
    stack_pointer=arm64.UC_ARM64_REG_SP,
    program_counter=arm64.UC_ARM64_REG_PC,
    link_register=arm64.UC_ARM64_REG_X30,
    float_arg_regs=tuple(getattr(arm64, f"UC_ARM64_REG_D{n}") for n in range(8)),
)
