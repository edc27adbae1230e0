"""The probe's harness for a TVM-FFI object: no header, so the lazy load its entry makes is replayed instead.

A TVM-FFI object (`__tvm_ffi_<name>`, FIELD_NOTES section 9) has no header and no launch wrapper an
application could call without a tensor framework: its entry loads the GPU binary on its first call
(`cuda_dialect_init_library_once`: `cuda_init`, `cudaGetDeviceCount`, `cuda_load_to_device` for each device)
and then launches.  The harness therefore runs emu's own trace of that entry (profile h200, one device)
and replays, on the real device, exactly the lazy load the trace recorded:

- step 0 (init): `cudaLibraryLoadData` of the object's own GPU binary (the container at its
  `kernels_binary`, the bytes the loader passes; emu extracts them), with no options, as the loader does;
- step 1: `cudaGetDeviceCount`;
- step 2 (load_to_device(0)): every `cudaLibraryGetKernel` and every attribute setting
  (`cudaKernelSetAttributeForDevice`, `cudaFuncSetAttribute`) the trace recorded, with the values it
  recorded, in order, stopping at the first error as the loader does.

The `load` fact is the first error of those steps, `load_step` each step that ran.  Then come the same
attribute reads, occupancy sweep, cluster occupancy and setters the CuTe-ABI harness makes; the launch
configurations the trace recorded (`probe_traced_launch`) take the place of the wrapper's own, which the
TVM-FFI harness does not make (no `launch` via wrapper, no `wrapper_return`).
"""
from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BadInput
from .harness import _PRELUDE, _names_array, c_string, fatbin_array

TRACE_RUNTIME = {"profile": "h200", "device_count": 1}     # the measured device, alone on its machine
LIBRARY_LOAD = "_cudaLibraryLoadData"
DEVICE_COUNT = "cudaGetDeviceCount"
GET_KERNEL = "_cudaLibraryGetKernel"
SETTERS = {"_cudaKernelSetAttributeForDevice": "cudaKernelSetAttributeForDevice", "_cudaFuncSetAttribute": "cudaFuncSetAttribute"}
# What else a lazy load calls: reads and error reporting, which change nothing on the device.
READS = {"_cudaDeviceGetAttribute", "_cuKernelGetAttribute", "_cudaGetDevice", "cudaGetErrorString", "cudaGetErrorName",
         "TVMFFIErrorSetRaisedFromCStr", "TVMFFIErrorSetRaisedFromCStrParts", "CuteDSLRT_TVMFFISetRaisedCudaError"}
REPLAYED = {LIBRARY_LOAD, DEVICE_COUNT, GET_KERNEL, *SETTERS}
CLUSTER_DIMENSION = 4


class TvmFfiProbeError(BadInput):
    """The object is TVM-FFI but its lazy load cannot be replayed faithfully."""


@dataclass(frozen=True)
class TracedLaunch:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem: int
    cluster: tuple[int, int, int] | None        # the launch's cluster dimension attribute, None without one


@dataclass
class LazyLoad:
    """What the harness replays: the GPU binary, the kernels the object names, the load's steps, its launches."""

    export: str
    binary: bytes
    kernels: list[str]
    replay: list[tuple] = field(default_factory=list)   # ("get_kernel", name) | ("set", api, name, attribute, value, device)
    launches: list[TracedLaunch] = field(default_factory=list)


def is_tvm_ffi(path: Path) -> bool:
    from ..cache.loaded import load_image
    _image, exports = load_image(str(path))
    return any(export.ffi_name for export in exports)


def traced_load(path: Path) -> LazyLoad:
    """Run the object's entry in emu and read back the lazy load and the launches it made."""
    from ..api import trace
    from ..cache.loaded import load_image
    from ..errors import UnknownFormatWarning
    from ..gpu_binary.fatbin import container_at
    image, exports = load_image(str(path))
    if len(exports) != 1:
        raise TvmFfiProbeError(f"holds {len(exports)} TVM-FFI exports ({', '.join(e.name for e in exports)}); the probe "
                               "measures one export a file: probe the objects it was linked from", path=str(path))
    [export] = exports
    if export.binary is None:
        raise TvmFfiProbeError(f"export {export.name} has no GPU binary (kernels_binary) emu can find", path=str(path))
    with warnings.catch_warnings():             # an unknown format is still traced; the device answers for itself
        warnings.simplefilter("ignore", UnknownFormatWarning)
        run = trace(str(path), runtime=TRACE_RUNTIME)
    load = LazyLoad(export.name, container_at(image.read, export.binary), list(export.kernels))
    load.replay = _replay(run, export.binary, str(path))
    load.launches = [_launch(record) for record in run.state.launches]
    return load


def lazy_load_calls(run) -> list | None:
    """The calls of the first lazy load of a run (those recorded inside its first cuda_dialect_init_library_once),
    None when it made none."""
    first = next((call for call in run.calls if call.symbol == "cuda_dialect_init_library_once" and call.inner_calls), None)
    return None if first is None else run.calls[first.index - first.inner_calls:first.index]


def lazy_load_error(run) -> int:
    """The first error of the lazy load's steps the harness replays (its `load` fact), as a run of the entry got it."""
    calls = lazy_load_calls(run) or []
    return next((call.ret for call in calls if call.ret and call.symbol in REPLAYED), 0)


def _replay(run, binary: int, path: str) -> list[tuple]:
    """The state-changing calls of the first lazy load, with kernel handles turned back into names."""
    calls = lazy_load_calls(run)
    if calls is None:
        raise TvmFfiProbeError(f"emu's run of the entry made no lazy load (cuda_dialect_init_library_once with the "
                               f"loaders' calls inside): {_why(run)}", path=path)
    names: dict[int, str] = {}
    replay = []
    for call in calls:
        if call.symbol == LIBRARY_LOAD:
            if call.args.get("code") != binary:
                raise TvmFfiProbeError(f"the lazy load loads the binary at {_hex(call.args.get('code'))}, not the "
                                       f"export's kernels_binary at {binary:#x}", path=path)
        elif call.symbol == GET_KERNEL:
            names[call.outputs.get("pKernel", 0)] = call.args["name"]
            replay.append(("get_kernel", call.args["name"]))
        elif call.symbol in SETTERS:
            handle = call.args.get("kernel", call.args.get("func"))
            if handle not in names:
                raise TvmFfiProbeError(f"the lazy load sets attribute {call.args.get('attr')} on a kernel handle "
                                       f"{_hex(handle)} it did not get from cudaLibraryGetKernel", path=path)
            replay.append(("set", SETTERS[call.symbol], names[handle], call.args["attr"], call.args["value"],
                           call.args.get("device", 0)))
        elif call.symbol not in READS | {DEVICE_COUNT}:
            raise TvmFfiProbeError(f"the lazy load calls {call.symbol}, which the probe's TVM-FFI harness does not "
                                   "replay", path=path)
    return replay


def _hex(value) -> str:
    return f"{value:#x}" if isinstance(value, int) else repr(value)


def _why(run) -> str:
    stopped = [f"{e.entry} {'faulted: ' + str(e.fault) if e.fault else 'returned ' + str(e.returned)}" for e in run.entries]
    return ", ".join(stopped) or "no entry ran"


def _launch(record) -> TracedLaunch:
    cluster = None
    for attr in record.attrs:
        if attr.get("id") == CLUSTER_DIMENSION and isinstance(attr.get("value"), dict):
            cluster = tuple(int(attr["value"].get(axis, 1)) for axis in "xyz")
    return TracedLaunch(record.kernel, tuple(record.gridDim), tuple(record.blockDim), record.dynamicSmemBytes, cluster)


def tvm_ffi_harness(load: LazyLoad, object_label: str, sha256: str, sweep: bool) -> str:
    """C++ source replaying the lazy load, then measuring as the CuTe-ABI harness does."""
    handles = list(dict.fromkeys(step[1] if step[0] == "get_kernel" else step[2] for step in load.replay))
    body = []
    for step in load.replay:
        if step[0] == "get_kernel":
            body.append(f"  if ((r = cudaLibraryGetKernel(&k[{handles.index(step[1])}], lib, {c_string(step[1])}))) return r;\n")
        else:
            _set, api, name, attribute, value, device = step
            target = f"k[{handles.index(name)}]"
            call = (f"cudaKernelSetAttributeForDevice({target}, (cudaFuncAttribute){attribute}, {value}, {device})"
                    if api == "cudaKernelSetAttributeForDevice" else
                    f"cudaFuncSetAttribute((const void *){target}, (cudaFuncAttribute){attribute}, {value})")
            body.append(f"  if ((r = {call})) return r;\n")
    launches = "".join(
        f"  probe_traced_launch(lib, {c_string(l.kernel)}, {l.grid[0]}, {l.grid[1]}, {l.grid[2]}, {l.block[0]}, "
        f"{l.block[1]}, {l.block[2]}, {l.smem}ull, {int(l.cluster is not None)}, "
        f"{', '.join(str(v) for v in (l.cluster or (0, 0, 0)))});\n" for l in load.launches)
    return (_PRELUDE + "\n" + _names_array(load.kernels) + fatbin_array(load.binary) + f"""
// load_to_device(0) of TVM-FFI export {load.export}, as emu's trace of its entry recorded it.
static int replay_load_to_device(cudaLibrary_t lib) {{
  cudaKernel_t k[{max(1, len(handles))}] = {{}};
  int r = 0;
{"".join(body)}  (void)k; (void)lib;
  return r;
}}

int main(int argc, char **argv) {{
  probe_start(argc, argv, {c_string(object_label)}, {c_string(sha256)});
  probe_device();
  cudaLibrary_t lib = nullptr;
  int step[3] = {{0, 0, 0}}, count = 0, ran = 1;
  step[0] = cudaLibraryLoadData(&lib, FATBIN, nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (!step[0]) {{ step[1] = cudaGetDeviceCount(&count); ran = 2; }}
  if (!step[0] && !step[1]) {{ step[2] = replay_load_to_device(lib); ran = 3; }}
  cudaGetLastError();
  Line("load").num("result", step[0] ? step[0] : step[1] ? step[1] : step[2]).emit();
  for (int i = 0; i < ran; i++) Line("load_step").num("index", i).num("result", step[i]).emit();
  std::vector<Probed> kernels = probe_library_attributes(lib, KERNEL_NAMES, KERNEL_COUNT);
{launches}  probe_library_rest(kernels, {"true" if sweep else "false"});
  return 0;
}}
""")


def tvm_ffi_source(path: Path, object_label: str, sweep: bool) -> tuple[str, str]:
    """(sha256 of the object, the harness source) for a TVM-FFI object."""
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return sha, tvm_ffi_harness(traced_load(path), object_label, sha, sweep)
