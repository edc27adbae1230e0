"""Stubs that call back into the guest: a behaviour that yields calls, within one `Machine.call`.

Some stubs run the object's own code: `cuda_dialect_init_library_once(slot, init, load_to_device,
set_error)` calls `init`, then `load_to_device` per device, and `set_error` on failure.  Unicorn
cannot nest emu_start, so such a stub's answer is a generator: it yields a `GuestCall` and receives the
callee's return register.  At the yield the machine points the program counter at the callee (from
the stub hook), with its arguments in registers and its return address set to `RESUME` (the
return-address word on x86-64, x30 on AArch64), on a stack below the stub's own locals.  RESUME holds
the entry path's tail (load the stub result, return) behind one hooked instruction: reaching it
hands the return value to the generator, which yields the next call or finishes.  When it finishes
(its answer already stored as the stub result), the stack pointer (and the link register) are put
back as the stub's caller left them, and the tail returns to that caller as any stub does.

The callees keep the callee-saved registers (the ABI), the stub may clobber the others, so nothing
else needs restoring.  Plain stub calls never come here: the machine looks at what the dispatcher
returns, which is None for them.  The instruction budget and the timeout cover the callbacks (one
emu_start); a fault inside one says which stub called it back (`annotate`).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from time import perf_counter as _clock
from typing import TYPE_CHECKING, Generator

from unicorn import UcError

from ..binary.image import PERM_X
from ..binary.memory_map import GUEST_CALL_RESUME, STACK_BASE, STUB_FRAME, STUB_RESULT
from ..errors import StubFailure
from .faults import Fault
from .unicorn_c import hook_code_direct, mem_read, mem_write, reg_read64, reg_write64

if TYPE_CHECKING:
    from .machine import Machine

# The calling-back stub's own locals (what its C body keeps on its stack): this much below its caller's
# stack pointer; the callees' stack starts below them.
LOCALS_BYTES = 0x400
SHOWN_NESTING = 3          # stub calls a fault message names, innermost first (a runaway recursion has thousands)
_U64 = struct.Struct("<Q")


@dataclass(frozen=True)
class GuestCall:
    """One call a stub makes into guest code: `what` names the callee for faults (its parameter: "init")."""

    what: str
    function: int
    args: tuple[int, ...]


# What a calling-back stub's answer is: yields GuestCalls, is sent each callee's return register
# (64 bits, unsigned), and returns when the stub's result is stored.
Steps = Generator[GuestCall, int, None]


class StubLocals:
    """A calling-back stub's view of guest memory: reads, writes, and its locals below its caller's stack pointer."""

    def __init__(self, uc, stack_pointer: int, symbol: str):
        self.uc = uc
        self.symbol = symbol
        self.top = stack_pointer & ~0xF
        self.cursor = self.top

    def call(self, what: str, function: int, *args: int) -> GuestCall:
        """The call to yield: `function(*args)`, named `what` in faults."""
        return GuestCall(what, function, args)

    def local(self, data: bytes) -> int:
        """Copy `data` into a fresh 16-aligned local of the stub and return its guest address."""
        address = (self.cursor - len(data)) & ~0xF
        if address < self.top - LOCALS_BYTES:
            raise StubFailure(f"{self.symbol} needs more than the {LOCALS_BYTES} bytes of locals emu gives a stub that calls back")
        if address < STACK_BASE:
            raise StubFailure(f"the stack is exhausted ({address:#x} is below it; a runaway recursion?)")
        mem_write(self.uc, address, data)
        self.cursor = address
        return address

    def read_u64(self, address: int) -> int:
        try:
            return _U64.unpack(mem_read(self.uc, address, 8))[0]
        except UcError:
            raise StubFailure(f"cannot read 8 bytes at {address:#x}: unmapped memory") from None

    def write_u64(self, address: int, value: int) -> None:
        try:
            mem_write(self.uc, address, _U64.pack(value & 0xFFFF_FFFF_FFFF_FFFF))
        except UcError:
            raise StubFailure(f"cannot write 8 bytes at {address:#x}: unmapped or protected memory") from None


@dataclass
class _Suspended:
    """A stub call waiting for the guest function it called."""

    steps: Steps
    symbol: str
    caller: str               # where the stub returns to, located
    stack_pointer: int        # its caller's, at the call (x86-64: pointing at the return address)
    return_address: int
    calling: GuestCall | None = None
    resume_sp: int = 0        # the stack pointer the callee must return with


class GuestCalls:
    """The stub calls of one machine that are waiting for guest code they called, innermost last."""

    def __init__(self, machine: Machine):
        self.machine = machine
        convention = machine.arch.convention
        self.pc, self.sp, self.link = convention.program_counter, convention.stack_pointer, convention.link_register
        self.result_reg = convention.return_reg
        self.enter = convention.enter
        self.waiting: list[_Suspended] = []
        # the entry path's tail (load the result, return), assembled for GUEST_CALL_RESUME
        code, trap = machine.arch.cpu.stub_entry_code(GUEST_CALL_RESUME, STUB_FRAME, STUB_RESULT)
        code, _ = machine.arch.cpu.stub_entry_code(GUEST_CALL_RESUME - trap, STUB_FRAME, STUB_RESULT)
        machine.uc.mem_write(GUEST_CALL_RESUME, code[trap:])
        hook_code_direct(machine.uc, self._on_resume, GUEST_CALL_RESUME, GUEST_CALL_RESUME)

    # -- from the stub hook ----------------------------------------------------------------
    def start(self, steps: Steps, symbol: str, caller: str, frame_sp: int, return_address: int) -> None:
        """Run a calling-back stub's answer up to its first guest call (or to its end: then it returned at once)."""
        waiting = _Suspended(steps, symbol, caller, frame_sp, return_address)
        try:
            call = next(steps)
        except StopIteration:
            return
        self.waiting.append(waiting)
        self._call(waiting, call)

    def _call(self, waiting: _Suspended, call: GuestCall) -> None:
        """Enter `call` from the hook: its registers, RESUME as its return address, then its first instruction."""
        uc = self.machine.uc
        waiting.calling = call
        if not self._is_code(call.function):
            self.waiting.pop().steps.close()          # the fault names the stub itself
            self.machine.stop_with(self._not_code(waiting, call))
            return
        top = (waiting.stack_pointer & ~0xF) - LOCALS_BYTES
        try:
            self.enter(uc, call.function, list(call.args), top, GUEST_CALL_RESUME)
        except UcError:                                 # its return address or stack arguments fall off the stack
            self.waiting.pop().steps.close()
            self.machine.stop_with(self.machine.describe(
                "unmapped_write", f"{waiting.symbol} (called from {waiting.caller}) cannot call its {call.what}: the stack "
                f"is exhausted ({top:#x} is its stack pointer; a runaway recursion?)", pc=waiting.return_address, address=top))
            return
        waiting.resume_sp = reg_read64(uc, self.sp) + (8 if self.link is None else 0)    # x86-64: the return pops
        reg_write64(uc, self.pc, call.function)

    def _is_code(self, address: int) -> bool:
        image = self.machine.image
        if address in self.machine.bound:                # an import: its stub answers
            return True
        return image is not None and any(s.perms & PERM_X and s.address <= address < s.address + len(s.data)
                                         for s in image.segments)

    def _not_code(self, waiting: _Suspended, call: GuestCall) -> Fault:
        what = "NULL" if call.function == 0 else "not in the object's code nor a stub"
        try:
            mem_read(self.machine.uc, call.function, 1)
            kind = "protected_fetch"
        except UcError:
            kind = "unmapped_fetch"
        return self.machine.describe(kind, f"{waiting.symbol} (called from {waiting.caller}) calls its {call.what} at "
                                     f"{call.function:#x}, which is {what}", pc=waiting.return_address, address=call.function)

    def caller(self) -> str:
        """Who calls when a stub is reached with GUEST_CALL_RESUME as its return address: the waiting stub itself."""
        return self.waiting[-1].symbol if self.waiting else f"{GUEST_CALL_RESUME:#x}"

    # -- back from the callee ---------------------------------------------------------------
    def _on_resume(self, _engine, _address: int, _size: int, _key) -> None:
        """RESUME's C-level hook: nothing may escape a ctypes callback."""
        try:
            self._resume()
        except BaseException as error:
            self.machine.hold(error)

    def _resume(self) -> None:
        machine, uc = self.machine, self.machine.uc
        if not self.waiting:
            machine.stop_with(machine.describe("unmapped_fetch", "execution reached emu's guest-call return address "
                                               "with no stub waiting for a callee", pc=GUEST_CALL_RESUME))
            return
        waiting = self.waiting[-1]
        sp = reg_read64(uc, self.sp)
        if sp != waiting.resume_sp:
            machine.stop_with(machine.describe(
                "stub_error", f"{waiting.calling.what} ({machine.locate(waiting.calling.function)}), called back by "
                f"{waiting.symbol}, returned with the stack pointer at {sp:#x}, not {waiting.resume_sp:#x}", pc=GUEST_CALL_RESUME))
            return
        if _clock() > machine.deadline:
            machine.stop_with(machine.describe("timeout", "the entry ran past its wall-clock timeout", pc=GUEST_CALL_RESUME))
            return
        try:
            call = waiting.steps.send(reg_read64(uc, self.result_reg))
        except StopIteration:
            self.waiting.pop()
            reg_write64(uc, self.sp, waiting.stack_pointer)      # the tail at RESUME loads the result and returns
            if self.link is not None:
                reg_write64(uc, self.link, waiting.return_address)
            return
        except Exception as error:
            self.waiting.pop()
            machine.stop_with(machine.stub_fault(error, waiting.symbol, waiting.caller, waiting.return_address))
            return
        self._call(waiting, call)

    # -- the end of an entry ------------------------------------------------------------------
    def annotate(self, fault: Fault) -> Fault:
        """`fault` with the stub calls it interrupted named, innermost first; forgets them (a new entry starts clean)."""
        if not self.waiting:
            return fault
        waiting = [w for w in reversed(self.waiting) if w.calling is not None]
        shown = waiting if len(waiting) <= SHOWN_NESTING else [*waiting[:SHOWN_NESTING - 1], None, waiting[-1]]
        inside = "; ".join(f"inside {w.calling.what} ({self.machine.locate(w.calling.function)}), called back by "
                           f"{w.symbol} (called from {w.caller})" if w is not None else
                           f"{len(waiting) - SHOWN_NESTING} more calls back" for w in shown)
        self.reset()
        return fault.model_copy(update={"message": f"{fault.message}; {inside}"}) if inside else fault

    def reset(self) -> None:
        for waiting in self.waiting:
            waiting.steps.close()
        self.waiting.clear()
