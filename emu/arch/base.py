"""What an architecture must provide: relocations, a calling convention and a CPU.

The rest of emu is architecture-neutral; adding an architecture means writing one
package with these three parts and adding its line to `emu.arch.REGISTRY`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from operator import and_
from typing import TYPE_CHECKING, Callable, Protocol

from unicorn import Uc

from ..binary.relocation import Recipe

if TYPE_CHECKING:
    from .convention import VariadicArgs


class CallingConvention(Protocol):
    """Where integer arguments and results live, seen from a called function."""

    def read_args(self, uc: Uc, count: int) -> list[int]:
        """The first `count` integer arguments as unsigned 64-bit values, at function entry."""

    def return_address(self, uc: Uc) -> int:
        """Where the function returns to, read at function entry."""

    def variadic(self, uc: Uc, fixed: int) -> VariadicArgs:
        """A variadic call's further arguments after `fixed` integer ones, read at function entry in the
        order a format asks for them (`integer()`, `double()`)."""

    def set_return(self, uc: Uc, value: int) -> None:
        """Store an integer result."""

    def enter(self, uc: Uc, function: int, args: list[int], stack_top: int, return_to: int) -> None:
        """Set registers and stack so that starting at `function` is a call with `args` returning to `return_to`."""

    def return_value(self, uc: Uc) -> int:
        """The integer result after the function returned."""

    def exit_state(self, uc: Uc) -> tuple[int, int]:
        """The program counter and the integer result, read together once an entry stopped."""


@dataclass(frozen=True)
class ExtensionFault:
    """Why a CPU extension stopped: `kind` is a Fault kind, `message` says what and what to do."""

    kind: str             # "unsupported_instruction" or "invalid_instruction"
    message: str
    pc: int


class CpuExtension(Protocol):
    """Instructions the emulator's CPU model lacks or runs wrongly, carried out by emu for one emulator.

    The Machine hooks invalid instructions and each site its Cpu's `extension_sites`
    named in the loaded image, and hands both here; it knows nothing else about it.
    """

    def on_invalid_instruction(self) -> bool:
        """The CPU refused the instruction at the program counter: carry it out and move past it.

        False when it cannot; the reason is then kept for `take_fault`.
        """

    def on_site(self, address: int) -> None:
        """Execution reached a site: carry out its instruction and continue after it, or keep a fault and stop."""

    def code_changed(self, address: int, code: bytes) -> None:
        """`code` is now what is mapped at `address`: what was decoded for other bytes there no longer holds."""

    def take_fault(self) -> ExtensionFault | None:
        """The fault kept since the last call, if any (and forget it)."""

    def observe_reads(self, observer: Callable[[int, int], None] | None) -> None:
        """Report each memory load the extension carries out as (address, size) to `observer` (None: stop)."""


class Cpu(Protocol):
    """Creating and describing the emulated processor."""

    name: str
    page_size: int

    stub_window_fill: bytes
    """An invalid instruction, repeated over the stub window around the slots."""

    def stub_slot_code(self, address: int, target: int) -> bytes:
        """A stub slot at `address`: its own address into the scratch register, then a jump to `target`."""

    def stub_entry_code(self, address: int, frame: int, result: int) -> tuple[bytes, int]:
        """The shared entry path at `address` (emu.binary.memory_map) and the offset of its hooked instruction."""

    def jump_code(self, address: int, target: int) -> bytes:
        """A jump to `target` placed at `address`, the shortest that reaches it, keeping every argument register:
        what emu.binary.bindings writes over the start of a function the binary defines and a stub answers."""

    def create(self) -> Uc:
        """A new emulator with whatever the loaders need enabled (FP/SIMD)."""

    def pc(self, uc: Uc) -> int:
        """The program counter."""

    def registers(self, uc: Uc) -> dict[str, int]:
        """The general registers, for fault reports."""

    def disassemble(self, code: bytes, address: int) -> str:
        """One instruction as text, for fault reports."""

    def extension_sites(self, image) -> list[int]:
        """Addresses in the image's code that the CPU extension must carry out (none without one)."""

    def create_extension(self, uc: Uc) -> CpuExtension | None:
        """The extension for one emulator, or None when Unicorn runs every instruction the loaders use."""


@dataclass(frozen=True)
class Architecture:
    name: str
    relocations: dict[int, Recipe]
    convention: CallingConvention
    cpu: Cpu
    dynamic_relocations: dict[int, Recipe] = field(default_factory=dict)   # a shared library's (emu.binary.elf.shared)
    relocation_names: dict[int, str] = field(default_factory=dict)         # types neither table implements

    def relocation_name(self, kind: int) -> str:
        """The psABI name of a relocation type, for messages: `R_X86_64_TPOFF64`, else `type 18`."""
        recipe = self.dynamic_relocations.get(kind) or self.relocations.get(kind)
        return recipe.name if recipe is not None else self.relocation_names.get(kind, f"type {kind}")

    # Page(x) of the psABIs, x & ~0xFFF, as a C-level callable: relocation formulas call it
    # twice per ADRP.
    page = staticmethod(partial(and_, ~0xFFF))
