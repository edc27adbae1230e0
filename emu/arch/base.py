"""What an architecture must provide: relocations, a calling convention and a CPU.

The rest of emu is architecture-neutral; adding an architecture means writing one
package with these three parts and listing it in `emu.arch.ARCHITECTURES`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from operator import and_
from typing import Protocol

from unicorn import Uc

from ..relocation import Recipe


class CallingConvention(Protocol):
    """Where integer arguments and results live, seen from a called function."""

    def read_args(self, uc: Uc, count: int) -> list[int]:
        """The first `count` integer arguments as unsigned 64-bit values, at function entry."""

    def return_address(self, uc: Uc) -> int:
        """Where the function returns to, read at function entry."""

    def set_return(self, uc: Uc, value: int) -> None:
        """Store an integer result."""

    def enter(self, uc: Uc, function: int, args: list[int], stack_top: int, return_to: int) -> None:
        """Set registers and stack so that starting at `function` is a call with `args` returning to `return_to`."""

    def return_value(self, uc: Uc) -> int:
        """The integer result after the function returned."""

    def exit_state(self, uc: Uc) -> tuple[int, int]:
        """The program counter and the integer result, read together once an entry stopped."""


class Cpu(Protocol):
    """Creating and describing the emulated processor."""

    name: str
    page_size: int

    def stub_slot_code(self, address: int, target: int) -> bytes:
        """The one instruction a stub slot at `address` holds: a jump to `target`."""

    def stub_return_code(self, address: int, result: int) -> bytes:
        """The shared return path at `address`: load the 64-bit word at `result` as the result, then return."""

    def create(self) -> Uc:
        """A new emulator with whatever the loaders need enabled (FP/SIMD)."""

    def pc(self, uc: Uc) -> int:
        """The program counter."""

    def registers(self, uc: Uc) -> dict[str, int]:
        """The general registers, for fault reports."""

    def disassemble(self, code: bytes, address: int) -> str:
        """One instruction as text, for fault reports."""


@dataclass(frozen=True)
class Architecture:
    name: str
    relocations: dict[int, Recipe]
    convention: CallingConvention
    cpu: Cpu

    # Page(x) of the psABIs, x & ~0xFFF, as a C-level callable: relocation formulas call it
    # twice per ADRP.
    page = staticmethod(partial(and_, ~0xFFF))
