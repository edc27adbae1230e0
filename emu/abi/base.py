"""What a calling ABI of an export's launch entry is: how its signature is known, how the
arguments reach it, how its outcome comes back.

The CuTe DSL's `_mlir_<prefix>__mlir_ciface_<fn>(void **args, int32_t num_args)` (emu.abi.ciface)
takes a pointer per argument and stores an int32 through the last one; a TVM-FFI object's
`int32_t __tvm_ffi_<name>(void *self, const TVMFFIAny *args, int32_t num_args, TVMFFIAny *result)`
takes tagged values and returns its int32.  Both fit this: a plan (the signature and every value),
marshalled into guest memory and register arguments, then the outcome read back.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, NamedTuple, Protocol


class GuestMemory(Protocol):
    """The host scratch memory a run writes arguments into (emu.emulator.machine.HostMemory)."""

    def alloc(self, data: bytes, align: int = 16) -> int: ...

    def write(self, address: int, data: bytes) -> None: ...

    def read(self, address: int, size: int) -> bytes: ...


class LaunchSite(NamedTuple):
    """The launch entry of one loaded object, in the run that calls it."""

    path: str              # the object file: messages name it; files beside it may describe the launch
    export: Any            # emu.dsl.exports.Export
    image: Any             # emu.binary.elf.relocatable.Image, as loaded for the run
    session: Any           # emu.run.session.ObjectSession: the machine, and the word reserved for the outcome


class LaunchPlan(NamedTuple):
    """What a launch runs with: the ABI's signature, every value by parameter name, and what the trace shows."""

    signature: Any
    values: dict[str, Any]
    record: dict[str, Any]     # EntryRun.launch


class EntryArguments(NamedTuple):
    """The entry's register arguments once the values are in guest memory."""

    registers: list[int]
    shown: dict[str, int]      # EntryRun.args
    outcome_at: int | None     # where the entry stores its outcome (None: it returns it)


class LaunchAbi(ABC):
    """One calling ABI of a launch entry (emu.abi lists them by name)."""

    name: ClassVar[str]

    @abstractmethod
    def plan(self, site: LaunchSite, given: dict[str, Any] | None) -> LaunchPlan:
        """The entry's signature and a value for every parameter (`given` by name, the rest defaulted)."""

    @abstractmethod
    def marshal(self, plan: LaunchPlan, memory: GuestMemory, outcome_slot: int) -> EntryArguments:
        """Write the values into guest memory as the ABI lays them out; `outcome_slot` is a word the run
        reserved, for an ABI whose entry stores its outcome."""

    @abstractmethod
    def outcome(self, memory: GuestMemory, arguments: EntryArguments, returned: int | None) -> int | None:
        """The launch's result once the entry returned (`returned`: its return register)."""

    def run(self, call: Callable[..., bool], session: Any, export: Any, path: str, given: dict[str, Any] | None) -> bool:
        """Plan, marshal and call the launch entry of the object `session` runs, through the run's `call`
        (emu.run.session); True when it returned."""
        plan = self.plan(LaunchSite(path, export, session.image, session), given)
        memory = session.machine.host
        arguments = self.marshal(plan, memory, session.ret_slot)
        return call("launch", arguments.registers, arguments.shown, launch=plan.record,
                    read_outcome=lambda returned: self.outcome(memory, arguments, returned))
