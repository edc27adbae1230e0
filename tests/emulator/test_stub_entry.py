"""The stub slots and their shared entry path, as each CPU runs them.

A call into a stub slot must reach the one hooked trap with every integer argument
register, the slot, the return address and the stack pointer stored in the stub frame
(emu.binary.memory_map), return the word at STUB_RESULT, and leave every register the caller
may rely on as it was.  Each test runs a caller compiled as a C compiler would (eight
register arguments on AArch64, six on x86-64, the rest on the stack) on a bare Unicorn
with only the CPU's own code for the window and the entry path.
"""
from __future__ import annotations

import struct

import pytest
from unicorn import UC_HOOK_CODE, UC_PROT_ALL, UcError
from unicorn import arm64_const as arm64
from unicorn import x86_const as x86

from emu.arch.aarch64.architecture import AARCH64
from emu.arch.x86_64.architecture import X86_64
from emu.binary.memory_map import (FRAME_RETURN, FRAME_SLOT, FRAME_SP, FRAME_WORDS, STUB_BASE, STUB_FRAME, STUB_RESULT, STUB_RETURN,
                            STUB_SIZE, stub_address)

CODE, STACK_TOP, SENTINEL = 0x0100_0000, 0x7F00_8000, 0x0300_0000
SLOT = stub_address(5)
ARGS = list(range(1, 11))


def x86_caller() -> bytes:
    """f(1, ..., 10) with r10 and r11 holding decoys and rbx/rbp/r12-r15 values the caller keeps."""
    body = b"\x48\x83\xec\x08"                                                        # sub rsp, 8: the ABI's alignment
    body += b"".join(b"\x48\xc7" + bytes((0xC0 | reg,)) + struct.pack("<i", value)    # mov r64, imm32 (rax..rdi)
                    for reg, value in ((7, 1), (6, 2), (2, 3), (1, 4), (3, 0x4B), (5, 0x4D)))
    body += b"".join(b"\x49\xc7" + bytes((0xC0 | reg,)) + struct.pack("<i", value)    # r8..r15
                     for reg, value in ((0, 5), (1, 6), (2, 0xDEAD), (3, 0xBEEF), (4, 0x12), (5, 0x13), (6, 0x14), (7, 0x15)))
    body += b"".join(b"\x6a" + bytes((value,)) for value in (10, 9, 8, 7))            # push 10 .. push 7
    call_at = CODE + len(body)
    body += b"\xe8" + struct.pack("<i", SLOT - (call_at + 5))
    return body + b"\x48\x83\xc4\x28\xc3"                                                 # add rsp, 40; ret


def a64_caller() -> bytes:
    """f(1, ..., 10): x0-x7, then 9 and 10 at [sp]; x19-x28 hold values the caller keeps."""
    words = [0xA9BF7BFD]                                                                  # stp x29, x30, [sp, #-16]!
    words += [0xD2800000 | value << 5 | reg for reg, value in enumerate(range(1, 9))]     # movz x0..x7
    words += [0xD2800000 | (0x100 + reg) << 5 | reg for reg in range(19, 29)]             # movz x19..x28
    words += [0xD10043FF, 0xD2800129, 0xD280014A, 0xA9002BE9]     # sub sp, sp, #16; movz x9, #9; movz x10, #10; stp x9, x10, [sp]
    call_at = CODE + 4 * len(words)
    words += [0x94000000 | ((SLOT - call_at) >> 2 & 0x3FFFFFF)]                          # bl slot
    words += [0x910043FF, 0xA8C17BFD, 0xD65F03C0]                  # add sp, sp, #16; ldp x29, x30, [sp], #16; ret
    return b"".join(struct.pack("<I", word) for word in words)


KEPT = {"x86_64": {x86.UC_X86_REG_RBX: 0x4B, x86.UC_X86_REG_RBP: 0x4D, x86.UC_X86_REG_R12: 0x12, x86.UC_X86_REG_R15: 0x15},
        "aarch64": {getattr(arm64, f"UC_ARM64_REG_X{n}"): 0x100 + n for n in range(19, 29)}}
CASES = {"x86_64": (X86_64, x86_caller, 5), "aarch64": (AARCH64, a64_caller, 4)}


def emulator(arch, caller: bytes):
    """A bare emulator with the window, the entry path, the frame and the caller; returns (uc, trap address)."""
    cpu = arch.cpu
    uc = cpu.create()
    uc.mem_map(STUB_BASE, STUB_FRAME + 0x1000 - STUB_BASE, UC_PROT_ALL)
    uc.mem_write(STUB_BASE, cpu.stub_window_fill * (STUB_SIZE // len(cpu.stub_window_fill)))
    uc.mem_write(SLOT, cpu.stub_slot_code(SLOT, STUB_RETURN))
    entry, trap = cpu.stub_entry_code(STUB_RETURN, STUB_FRAME, STUB_RESULT)
    uc.mem_write(STUB_RETURN, entry)
    uc.mem_map(CODE, 0x1000, UC_PROT_ALL)
    uc.mem_write(CODE, caller)
    uc.mem_map(STACK_TOP - 0x8000, 0x10000, UC_PROT_ALL)
    uc.mem_map(SENTINEL, 0x1000, UC_PROT_ALL)
    return uc, STUB_RETURN + trap


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_stub_call_reaches_the_trap_with_its_frame_and_returns_the_stored_result(name):
    arch, caller, return_offset = CASES[name]
    code = caller()
    uc, trap = emulator(arch, code)
    seen = []

    def at_trap(uc, address, size, data):
        frame = struct.unpack(f"<{FRAME_WORDS}Q", uc.mem_read(STUB_FRAME, 8 * FRAME_WORDS))
        seen.append((list(arch.convention.frame_args(frame, 10, uc)), frame[FRAME_SLOT], frame[FRAME_RETURN], frame[FRAME_SP]))
        uc.mem_write(STUB_RESULT, struct.pack("<q", -2))

    uc.hook_add(UC_HOOK_CODE, at_trap, begin=trap, end=trap)
    arch.convention.enter(uc, CODE, [], STACK_TOP, SENTINEL)
    uc.emu_start(CODE, SENTINEL, count=10_000)
    [(args, slot, returned_to, sp)] = seen
    assert args == ARGS
    assert slot == SLOT
    call_end = code.index(b"\xe8") + 5 if name == "x86_64" else len(code) - 4 * (return_offset - 1)
    assert returned_to == CODE + call_end                       # just after the call instruction
    assert sp % 16 == (8 if name == "x86_64" else 0)            # as at a function's entry
    assert arch.convention.return_value(uc) == (1 << 64) - 2
    assert {reg: uc.reg_read(reg) for reg in KEPT[name]} == KEPT[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_slot_register_is_cleared_so_a_stray_entry_cannot_pass_for_the_last_stub(name):
    arch, caller, _ = CASES[name]
    uc, trap = emulator(arch, caller())
    slots = []
    uc.hook_add(UC_HOOK_CODE, lambda uc, *_: slots.append(uc.mem_read(STUB_FRAME + 8 * FRAME_SLOT, 8)), begin=trap, end=trap)
    arch.convention.enter(uc, CODE, [], STACK_TOP, SENTINEL)
    uc.emu_start(CODE, SENTINEL, count=10_000)
    scratch = x86.UC_X86_REG_R11 if name == "x86_64" else arm64.UC_ARM64_REG_X16
    assert uc.reg_read(scratch) == 0 and struct.unpack("<Q", slots[0])[0] == SLOT


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_window_around_the_slots_stops_a_stray_jump(name):
    arch, caller, _ = CASES[name]
    uc, _ = emulator(arch, caller())
    for address in (stub_address(7), STUB_RETURN - 4):          # a slot without code; the window's last bytes
        with pytest.raises(UcError):
            uc.emu_start(address, SENTINEL, count=100)
        assert STUB_BASE <= arch.cpu.pc(uc) < STUB_RETURN
