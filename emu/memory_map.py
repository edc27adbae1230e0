"""The fixed address plan every emulated run uses.

Stubs sit just below the object image so that AArch64 CALL26/JUMP26 (+-128 MiB) reach
every stub directly, with no veneers; the host scratch area and the stack sit far above.
Fixed addresses let one emulator serve many objects: only the image is remapped.
"""
from __future__ import annotations

PAGE = 0x1000

STUB_BASE = 0x0010_0000           # slot 0 is the return sentinel, slot i>0 an undefined symbol
STUB_SLOT = 16
STUB_SLOTS = 0x1000
STUB_SIZE = STUB_SLOT * STUB_SLOTS
RETURN_SENTINEL = STUB_BASE

IMAGE_BASE = 0x0100_0000          # the laid-out object: RX, then R (with the GOT), then RW
IMAGE_LIMIT = 0x0500_0000         # 64 MiB: far inside CALL26 reach of the stubs

HOST_BASE = 0x7000_0000           # scratch memory emu writes arguments into (library slots, packed args)
HOST_SIZE = 0x10_0000

STACK_BASE = 0x7F00_0000
STACK_SIZE = 0x10_0000
STACK_TOP = STACK_BASE + STACK_SIZE - 0x100


def page_up(value: int) -> int:
    return (value + PAGE - 1) & ~(PAGE - 1)


def stub_address(slot: int) -> int:
    return STUB_BASE + slot * STUB_SLOT
