"""Run entries of one object against a fresh CUDA runtime model and collect an ObjectRun.

Each entry is called as the export's own header calls it: the loaders of a 4.3 export take
the library handle by value, later ones a pointer to its slot (emu.dsl.generations).
"""
from __future__ import annotations

import os
import struct
from typing import TYPE_CHECKING, Callable

from ..arch import architecture
from ..cuda.config import RuntimeConfig
from ..cuda.loading import library_image
from ..cuda.runtime import CudaRuntime
from ..dsl.entries import DEFAULT_ENTRIES, HEADER_DEVICE_COUNT, KINDS, TVM_FFI_ENTRIES, EntrySpec
from ..dsl.exports import choose
from ..dsl.tvm_ffi.export import exit_destructors
from ..errors import BadInput, EmuError, ObjectFormatError
from ..dsl.generations import FORMATS, UNKNOWN_CONVENTION, unknown_format
from ..cache.loaded import load_image
from ..binary.bindings import bind
from ..emulator.machine import DEFAULT_BUDGET, DEFAULT_TIMEOUT_S, Machine, machine_for
from ..stubs.dispatch import StubDispatcher, slot_plans
from ..stubs.families import provides
from ..support.hotpath import build_record
from .trace import TRACE_VERSION, CallRecord, EntryRun, LaunchFeasibility, ObjectRun, ProfileVerdict

if TYPE_CHECKING:
    from ..binary.image import LoadedBinary


def _bound(image: LoadedBinary) -> tuple[LoadedBinary, dict]:
    """The binary to map and its binding table: the imports, and functions it defines that a stub answers
    (emu.binary.bindings), each slot with its stub's plan.  Worked out once per loaded binary (its memo)."""
    key = (_bound, provides)
    found = image.memo.get(key)
    if found is None:
        bindings = bind(image, provides)
        # the binary itself is kept as None: a binary whose memo held it would wait for the cyclic collector
        found = image.memo[key] = (None if bindings.binary is image else bindings.binary, slot_plans(bindings.symbols))
    binary, table = found
    return (image if binary is None else binary), table


def _format_warning(image: LoadedBinary, export) -> str | None:
    """Why emu does not know the export's format, or None (emu.dsl.generations): once per loaded binary and export."""
    key = (_format_warning, export.name)
    if key not in image.memo:       # a TVM-FFI export carries no version or kernel_info: none is missing
        image.memo[key] = None if export.ffi_name else unknown_format(export, image.data_symbols.__contains__)
    return image.memo[key]


class ObjectSession:
    """What one object run shares across its entries: the loaded image, the library slot and packed args."""

    def __init__(self, machine: Machine, library_handle: int, image: LoadedBinary, exports: list):
        self.machine, self.image = machine, image
        self.exports = exports              # every export of the file (a process exit runs each one's destructor)
        base = machine.host.cursor = (machine.host.cursor + 15) & ~15
        # One write: the library slot, a pointer to it (cudaLibrary_t *libraryPtr), ret, device.
        self.library_slot, self.library_pointer, self.ret_slot, self.device_slot = base, base + 8, base + 16, base + 24
        machine.host.alloc(struct.pack("<QQii", library_handle, self.library_slot, 0, 0), align=16)

    def packed(self, *pointers: int) -> int:
        return self.machine.host.alloc(struct.pack(f"<{len(pointers)}Q", *pointers))

    def read_ret(self) -> int:
        return struct.unpack("<i", self.machine.host.read(self.ret_slot, 4))[0]

    def read_library(self) -> int:
        return struct.unpack("<Q", self.machine.host.read(self.library_slot, 8))[0]


def run_object(path: str, config: RuntimeConfig | None = None, entries: list[EntrySpec] | None = None,
               budget: int = DEFAULT_BUDGET, timeout_s: float = DEFAULT_TIMEOUT_S, export: str | None = None) -> ObjectRun:
    """Run `entries` of one export of the object in order (`export`: its name; None: the object's only one);
    an entry that cannot be built raises EntryNotRun holding what ran before it."""
    config = config or RuntimeConfig()
    image, exports = load_image(path)
    export = choose(exports, export or _named_by_entries(entries, path), path)
    if entries is None:
        entries = TVM_FFI_ENTRIES if export.ffi_name else DEFAULT_ENTRIES
    arch = architecture(image.arch)
    machine = machine_for(arch, image)
    machine.load(*_bound(image))
    runtime = CudaRuntime(config, export.kernels, library_image(image, export.binary))
    dispatcher = StubDispatcher(runtime, machine.set_stub_result, arch.convention)
    machine.dispatcher = dispatcher
    session = ObjectSession(machine, config.library_handle, image, exports)
    runs: list[EntryRun] = []
    feasibility: list[LaunchFeasibility] = []

    def call(entry: str, args: list[int], shown: dict[str, int], packed_ret: bool = False, launch: dict | None = None,
             read_outcome: Callable[[int | None], int | None] | None = None,
             read_raised: Callable[[], dict | None] | None = None, symbols: list[str] | None = None) -> bool:
        """Run the entry's function (or `symbols`, one after another until one faults: a process exit's
        destructors) and record it as one EntryRun."""
        symbols = symbols or [export.entry_symbol(entry)]
        addresses = [image.functions.get(symbol) for symbol in symbols]
        if None in addresses:
            symbol = symbols[addresses.index(None)]
            raise ObjectFormatError(f"the export has no function {symbol} for entry {entry}", path=path)
        dispatcher.entry = entry
        if packed_ret:
            machine.host.write(session.ret_slot, struct.pack("<i", -1))
        first_call = dispatcher.recorded()
        for address in addresses:
            outcome = machine.call(address, args, budget, timeout_s)
            if outcome.fault is not None:
                break
        returned = outcome.returned
        if packed_ret and outcome.fault is None:
            returned = session.read_ret()
        elif read_outcome is not None and outcome.fault is None:      # the launch ABI's (emu.abi)
            returned = read_outcome(returned)
        raised = read_raised() if read_raised is not None else None
        runs.append(build_record(EntryRun, dict(entry=entry, function=", ".join(symbols), args=shown, returned=returned,
                                              fault=outcome.fault, raised=raised,
                                              first_call=first_call, end_call=dispatcher.recorded(), launch=launch)))
        if launch is not None:
            feasibility.extend(_feasibility(runtime, dispatcher.calls, first_call, entry))
        return outcome.fault is None

    def result() -> ObjectRun:
        return build_record(ObjectRun, dict(trace_version=TRACE_VERSION, object=str(path), arch=image.arch,
                                            export=export.name, prefix=export.prefix, entries=runs, calls=dispatcher.calls,
                                            state=runtime.snapshot(),
                                            format_warning=_format_warning(image, export),
                                            launch_feasibility=feasibility))

    for spec in entries:
        try:
            ok = _run_entry(spec, call, session, export, runtime, dispatcher, path)
        except EmuError as error:
            raise EntryNotRun(spec.label(), error, _explained(error, export, spec.name, path), result()) from None
        if not ok:
            break
    return result()


def _feasibility(runtime: CudaRuntime, calls: list[CallRecord], first: int, entry: str) -> list[LaunchFeasibility]:
    """Each launch call of the entry, judged on every profile (emu.cuda.feasibility)."""
    from ..cuda.feasibility import LAUNCH_SYMBOLS, launch_feasibility
    judged = []
    for call in calls[first:]:
        if call.symbol in LAUNCH_SYMBOLS:
            verdicts = launch_feasibility(runtime, call.symbol, call.args)
            if verdicts is not None:
                judged.append(build_record(LaunchFeasibility, dict(
                    call=call.index, entry=entry, symbol=call.symbol,
                    profiles=[build_record(ProfileVerdict, v) for v in verdicts])))
    return judged


class EntryNotRun(BadInput):
    """An entry could not be started (e.g. the launch's arguments cannot be built); `run` holds what ran before it."""

    def __init__(self, entry: str, cause: EmuError, message: str, run: ObjectRun):
        self.entry, self.cause, self.run = entry, cause, run
        self.exit_code = cause.exit_code
        ran = f"; the {len(run.entries)} entries before it ran and are traced" if run.entries else ""
        super().__init__(f"entry {entry} was not run: {message.rstrip('.')}{ran}", path=cause.path)


def _explained(error: EmuError, export, entry: str, path: str) -> str:
    """The cause, with what the export's generation lacks when that is why (4.3 exports have no args_spec)."""
    header = os.path.splitext(path)[0] + ".h"
    if export.format == "4.3" and entry == "launch" and not os.path.isfile(header):
        return (f"{error.message.rstrip('.')} (a 4.3 export, from nvidia-cutlass-dsl 4.3.x, has no {export.prefix}_args_spec: "
                f"its header's {export.header_wrapper}, {os.path.basename(header)}, is the only description of the "
                "launch arguments)")
    return error.message


def _library_argument(session: ObjectSession, by_value: bool) -> int:
    """What a cuda_load form gets for the library: the handle itself (4.3) or the address of its slot."""
    return session.read_library() if by_value else session.library_slot


def _run_entry(spec: EntrySpec, call, session: ObjectSession, export, runtime: CudaRuntime,
               dispatcher: StubDispatcher, path: str) -> bool:
    name, device = spec.name, spec.device or 0
    kind = KINDS[name]
    if name == "module_load":
        return _module_load(call, session, runtime, dispatcher, export, path)
    if name == "process_exit":      # void(void) destructors: recorded as returning 0
        return call(name, [], {}, read_outcome=lambda returned: 0,
                    symbols=exit_destructors(session.exports, session.image.functions))
    if name == "tvm_ffi" or (name == "launch" and export.ffi_name):
        return _tvm_ffi(spec, call, session, export, dispatcher, path)
    if name == "launch":
        from ..abi import launch_abi
        return launch_abi(export.launch_abi).run(call, session, export, path, spec.args)
    by_value = kind.loads and export.library_by_value
    if kind.loads and by_value is None:
        raise ObjectFormatError(UNKNOWN_CONVENTION.format(symbol=export.entry_symbol(name), prefix=export.prefix), path=path)
    shown = {"device": device} if kind.takes_device else {}
    if not kind.packed:
        library = _library_argument(session, by_value)
        return call(name, [library, device] if kind.takes_device else [library], shown)
    # packed: a pointer to each argument; the library argument is the slot (by value) or libraryPtr
    pointers = [session.library_slot if by_value else session.library_pointer]
    if kind.takes_device:
        session.machine.host.write(session.device_slot, struct.pack("<i", device))
        pointers.append(session.device_slot)
    return call(name, [session.packed(*pointers, session.ret_slot)], shown, packed_ret=True)


def _named_by_entries(entries: list[EntrySpec] | None, path: str) -> str | None:
    """The export the tvm_ffi entries name (`export:`), when they name one; BadInput when they name several."""
    named = {spec.export for spec in entries or () if spec.export is not None}
    if len(named) > 1:
        raise BadInput(f"the tvm_ffi entries name exports {', '.join(sorted(named))}: one run calls one export "
                       "(list each object once per export)", path=path)
    return named.pop() if named else None


def _tvm_ffi(spec: EntrySpec, call, session: ObjectSession, export, dispatcher: StubDispatcher, path: str) -> bool:
    """One call of a TVM-FFI export's __tvm_ffi_<name>, with the streams the framework set for it (`env_stream`)."""
    if not export.ffi_name:
        raise BadInput(f"entry tvm_ffi calls a TVM-FFI export's __tvm_ffi_<name>; export {export.name} is a CuTe-ABI "
                       "export, launched by the `launch` entry", path=path)
    if spec.name == "launch":
        raise BadInput(f"export {export.name} is a TVM-FFI export: it is called by the `tvm_ffi` entry "
                       f"(__tvm_ffi_{export.name}), not `launch`", path=path)
    if spec.export is not None and spec.export != export.name:
        raise BadInput(f"entry tvm_ffi names export {spec.export!r}, but this run calls {export.name!r}", path=path)
    from ..abi import launch_abi
    from ..stubs.families.tvm_ffi import FAMILY
    state = dispatcher.state(FAMILY)
    state.begin(spec.env_stream)
    return launch_abi(export.launch_abi).run(call, session, export, path, spec.args, read_raised=lambda: state.raised)


def _module_load(call, session: ObjectSession, runtime: CudaRuntime, dispatcher: StubDispatcher, export, path: str) -> bool:
    """The header's module load, as the export's generation writes it.

    4.4 and later (Kernel_Module_Load): init once, then load_to_device for every device.  The
    header calls cudaGetDeviceCount itself (not through the object); emu records that call too,
    with caller `header`, since its answer decides how many devices get loaded.
    4.3 (Kernel_Metadata_Load): init, and on success `_mlir_<prefix>_cuda_load` with the handle by
    value (the header exits the process on an error).  The header's own driver calls after it
    (cuCtxGetDevice, cuLibraryEnumerateKernels, cuKernelSetAttribute of attribute 8) are C in the
    header, not in the object: emu does not run them.
    """
    call_format = FORMATS[export.format]
    if call_format.library_by_value is None:
        raise ObjectFormatError(UNKNOWN_CONVENTION.format(symbol=export.entry_symbol("mlir_cuda_load_to_device"),
                                                          prefix=export.prefix), path=path)
    if not call("mlir_cuda_init", [session.packed(session.library_pointer, session.ret_slot)], {}, packed_ret=True):
        return False
    if not call_format.module_load_per_device:
        if session.read_ret() != 0:
            return True
        return call("mlir_cuda_load", [session.packed(session.library_slot, session.ret_slot)], {}, packed_ret=True)
    count = runtime.config.device_count
    dispatcher.record(dict(index=dispatcher.recorded(), entry="module_load", symbol=HEADER_DEVICE_COUNT, args={},
                           outputs={"count": count}, ret=0, injected=False, caller="header Kernel_Module_Load", inner_calls=0))
    packed = session.packed(session.library_pointer, session.device_slot, session.ret_slot)
    for device in range(count):
        session.machine.host.write(session.device_slot, struct.pack("<i", device))
        if not call("mlir_cuda_load_to_device", [packed], {"device": device}, packed_ret=True):
            return False
    return True
