"""The trace: typed records of every stub call and every entry run.

These models are emu's JSON contract (`python -m emu schema` prints their JSON Schema);
field names and meanings only ever grow.  Argument values are plain JSON: integers
(handles and pointers too), decoded C strings, and decoded structs as objects.
"""
from typing import Any, Literal

from pydantic import Field

from ..arch import NAMES
from .state import RuntimeSnapshot
from ..emulator.faults import Fault     # noqa: F401 - part of the contract; defined where the emulator makes it
from ..support.model import Model, empty_list

TRACE_VERSION = 4          # 2: every run names its export (`export`); 3: a tvm_ffi entry's `raised` error;
                           # 4: each call's `inner_calls` (the calls made inside a stub that calls back)


class CallRecord(Model):
    """One call from the object into a stubbed (or missing) symbol."""

    index: int = Field(description="position of this call in the object's run, from 0")
    entry: str = Field(description="the entry that was running (cuda_load, cuda_load_to_device, ...)")
    symbol: str = Field(description="the undefined symbol called, e.g. _cudaFuncSetAttribute")
    args: dict[str, Any] = Field(description="arguments by their CUDA parameter names: integers, decoded C strings, decoded structs")
    outputs: dict[str, int] = Field(default_factory=dict, description="values the stub wrote through out-parameters, by parameter name")
    ret: int = Field(description="the value returned (a cudaError_t / CUresult)")
    injected: bool = Field(default=False, description="true when the scenario injected this return value")
    caller: str = Field(description="the return address as function+offset inside the object")
    inner_calls: int = Field(default=0, description="how many calls were made inside this one, recorded just before it: "
                             "a stub that calls back into the object (cuda_dialect_init_library_once runs its loaders) "
                             "is recorded when it returns, after them, as a native run sees it; 0 for any other call")


class EntryRun(Model):
    """One entry point run from a fresh stack to its return (or a fault)."""

    entry: str = Field(description="entry name: cuda_init, cuda_load, cuda_load_to_device, mlir_cuda_init, mlir_cuda_load_to_device, module_load, launch, tvm_ffi, process_exit")
    function: str = Field(description="the object symbol that was called (process_exit: every destructor the exit runs, comma-separated, in order)")
    args: dict[str, int] = Field(default_factory=dict, description="the arguments the entry was given (device, ...)")
    returned: int | None = Field(description="the entry's cudaError_t result (from its return register or its packed ret slot); "
                                 "for tvm_ffi the int32 it returned (0, or -1 with an error raised), for process_exit (void) 0; null on a fault")
    fault: Fault | None = Field(default=None, description="set when the entry did not return")
    raised: dict[str, str] | None = Field(default=None, description="tvm_ffi only: the error the entry raised through "
                                          "the TVM-FFI error setters, {kind, message} (what Python raises: `kind: "
                                          "message`); null when it raised none")
    first_call: int = Field(default=0, description="index of the entry's first call in ObjectRun.calls")
    end_call: int = Field(default=0, description="index one past the entry's last call in ObjectRun.calls")
    launch: dict[str, Any] | None = Field(default=None, description="launch only: the arguments it ran with, "
                                          "{signature: header|args_spec, args: {parameter: value as written}, given: [names the "
                                          "user set], layouts: {tensor: its struct's C fields}, handles: [parameters that are a "
                                          "stream or a pointer], args_file: the <prefix>.args.json read, or null}; tvm_ffi: {signature: the "
                                          "compiled signature the entry quotes, given: whether the args were given, args: "
                                          "[each argument as passed, in the argument form], result: the result cell read "
                                          "back, {type_index, value}}")


class ProfileVerdict(Model):
    """What one device profile's driver would answer for a launch (emu.cuda.feasibility)."""

    profile: str = Field(description="the profile (h200, a100, b200)")
    device_name: str = Field(description="its device's name")
    measured: bool = Field(description="false: the answer rests on the profile's published figures, not on measurement")
    accepted: bool = Field(description="true when the launch would be accepted")
    error: int = Field(description="the cudaError_t the launch gets there (0: accepted; 209: the device runs no image of "
                       "the export's GPU binary)")
    error_name: str = Field(description="its name (cudaErrorInvalidClusterSize, ...)")
    reason: str | None = Field(default=None, description="why it is refused, from the same check that refuses it")
    caveat: str | None = Field(default=None, description="set when the answer rests on less than the run knew: why "
                               "(the run's profile did not load the kernel, so the attributes its loaders set are unknown)")


class LaunchFeasibility(Model):
    """One launch call of the run, judged on every device profile emu has."""

    call: int = Field(description="index of the launch call in ObjectRun.calls")
    entry: str = Field(description="the entry that made it")
    symbol: str = Field(description="_cudaLaunchKernelEx or _cudaLaunchKernel")
    profiles: list[ProfileVerdict] = Field(description="one verdict per profile, the run's profile's from the state the "
                                           "launch was judged in")


class ObjectRun(Model):
    """Everything one object did in one run."""

    trace_version: int = Field(default=TRACE_VERSION, description="version of this JSON contract")
    object: str = Field(description="path of the object file")
    arch: Literal[NAMES] = Field(description="the object's host architecture")
    export: str = Field(description="the export this run ran: an object may hold several, each run on its own runtime "
                        "(its prefix, for the CuTe ABI)")
    prefix: str = Field(description="the export prefix detected from the symbols")
    entries: list[EntryRun] = Field(description="entries in the order they ran")
    calls: list[CallRecord] = Field(description="every stub call, in order, across all entries")
    state: RuntimeSnapshot = Field(default_factory=RuntimeSnapshot, description="the CUDA runtime model's state after the run")
    format_warning: str | None = Field(default=None, description="set when emu does not know the export's format or "
                                       "metadata (an unknown <prefix>_version, no or unreadable kernel_info, a format "
                                       "the object does not say): why; what this run recorded may not be what the "
                                       "loaders do on a GPU. Null for every format emu knows")

    launch_feasibility: list[LaunchFeasibility] = Field(default_factory=empty_list, description="each launch call the run "
                                                        "made, judged on every device profile (empty without a launch)")

    @property
    def fault(self) -> Fault | None:
        return next((e.fault for e in self.entries if e.fault), None)
