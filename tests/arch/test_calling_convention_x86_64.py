"""System V AMD64 as emu reads it at a stub: argument 4 from rcx (not the syscall
register r10) and arguments 7-8 from the stack above the return address."""
from __future__ import annotations

import struct

from unicorn import UC_ARCH_X86, UC_HOOK_CODE, UC_MODE_64, Uc
from unicorn import x86_const as x86

from emu.arch.x86_64.calling_convention import SYSTEM_V_AMD64

CODE, STUB, STACK, SENTINEL = 0x1000000, 0x100000, 0x7F000000, 0x200000


def caller_code() -> bytes:
    """The caller a C compiler emits for f(1, 2, 3, 4, 5, 6, 7, 8), with r10 holding a decoy."""
    body = (b"\xbf\x01\x00\x00\x00" b"\xbe\x02\x00\x00\x00" b"\xba\x03\x00\x00\x00" b"\xb9\x04\x00\x00\x00"
            b"\x41\xb8\x05\x00\x00\x00" b"\x41\xb9\x06\x00\x00\x00" b"\x41\xba\xad\xde\x00\x00"   # r10 = 0xdead
            b"\x6a\x08" b"\x6a\x07")                                                               # push 8, push 7
    call_at = CODE + len(body)
    body += b"\xe8" + struct.pack("<i", STUB - (call_at + 5))
    return body + b"\x48\x83\xc4\x10" b"\xc3"                                                      # add rsp, 16; ret


def test_stub_reads_arguments_4_and_7_where_the_abi_puts_them():
    code = caller_code()
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(CODE, 0x1000)
    uc.mem_write(CODE, code)
    uc.mem_map(STUB, 0x1000)
    uc.mem_write(STUB, b"\xc3")
    uc.mem_map(STACK, 0x10000)
    uc.mem_map(SENTINEL, 0x1000)
    seen = {}

    def at_stub(uc, address, size, data):
        seen["args"], seen["return"] = SYSTEM_V_AMD64.read_args(uc, 8), SYSTEM_V_AMD64.return_address(uc)
        SYSTEM_V_AMD64.set_return(uc, 0x77)

    uc.hook_add(UC_HOOK_CODE, at_stub, begin=STUB, end=STUB)
    SYSTEM_V_AMD64.enter(uc, CODE, [], STACK + 0x8000, SENTINEL)
    assert uc.reg_read(x86.UC_X86_REG_RSP) % 16 == 8          # as after a call
    uc.emu_start(CODE, SENTINEL)
    assert seen["args"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert seen["return"] == CODE + len(code) - 5              # just after the call instruction
    assert SYSTEM_V_AMD64.return_value(uc) == 0x77


def test_enter_places_stack_arguments_16_byte_aligned_above_the_return_address():
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(STACK, 0x10000)
    SYSTEM_V_AMD64.enter(uc, CODE, list(range(1, 9)), STACK + 0x8000, SENTINEL)
    rsp = uc.reg_read(x86.UC_X86_REG_RSP)
    assert (rsp + 8) % 16 == 0
    assert struct.unpack("<3Q", uc.mem_read(rsp, 24)) == (SENTINEL, 7, 8)
    assert SYSTEM_V_AMD64.read_args(uc, 8) == list(range(1, 9)) and SYSTEM_V_AMD64.return_address(uc) == SENTINEL


def test_a_stub_result_is_the_word_the_entry_path_loads():
    """set_stub_result writes STUB_RESULT (test_stub_entry runs the path that loads it), as 64 bits."""
    from emu.arch.x86_64.architecture import X86_64
    from emu.emulator.machine import machine_for
    from emu.binary.memory_map import STUB_RESULT

    machine = machine_for(X86_64)
    machine.set_stub_result(machine.uc, -2)
    assert machine.uc.mem_read(STUB_RESULT, 8) == (-2 & (1 << 64) - 1).to_bytes(8, "little")
