"""A variadic call's further arguments, read by each calling convention (RegisterConvention.variadic).

Integers take the argument registers the fixed ones left, doubles the vector registers; once a
register file is used up, each further argument takes the next 8-byte stack slot, integers and
doubles in the one order they were passed: above the return address on x86-64 (System V AMD64),
at sp on AArch64 (AAPCS64 as Linux applies it).  x86-64's %al bounds the vector registers read.
"""
from __future__ import annotations

import struct

import pytest
from unicorn import UC_ARCH_ARM64, UC_ARCH_X86, UC_MODE_64, UC_MODE_ARM, Uc
from unicorn import arm64_const as arm64
from unicorn import x86_const as x86

from emu.arch.aarch64.calling_convention import AAPCS64
from emu.arch.x86_64.calling_convention import SYSTEM_V_AMD64
from emu.errors import StubFailure

STACK, RETURN = 0x7F000000, 0x401234
INTS = [0x1000 + i for i in range(8)]          # register i holds 0x1000 + i
DOUBLES = [0.5 + i for i in range(8)]          # vector register i holds 0.5 + i
SPILLED = [0xAAAA, 2.25, 0xBBBB, -7.0]         # the stack's words past both register files, in order


def _bits(value: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def _stack_words(values) -> bytes:
    return b"".join(struct.pack("<d", v) if isinstance(v, float) else struct.pack("<Q", v) for v in values)


def _x86(al: int) -> Uc:
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(STACK, 0x10000)
    sp = STACK + 0x8000
    uc.mem_write(sp, struct.pack("<Q", RETURN) + _stack_words(SPILLED))     # the call pushed its return address
    uc.reg_write(x86.UC_X86_REG_RSP, sp)
    for reg, value in zip(SYSTEM_V_AMD64.arg_regs, INTS):
        uc.reg_write(reg, value)
    for reg, value in zip(SYSTEM_V_AMD64.float_arg_regs, DOUBLES):
        uc.reg_write(reg, _bits(value) | 0xDEAD << 64)                     # the upper half is not the argument's
    uc.reg_write(x86.UC_X86_REG_RAX, 0x1200 | al)                           # only %al counts
    return uc


def _aarch64() -> Uc:
    uc = Uc(UC_ARCH_ARM64, UC_MODE_ARM)
    uc.mem_map(STACK, 0x10000)
    sp = STACK + 0x8000
    uc.mem_write(sp, _stack_words(SPILLED))                                 # the return address is in x30
    uc.reg_write(arm64.UC_ARM64_REG_SP, sp)
    uc.reg_write(arm64.UC_ARM64_REG_X30, RETURN)
    for reg, value in zip(AAPCS64.arg_regs, INTS):
        uc.reg_write(reg, value)
    for reg, value in zip(AAPCS64.float_arg_regs, DOUBLES):
        uc.reg_write(reg, _bits(value))
    return uc


CASES = {"x86_64": (SYSTEM_V_AMD64, lambda: _x86(al=8), 6), "aarch64": (AAPCS64, _aarch64, 8)}


@pytest.mark.parametrize("arch", sorted(CASES))
def test_registers_first_then_one_stack_area_in_order(arch):
    convention, make, int_regs = CASES[arch]
    args = convention.variadic(make(), fixed=2)                # printf(fmt, x, ...) after two fixed arguments
    assert [args.integer() for _ in range(int_regs - 2)] == INTS[2:int_regs]
    assert [args.double() for _ in range(8)] == DOUBLES
    assert [args.integer(), args.double(), args.integer(), args.double()] == SPILLED


@pytest.mark.parametrize("arch", sorted(CASES))
def test_doubles_spill_past_the_vector_registers_before_the_integers_do(arch):
    convention, make, _ = CASES[arch]
    args = convention.variadic(make(), fixed=1)
    assert [args.double() for _ in range(8)] == DOUBLES
    assert args.double() == struct.unpack("<d", struct.pack("<Q", SPILLED[0]))[0]    # the first stack slot, as a double
    assert args.integer() == INTS[1]                                                   # integers still in registers


def test_x86_64_al_bounds_the_vector_registers_read():
    args = SYSTEM_V_AMD64.variadic(_x86(al=2), fixed=1)
    assert [args.double(), args.double()] == DOUBLES[:2]
    with pytest.raises(StubFailure, match="reads double 3 but %al says only 2 vector register"):
        args.double()
