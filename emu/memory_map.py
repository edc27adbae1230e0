"""The fixed address plan every emulated run uses.

Stubs sit just below the object image so that AArch64 CALL26/JUMP26 (+-128 MiB) reach
every stub directly, with no veneers; the host scratch area and the stack sit far above.
Fixed addresses let one emulator serve many objects: loading an object only rewrites
the bytes that changed, so Unicorn keeps its translated code for identical loaders.
"""
from __future__ import annotations

PAGE = 0x1000

STUB_BASE = 0x0010_0000           # slot 0 is the return sentinel, slot i>0 an undefined symbol
STUB_SLOT = 16
STUB_SLOTS = 0x1000
STUB_SIZE = STUB_SLOT * STUB_SLOTS
RETURN_SENTINEL = STUB_BASE
# Every stub slot puts its own address in a scratch register and jumps to one shared entry
# path just past the slots.  The path stores the argument registers, the slot, the return
# address and the stack pointer in the frame (STUB_FRAME, in FRAME_WORDS order), reaches
# its one hooked instruction, where emu answers the call, then loads the result
# from STUB_RESULT into the result register and returns.  So a stub reads its arguments and
# writes its answer as plain memory, with no call into Unicorn for registers.
STUB_RETURN = STUB_BASE + STUB_SIZE
STUB_FRAME = STUB_RETURN + PAGE   # read-write, never code: guest stores there leave translations alone
STUB_RESULT = STUB_FRAME + 0x100
# words 0-7: the integer argument registers (x86-64 fills 0-5); then the slot, the return address, sp
FRAME_SLOT, FRAME_RETURN, FRAME_SP = 8, 9, 10
FRAME_WORDS = 11

# The laid-out object: one fixed region per permission class, mapped once per emulator.
# The regions end below 0x0400_0000, well inside CALL26 reach (+-128 MiB) of the stubs.
REGION_SIZE = 0x0100_0000         # 16 MiB each
CODE_BASE = 0x0100_0000           # RX: executable sections
RODATA_BASE = 0x0200_0000         # R: read-only sections and the GOT
DATA_BASE = 0x0300_0000           # RW: writable sections, NOBITS zero-filled

# Code of at most 64 KiB (every loader export seen) goes to one of 1,024 slots chosen by
# its bytes instead (emu.layout), so objects alternating in one emulator keep their
# translated code, and objects compiled alike share it.  The last slot ends at
# 0x0800_0000: still within CALL26 reach of every stub.
CODE_SLOTS_BASE = 0x0400_0000
CODE_SLOT_SIZE = 0x1_0000
CODE_SLOTS = 1024

# The read-only data (and GOT) of an object whose code has a slot goes to the read-only
# slot of the same number when it fits 1 MiB, for the same reason.  The last one ends at
# 0x5000_0000: within reach of x86-64's 32-bit PC-relative and absolute forms.
RODATA_SLOTS_BASE = 0x1000_0000
RODATA_SLOT_SIZE = 0x10_0000

HOST_BASE = 0x7000_0000           # scratch memory emu writes arguments into (library slots, packed args)
HOST_SIZE = 0x10_0000

STACK_BASE = 0x7F00_0000
STACK_SIZE = 0x10_0000
STACK_TOP = STACK_BASE + STACK_SIZE - 0x100


def page_up(value: int) -> int:
    return (value + PAGE - 1) & ~(PAGE - 1)


def code_slot_address(slot: int) -> int:
    return CODE_SLOTS_BASE + slot * CODE_SLOT_SIZE


def rodata_slot_address(slot: int) -> int:
    return RODATA_SLOTS_BASE + slot * RODATA_SLOT_SIZE


def stub_address(slot: int) -> int:
    return STUB_BASE + slot * STUB_SLOT
