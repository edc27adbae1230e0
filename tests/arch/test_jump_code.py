"""Each CPU's jump_code, run: from near and from far, it reaches its target and keeps the argument registers."""
from __future__ import annotations

import pytest
from unicorn import UC_PROT_ALL
from unicorn import arm64_const as arm64
from unicorn import x86_const as x86

from emu.arch import architecture

TARGET = 0x0010_0000
ARGUMENT = {"x86_64": (x86.UC_X86_REG_RDI, x86.UC_X86_REG_RIP), "aarch64": (arm64.UC_ARM64_REG_X0, arm64.UC_ARM64_REG_PC)}


@pytest.mark.parametrize("arch, address, size", [
    ("x86_64", 0x0400_0000, 5), ("x86_64", 0x7F00_0000_0000, 13),          # jmp rel32; movabs r11 + jmp r11
    ("aarch64", 0x0400_0000, 4), ("aarch64", 0x1_0000_0000, 16),           # b; ldr x16 + br x16 + the address
])
def test_the_jump_reaches_its_target(arch, address, size):
    cpu = architecture(arch).cpu
    code = cpu.jump_code(address, TARGET)
    assert len(code) == size
    uc = cpu.create()
    for page in (address, TARGET):
        uc.mem_map(page, 0x1000, UC_PROT_ALL)
    uc.mem_write(address, code)
    argument, pc = ARGUMENT[arch]
    uc.reg_write(argument, 0x5EED)
    uc.emu_start(address, TARGET, count=4)
    assert uc.reg_read(pc) == TARGET and uc.reg_read(argument) == 0x5EED
