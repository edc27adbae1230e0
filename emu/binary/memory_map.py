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
# A stub that calls guest code (emu.emulator.guest_calls) gives each callee this return address, in
# the entry path's page: a copy of the path's tail (load the result, return) behind a hooked instruction.
GUEST_CALL_RESUME = STUB_RETURN + 0x100
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

# Code goes to a slot chosen by its bytes instead (emu.binary.elf.relocatable), so objects alternating in one
# emulator keep their translated code, and objects compiled alike share it.  Two classes of
# slots, laid out in turn from CODE_SLOTS_BASE: 3,072 of 16 KiB (every real export seen has
# 4-12 KiB of code), then 256 of 64 KiB; an object takes the first class its code (and, if it
# can, its read-only data) fits.  More, smaller slots make two objects' sharing one by chance,
# and rewriting each other's code when they alternate, rarer.  The last slot ends at
# 0x0800_0000: still within CALL26 reach of every stub.
CODE_SLOTS_BASE = 0x0400_0000
CODE_SLOT_CLASSES = ((0x4000, 3072), (0x1_0000, 256))     # (slot size, slots)

# The read-only data (and GOT) of an object whose code has a slot goes to the read-only
# slot paired with it, 16 times its size, when it fits (256 KiB; 1 MiB), for the same reason:
# at RODATA_SLOTS_BASE plus 16 times the code slot's offset, so the distance from code to
# its data depends on the slot only.  The last one ends at 0x5000_0000: within reach of
# x86-64's 32-bit PC-relative and absolute forms.
RODATA_SLOTS_BASE = 0x1000_0000
RODATA_PER_CODE = 16

HOST_BASE = 0x7000_0000           # scratch memory emu writes arguments into (library slots, packed args)
HOST_SIZE = 0x10_0000

STACK_BASE = 0x7F00_0000
STACK_SIZE = 0x10_0000
STACK_TOP = STACK_BASE + STACK_SIZE - 0x100


def page_up(value: int) -> int:
    return (value + PAGE - 1) & ~(PAGE - 1)


def _laid_out(classes: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int, int], ...]:
    table, address = [], CODE_SLOTS_BASE
    for size, count in classes:
        table.append((size, count, address))
        address += size * count
    return tuple(table)


# (slot size, slots, address of the first) of each class of code slots, in the order an object tries them
CODE_SLOT_TABLE = _laid_out(CODE_SLOT_CLASSES)


def code_slot_size(address: int) -> int:
    """The size of the code slot at `address` (one of CODE_SLOT_TABLE's)."""
    for size, count, first in CODE_SLOT_TABLE:
        if first <= address < first + size * count:
            return size
    raise ValueError(f"{address:#x} is not a code slot")


def rodata_slot_address(code_slot: int) -> int:
    """The read-only slot paired with the code slot at `code_slot` (RODATA_PER_CODE times its size)."""
    return RODATA_SLOTS_BASE + (code_slot - CODE_SLOTS_BASE) * RODATA_PER_CODE


def stub_address(slot: int) -> int:
    return STUB_BASE + slot * STUB_SLOT
