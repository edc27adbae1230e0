"""Unicorn emulators reused for every object a process runs: one per architecture, plus one more for an object whose
code slot another object's code holds, and one per shared library (machine_for).

The stub window, host scratch area and stack are mapped once; loading an object only
swaps the image's segments (emu.emulator.mapping).  One instruction is hooked for code (never
every instruction): the stubs' shared trap, reached from the slots the binding table names
with the call's registers already stored in the stub frame (emu.binary.memory_map); the
call goes to a dispatcher (emu.emulator.dispatcher), and the machine knows no symbol's
meaning.  Memory faults and invalid instructions are caught by their own hooks and turned
into `Fault` records with the location, instruction and registers.
"""
from __future__ import annotations

from dataclasses import dataclass
from struct import Struct
from time import perf_counter as _clock

from unicorn import (UC_ERR_FETCH_PROT, UC_ERR_FETCH_UNMAPPED, UC_ERR_INSN_INVALID, UC_ERR_READ_PROT,
                     UC_ERR_READ_UNMAPPED, UC_ERR_WRITE_PROT, UC_ERR_WRITE_UNMAPPED, UC_HOOK_INSN_INVALID,
                     UC_HOOK_MEM_INVALID, UC_HOOK_MEM_READ, UC_MEM_FETCH_PROT, UC_MEM_FETCH_UNMAPPED, UC_MEM_READ_PROT,
                     UC_MEM_READ_UNMAPPED, UC_MEM_WRITE_PROT, UC_MEM_WRITE_UNMAPPED, UC_PROT_READ,
                     UC_PROT_WRITE, UcError)

from ..arch.base import Architecture, CpuExtension
from ..errors import StubFailure, StubStop
from .limits import DEFAULT_BUDGET, DEFAULT_TIMEOUT_S
from .unicorn_c import HostBacked, code_hook_callback, emu_start, hook_code_direct
from .host_memory import HostMemory
from .mapping import ImageMapping
from ..binary.image import PERM_X, LoadedBinary, Segment
from ..binary.memory_map import (FRAME_RETURN, FRAME_SLOT, FRAME_SP, FRAME_WORDS, GUEST_CALL_RESUME, PAGE, RETURN_SENTINEL,
                                 STACK_BASE, STACK_SIZE, STACK_TOP, STUB_BASE, STUB_FRAME, STUB_RESULT, STUB_RETURN,
                                 STUB_SIZE, STUB_SLOT, stub_address)
from .dispatcher import BindingTable, Dispatcher
from .faults import Fault
from .guest_calls import GuestCalls
from .site_hooks import SiteHooks

WATCHDOG_BUDGET = 2_000_000         # above this budget an endless loop could outlast the timeout (~30M insns/s)

_PACK_U64 = Struct("<Q").pack_into
_READ_FRAME = Struct(f"<{FRAME_WORDS}Q").unpack_from

_ACCESS_KIND = {
    UC_MEM_READ_UNMAPPED: "unmapped_read", UC_MEM_WRITE_UNMAPPED: "unmapped_write",
    UC_MEM_FETCH_UNMAPPED: "unmapped_fetch", UC_MEM_READ_PROT: "protected_read",
    UC_MEM_WRITE_PROT: "protected_write", UC_MEM_FETCH_PROT: "protected_fetch",
}
_ERROR_KIND = {
    UC_ERR_READ_UNMAPPED: "unmapped_read", UC_ERR_WRITE_UNMAPPED: "unmapped_write",
    UC_ERR_FETCH_UNMAPPED: "unmapped_fetch", UC_ERR_READ_PROT: "protected_read",
    UC_ERR_WRITE_PROT: "protected_write", UC_ERR_FETCH_PROT: "protected_fetch",
    UC_ERR_INSN_INVALID: "invalid_instruction",
}


@dataclass
class CallOutcome:
    returned: int | None
    fault: Fault | None


class Machine:
    def __init__(self, arch: Architecture):
        self.arch = arch
        self.uc = uc = arch.cpu.create()
        cpu = arch.cpu
        # first of the regions emu reads and writes in place (unicorn_c.backed_region tries them in order):
        # the stack takes most of those accesses (out-parameters, return addresses)
        self.stack = HostBacked(uc, STACK_BASE, STACK_SIZE, UC_PROT_READ | UC_PROT_WRITE)
        uc.mem_map(STUB_BASE, STUB_SIZE, UC_PROT_READ | 4)
        uc.mem_write(STUB_BASE, cpu.stub_window_fill * (STUB_SIZE // len(cpu.stub_window_fill)))
        self._slots_written = 1                           # stub slots whose code is in the window (see load); 0 is the sentinel
        # the slots' shared entry path, and the frame it stores the call in (emu.binary.memory_map)
        entry_code, trap = cpu.stub_entry_code(STUB_RETURN, STUB_FRAME, STUB_RESULT)
        HostBacked(uc, STUB_RETURN, PAGE, UC_PROT_READ | 4).write(STUB_RETURN, entry_code)
        self._frame = HostBacked(uc, STUB_FRAME, PAGE, UC_PROT_READ | UC_PROT_WRITE)
        self._frame_view = self._frame.view
        self.host = HostMemory(uc)
        self.image: LoadedBinary | None = None
        self.dispatcher: Dispatcher | None = None
        self.bound: BindingTable = {}                    # slot address -> (symbol, target or None) of the loaded binary
        self._pending: BaseException | None = None        # raised inside the stub hook, re-raised after emu_start
        self._frame_args = arch.convention.frame_args
        self._register_args = len(arch.convention.arg_regs)    # the frame's first words: frame_args of so many is a slice
        self.mapping = ImageMapping(uc)
        self._sites_for: tuple[int | None, bytes] | None = None   # the code (address, bytes) whose sites are hooked
        self.deadline = 0.0
        self._fault: Fault | None = None
        self._memory_fault: tuple[str, int] | None = None
        self._probing = False                             # inside probe_reads: a stub call ends the run
        hook_code_direct(uc, self._on_stub_entry, STUB_RETURN + trap, STUB_RETURN + trap)
        self.guest_calls = GuestCalls(self)               # the stubs waiting for guest code they called
        uc.hook_add(UC_HOOK_MEM_INVALID, self._on_bad_memory)
        # The instructions Unicorn lacks or runs wrongly, if the CPU has any (x86-64: AVX).
        self.extension: CpuExtension | None = cpu.create_extension(uc)
        if self.extension is not None:
            uc.hook_add(UC_HOOK_INSN_INVALID, self._on_invalid)
            self.site_hooks = SiteHooks(uc, code_hook_callback(self._on_site_entry))    # one C callback for every site

    def _on_invalid(self, _uc, _user_data) -> bool:
        return self.extension.on_invalid_instruction()

    # -- objects ------------------------------------------------------------------
    def load(self, image: LoadedBinary, bound: BindingTable) -> None:
        """Map the binary's segments (emu.emulator.mapping), hook its vector sites, and trap the calls that reach
        the slots `bound` names (emu.emulator.dispatcher)."""
        code = self.mapping.load(image)
        self._hook_vector_sites(image, code)
        if bound is not self.bound:
            self._write_stub_slots((max(bound, default=STUB_BASE) - STUB_BASE) // STUB_SLOT + 1)
            self.bound = bound
        self.image = image
        self.host.reset()

    def _write_stub_slots(self, count: int) -> None:
        """Put the code of stub slots up to `count` in the window, on first need.

        An object uses a few dozen of the 4,096 slots; writing all of them cost every
        process about 5 ms per architecture.  A slot without code holds the window's fill,
        an invalid instruction: reaching it is reported (no stub there).
        """
        if count <= self._slots_written:
            return
        start, cpu = self._slots_written, self.arch.cpu
        fill = cpu.stub_window_fill * STUB_SLOT
        self.uc.mem_write(stub_address(start), b"".join((cpu.stub_slot_code(stub_address(slot), STUB_RETURN) + fill)[:STUB_SLOT]
                                                        for slot in range(start, count)))
        self.uc.ctl_remove_cache(stub_address(start), stub_address(count))    # a stray jump may have translated the fill
        self._slots_written = count

    def _hook_vector_sites(self, image: LoadedBinary, code: Segment | None) -> None:
        """Hand the image's VEX/EVEX instructions to the extension (Unicorn runs VEX.128 wrongly).

        Only the loaded object's sites are hooked (emu.emulator.site_hooks says why, and how the
        hooks move from object to object).
        """
        address, data = (code.address, code.data) if code is not None else (None, b"")
        if self._sites_for == (address, data):
            return
        self._sites_for = (address, data)
        if self.extension is None:
            return                       # an architecture without an extension has no sites to hand it
        if code is not None:
            self.extension.code_changed(address, data)
        self.site_hooks.aim((image.extras.get("vector_sites") or ()) if code is not None else ())

    # -- calls ----------------------------------------------------------------------
    def call(self, function: int, args: list[int], budget: int = DEFAULT_BUDGET,
             timeout_s: float = DEFAULT_TIMEOUT_S) -> CallOutcome:
        """Run `function(*args)` from a fresh stack until it returns to the sentinel.

        The budget is at least 1: a run that does not count its instructions would leave
        blocks without the hook check that emu.emulator.site_hooks relies on.
        """
        if budget < 1:
            raise ValueError(f"an instruction budget is at least 1, not {budget}")
        self._fault = None
        self._memory_fault = None
        if self.guest_calls.waiting:          # left by a probe that stopped inside a callback
            self.guest_calls.reset()
        self.arch.convention.enter(self.uc, function, args, STACK_TOP, RETURN_SENTINEL)
        # Unicorn's own timeout starts a watchdog thread per emu_start (milliseconds each);
        # the instruction budget bounds loops instead, and the stub hook checks the clock.
        self.deadline = _clock() + timeout_s
        # A budget far above what the loaders need (a scenario may set any) could outrun the
        # timeout in a loop that calls no stub: only then pay for Unicorn's watchdog.
        watchdog = min(int(timeout_s * 1_000_000), 1 << 62) if budget > WATCHDOG_BUDGET else 0
        stopped = None
        try:   # ctypes truncates silently: a count of 2^64 would become 0, which means unlimited
            emu_start(self.uc, function, RETURN_SENTINEL, watchdog, min(budget, 1 << 62))
        except UcError as error:
            stopped = error
        extension_fault = self.extension.take_fault() if self.extension is not None else None
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.guest_calls.reset()
            raise pending
        if stopped is not None and self._fault is None and (
                extension_fault is None or stopped.errno != UC_ERR_INSN_INVALID or self._memory_fault is not None):
            self._fault = self._fault_from_error(stopped)      # else the extension says why it refused the instruction
        if self._fault is None and extension_fault is not None:
            self._fault = (self._stray(extension_fault.pc) or
                           self.describe(extension_fault.kind, extension_fault.message, pc=extension_fault.pc))
        if self._fault is not None:
            return CallOutcome(None, self.guest_calls.annotate(self._fault))
        pc, value = self.arch.convention.exit_state(self.uc)
        if pc != RETURN_SENTINEL:
            kind = "timeout" if _clock() >= self.deadline else "instruction_budget"
            message = (f"the entry ran for {timeout_s:g} s without returning" if kind == "timeout"
                       else f"the entry executed {budget} instructions without returning (a runaway loop?)")
            return CallOutcome(None, self.guest_calls.annotate(self.describe(kind, message, pc=pc)))
        value &= 0xFFFFFFFF
        return CallOutcome(value - (1 << 32) if value & 0x80000000 else value, None)

    def probe_reads(self, function: int, args: list[int], begin: int, end: int, budget: int) -> list[tuple[int, int]]:
        """(address, size) of each load `function(*args)` makes from [begin, end) before it first calls a stub.

        emu.dsl.launch.discovery learns how an export reads its arguments from this.  The run stops at
        the first stub call, so no stub runs and no CUDA state changes; a fault or the budget ends it
        too.  The extension's own loads (AVX) are reported as well: Unicorn's hook never sees them.
        """
        reads: list[tuple[int, int]] = []

        def observe(address: int, size: int) -> None:
            if begin <= address < end:
                reads.append((address, size))

        hook = self.uc.hook_add(UC_HOOK_MEM_READ, lambda _uc, _access, address, size, _value, _data: observe(address, size),
                                begin=begin, end=end - 1)
        if self.extension is not None:
            self.extension.observe_reads(observe)
        # Code translated before the hook existed would not report its loads; only the image's runs here.
        code = [(segment.address, [(0, len(segment.data))]) for segment in self.image.segments if segment.perms & PERM_X]
        for address, everything in code:
            self.mapping.drop_translations(address, everything)
        dispatcher, self.dispatcher = self.dispatcher, None      # a stub call then reaches _on_unusual_stub
        self._probing = True
        try:
            self.call(function, args, budget)
        finally:
            self.dispatcher, self._probing = dispatcher, False
            self.uc.hook_del(hook)
            if self.extension is not None:
                self.extension.observe_reads(None)
            for address, everything in code:           # translated with the hook: not for the real run
                self.mapping.drop_translations(address, everything)
        return reads

    # -- hooks ----------------------------------------------------------------------
    def _on_stub_entry(self, _engine, _address: int, _size: int, _key) -> None:
        """The stub trap's C-level hook: nothing may escape a ctypes callback."""
        try:
            self._on_stub(_READ_FRAME(self._frame_view, 0))
        except BaseException as error:   # KeyboardInterrupt, a bug in fault reporting
            self.hold(error)

    def _on_site_entry(self, _engine, address: int, size: int, _key) -> None:
        """A vector instruction's C-level hook: the extension carries it out."""
        try:
            self.extension.on_site(address)      # sites are hooked only when there is an extension
        except BaseException as error:
            self.hold(error)

    def hold(self, error: BaseException) -> None:
        """Stop the emulation and keep `error` for call() to raise once emu_start returns."""
        self._pending = error
        self.uc.emu_stop()

    def _on_stub(self, frame: tuple[int, ...]) -> None:
        """Answer the call the frame holds: the slot's address says which stub was called."""
        address = frame[FRAME_SLOT]
        entry = self.bound.get(address)
        dispatcher = self.dispatcher
        if entry is None or dispatcher is None or _clock() > self.deadline:
            self._on_unusual_stub(address)
            return
        symbol, target = entry
        uc = self.uc
        caller = "?"
        try:
            arity = target.arity if target is not None else 0         # mostly all in registers: a slice of the frame
            raw = frame[:arity] if arity <= self._register_args else self._frame_args(frame, arity, uc)
            returns_to = frame[FRAME_RETURN]
            caller = self.image.locate(returns_to) if returns_to != GUEST_CALL_RESUME else self.guest_calls.caller()
            if target is not None:
                steps = dispatcher.call(uc, symbol, raw, caller, target)
                if steps is not None:      # a stub that calls back into the guest (emu.emulator.guest_calls)
                    self.guest_calls.start(steps, symbol, caller, frame[FRAME_SP], frame[FRAME_RETURN])
            else:
                dispatcher.call_missing(uc, symbol, caller)
        except Exception as error:  # never let a stub bug unwind through Unicorn's C frames
            self.stop_with(self.stub_fault(error, symbol, caller, address))

    def stub_fault(self, error: Exception, symbol: str, caller: str, pc: int) -> Fault:
        """The fault for a stub's answer that raised `error`."""
        if isinstance(error, StubStop):          # worded whole by the dispatcher
            return self.describe(error.kind, str(error), pc=pc)
        if isinstance(error, StubFailure):
            return self.describe(getattr(error, "kind", "stub_error"), f"{caller} calls {symbol}: {error}", pc=pc)
        return self.describe("stub_error", f"stub for {symbol} failed: {type(error).__name__}: {error}", pc=pc)

    def _on_unusual_stub(self, address: int) -> None:
        """Past the deadline, the entry path reached other than from a bound slot of the loaded binary, or a stub
        called during probe_reads, which ends the probe."""
        if self._probing:
            self.uc.emu_stop()
        elif _clock() > self.deadline:
            self.stop_with(self.describe("timeout", "the entry ran past its wall-clock timeout", pc=address))
        else:
            self.stop_with(self.describe("unmapped_fetch", f"execution reached emu's stub entry path from {address:#x}, "
                                      "not from a stub slot of the loaded object", pc=self.arch.cpu.pc(self.uc)))

    def set_stub_result(self, _uc, value: int) -> None:
        """What the stub being answered returns: the entry path loads it past the hooked instruction."""
        _PACK_U64(self._frame_view, STUB_RESULT - STUB_FRAME, value & 0xFFFF_FFFF_FFFF_FFFF)

    def _on_bad_memory(self, uc, access, address, size, value, user_data) -> bool:
        self._memory_fault = (_ACCESS_KIND.get(access, "cpu_exception"), address)
        return False

    def stop_with(self, fault: Fault) -> None:
        self._fault = fault
        self.uc.emu_stop()

    # -- fault reports ----------------------------------------------------------------
    def _stray(self, pc: int) -> Fault | None:
        """The fault for an instruction the stub window's fill refused: execution got there but not through a call."""
        if STUB_BASE <= pc < STUB_RETURN:
            return self.describe("unmapped_fetch", f"execution reached {pc:#x}, inside emu's stub window but not at a stub", pc=pc)
        return None

    def _fault_from_error(self, error: UcError) -> Fault:
        pc = self.arch.cpu.pc(self.uc)
        stray = self._stray(pc) if self._memory_fault is None else None
        if stray is not None:
            return stray
        if self._memory_fault is not None:
            kind, address = self._memory_fault
            what = {"unmapped": "unmapped memory", "protected": "memory whose page permissions forbid it"}[kind.split("_")[0]]
            verb = {"read": "read from", "write": "write to", "fetch": "execute"}[kind.split("_")[1]]
            return self.describe(kind, f"tried to {verb} {what} at {address:#x}", pc=pc, address=address)
        kind = _ERROR_KIND.get(error.errno, "cpu_exception")
        if kind == "cpu_exception":   # AArch64 raises UC_ERR_EXCEPTION for udf and undefined encodings
            try:
                text = self.arch.cpu.disassemble(bytes(self.uc.mem_read(pc, 16)), pc)
            except UcError:
                text = ""
            if text.startswith(("udf", "ud2", "(undecodable")):
                return self.describe("invalid_instruction", f"invalid instruction '{text}' (undefined on hardware)", pc=pc)
        return self.describe(kind, f"the CPU stopped: {error}", pc=pc)

    def locate(self, address: int) -> str:
        """`address` as function+offset in the loaded binary."""
        return self.image.locate(address) if self.image else f"{address:#x}"

    def describe(self, kind: str, message: str, pc: int, address: int | None = None) -> Fault:
        location = self.locate(pc)
        try:
            instruction = self.arch.cpu.disassemble(bytes(self.uc.mem_read(pc, 16)), pc)
        except UcError:
            instruction = None
        return Fault(kind=kind, message=f"{message} (at {location})", address=address, pc=pc, location=location,
                     instruction=instruction, registers=self.arch.cpu.registers(self.uc))


_MACHINES: dict[str, list[Machine]] = {}      # arch -> the emulators for objects, the first made first
# Two objects whose code shares a content-chosen slot (emu.binary.elf.relocatable) would rewrite each other's code and
# lose its translations on every switch between them (about 1 ms each): an object whose slots hold another object's
# bytes in every emulator so far gets one more, up to this many per architecture (each about 3 MiB, plus its
# translations); past it, the first emulator takes the object and rewrites the slot (emu.emulator.mapping).
MAX_OBJECT_MACHINES = 4
# Every shared library lays out at the one library base (emu.binary.elf.shared), so two libraries run in turn in one
# emulator would each unmap the other and lose their translated code (about 4x the run of the `.o` they were linked
# from).  Each library gets an emulator of its own instead, up to this many per architecture (about 3 MiB each, plus
# its translations): past it, the one used longest ago is handed to the next library (its mapping replaces the old).
MAX_LIBRARY_MACHINES = 16
_LIBRARY_MACHINES: dict[str, dict[str, Machine]] = {}      # arch -> library sha256 -> its emulator, used longest ago first


def machine_for(arch: Architecture, image: LoadedBinary | None = None) -> Machine:
    """The process-wide emulator for an architecture (created on first use); for an object `image`, the first
    emulator where its slots hold no other object's bytes; for a shared library, the emulator kept for that library
    (objects and libraries run in turn then never swap each other's mapping)."""
    if image is not None and "library" in image.extras:
        return _library_machine(arch, image.sha256)
    machines = _MACHINES.get(arch.name)
    if machines is None:
        machines = _MACHINES[arch.name] = [Machine(arch)]
    if image is None:
        return machines[0]
    for machine in machines:
        if not machine.mapping.holds_other_code(image):
            return machine
    if len(machines) < MAX_OBJECT_MACHINES:
        machines.append(Machine(arch))
        return machines[-1]
    return machines[0]


def _library_machine(arch: Architecture, sha256: str) -> Machine:
    machines = _LIBRARY_MACHINES.setdefault(arch.name, {})
    machine = machines.pop(sha256, None)               # used again: now the most recently used
    if machine is None:
        if machines and len(machines) >= MAX_LIBRARY_MACHINES:
            machine = machines.pop(next(iter(machines)))
        else:
            machine = Machine(arch)
    machines[sha256] = machine
    return machine
