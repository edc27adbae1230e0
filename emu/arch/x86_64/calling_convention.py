"""The System V AMD64 calling convention, for integer and pointer arguments.

Arguments 1-6 are in rdi, rsi, rdx, rcx, r8, r9 (rcx, not the syscall register r10);
the rest are on the stack above the return address.  A function is entered with
rsp = 8 (mod 16), the return address at [rsp]; the result is in rax.  A variadic call
passes its doubles in xmm0-7 and says in %al how many vector registers it used (an upper
bound); what does not fit goes on the stack with the integers, in order.
"""
from unicorn import x86_const as x86

from ..convention import RegisterConvention

SYSTEM_V_AMD64 = RegisterConvention(
    arg_regs=(x86.UC_X86_REG_RDI, x86.UC_X86_REG_RSI, x86.UC_X86_REG_RDX, x86.UC_X86_REG_RCX,
              x86.UC_X86_REG_R8, x86.UC_X86_REG_R9),
    return_reg=x86.UC_X86_REG_RAX,
    stack_pointer=x86.UC_X86_REG_RSP,
    program_counter=x86.UC_X86_REG_RIP,
    link_register=None,
    float_arg_regs=tuple(getattr(x86, f"UC_X86_REG_XMM{n}") for n in range(8)),
    vector_count=(x86.UC_X86_REG_RAX, "%al"),
)
