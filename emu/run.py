"""Run entries of one object against a fresh CUDA runtime model and collect an ObjectRun."""
from __future__ import annotations

import struct

from .arch import architecture
from .cuda.config import RuntimeConfig
from .cuda.runtime import CudaRuntime
from .entries import DEFAULT_ENTRIES, EntrySpec
from .errors import ObjectFormatError
from .images import load_image
from .machine import DEFAULT_BUDGET, DEFAULT_TIMEOUT_S, Machine, machine_for
from .stubs import StubDispatcher
from .records import CallRecord, EntryRun, ObjectRun, fast_model


class ObjectSession:
    """The memory one object run shares across its entries: the library slot and packed args."""

    def __init__(self, machine: Machine, library_handle: int):
        self.machine = machine
        base = machine.host.cursor = (machine.host.cursor + 15) & ~15
        # One write: the library slot, a pointer to it (cudaLibrary_t *libraryPtr), ret, device.
        self.library_slot, self.library_pointer, self.ret_slot, self.device_slot = base, base + 8, base + 16, base + 24
        machine.host.alloc(struct.pack("<QQii", library_handle, self.library_slot, 0, 0), align=16)

    def packed(self, *pointers: int) -> int:
        return self.machine.host.alloc(struct.pack(f"<{len(pointers)}Q", *pointers))

    def read_ret(self) -> int:
        return struct.unpack("<i", self.machine.host.read(self.ret_slot, 4))[0]


def run_object(path: str, config: RuntimeConfig | None = None, entries: list[EntrySpec] | None = None,
               budget: int = DEFAULT_BUDGET, timeout_s: float = DEFAULT_TIMEOUT_S) -> ObjectRun:
    config = config or RuntimeConfig()
    entries = DEFAULT_ENTRIES if entries is None else entries
    image, export = load_image(path)
    arch = architecture(image.obj.arch)
    machine = machine_for(arch)
    machine.load(image)
    runtime = CudaRuntime(config, export.kernels)
    dispatcher = StubDispatcher(runtime, machine.set_stub_result)
    machine.dispatcher = dispatcher
    session = ObjectSession(machine, config.library_handle)
    runs: list[EntryRun] = []

    def call(entry: str, args: list[int], shown: dict[str, int], packed_ret: bool = False) -> bool:
        symbol = export.entry_symbol(entry)
        address = image.functions.get(symbol)
        if address is None:
            raise ObjectFormatError(f"the export has no function {symbol} for entry {entry}", path=path)
        dispatcher.entry = entry
        if packed_ret:
            machine.host.write(session.ret_slot, struct.pack("<i", -1))
        first_call = len(dispatcher.calls)
        outcome = machine.call(address, args, budget, timeout_s)
        returned = outcome.returned
        if packed_ret and outcome.fault is None:
            returned = session.read_ret()
        runs.append(fast_model(EntryRun, dict(entry=entry, function=symbol, args=shown, returned=returned,
                                              instructions=None, fault=outcome.fault,
                                              first_call=first_call, end_call=len(dispatcher.calls))))
        return outcome.fault is None

    for spec in entries:
        device = spec.device or 0
        name = spec.name
        if name in ("cuda_init", "cuda_load"):
            ok = call(name, [session.library_slot], {})
        elif name == "cuda_load_to_device":
            ok = call(name, [session.library_slot, device], {"device": device})
        elif name in ("mlir_cuda_init", "mlir_cuda_load"):
            ok = call(name, [session.packed(session.library_pointer, session.ret_slot)], {}, packed_ret=True)
        elif name == "mlir_cuda_load_to_device":
            machine.host.write(session.device_slot, struct.pack("<i", device))
            ok = call(name, [session.packed(session.library_pointer, session.device_slot, session.ret_slot)],
                      {"device": device}, packed_ret=True)
        elif name == "module_load":
            ok = _module_load(call, session, runtime, dispatcher, machine)
        else:  # launch
            from .launch import run_launch
            ok = run_launch(call, session, export, path)
        if not ok:
            break
    return fast_model(ObjectRun, dict(trace_version=1, object=str(path), arch=image.obj.arch, prefix=export.prefix,
                                      entries=runs, calls=dispatcher.calls, state=runtime.snapshot()))


def _module_load(call, session: ObjectSession, runtime: CudaRuntime, dispatcher: StubDispatcher, machine: Machine) -> bool:
    """The header's Kernel_Module_Load: init once, then load_to_device for every device.

    The header calls cudaGetDeviceCount itself (not through the object); emu records that
    call too, with caller `header`, since its answer decides how many devices get loaded.
    """
    if not call("mlir_cuda_init", [session.packed(session.library_pointer, session.ret_slot)], {}, packed_ret=True):
        return False
    count = runtime.config.device_count
    dispatcher.calls.append(fast_model(CallRecord, dict(index=len(dispatcher.calls), entry="module_load",
                                                        symbol="cudaGetDeviceCount", args={}, outputs={"count": count},
                                                        ret=0, injected=False, caller="header Kernel_Module_Load")))
    packed = session.packed(session.library_pointer, session.device_slot, session.ret_slot)
    for device in range(count):
        machine.host.write(session.device_slot, struct.pack("<i", device))
        if not call("mlir_cuda_load_to_device", [packed], {"device": device}, packed_ret=True):
            return False
    return True
