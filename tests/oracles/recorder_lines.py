"""emu's trace written as the native recording stubs print theirs, so that the two compare line for line.

Two harnesses link an export with C stubs that print one JSON line per CUDA call, a `{"phase": ...}` line
before each entry they call and a `{"return": ...}` line after it:
- `RECORDER_PY`: tests/fixtures/recorder.py's harness (the toy fixtures' committed calls.json, `run_recorder`).
  It calls cuda_init, cuda_load, cuda_load_to_device(0), then `_mlir_cuda_init` and `_mlir_cuda_load_to_device`
  for devices 0 and 1 itself (`RECORDER_SEQUENCE`), then the launch wrapper on its own stream 0x5757.
- `STUBS_C`: tests/fixtures/realworld/stubs.c, linked by tests/fixtures/realworld/native_recorder.py (the
  real-world corpus, the AVX-512 exports). Its harness runs the header's Kernel_Module_Load (phase
  "module_load": `_mlir_cuda_init`, the header's cudaGetDeviceCount, `_mlir_cuda_load_to_device` for devices 0
  and 1) and the launch with arguments of our choosing, stream included; its stubs also print the value each
  getter answers, a launch's `num_attrs` and the used fields of every launch attribute, and libc output.
Both present one runtime, `recorder_config`: 2 devices, attribute 97 = 232448, every kernel's static shared
memory 0, library handle 0x11b0000, kernel handles from 0x4b000. A `Recorder` holds what its stubs print
differently; `Recorder.emu_lines(run)` writes an emu run as they would and `Recorder.normalise(lines)` makes a
recorded run comparable. What differs by design is normalised, on both sides, and only that:
- a library handle is "loaded" when it is the one the last cudaLibraryLoadData returned (the stubs return
  one fixed handle, emu a fresh one per load);
- a kernel handle is the name its cudaLibraryGetKernel looked up ("?" for any other), as the stubs print it;
- RECORDER_PY's launch stream is "harness" (0x5757 natively, emu's STREAM_HANDLE in emu);
- cudaLibraryLoadData's `magic` and a launch's `arg0_data`, bytes read through pointers that emu's trace
  does not carry, are left out of the native lines.
In RECORDER_PY's lines a call emu returns nonzero from is followed by `{"ret": ...}` (its stubs return 0); in
either, an entry that faulted ends with `{"fault": ...}` and a call without a stub shows its arguments: each is
always a difference.
"""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from emu.dsl.launch.arguments import STREAM_HANDLE as EMU_STREAM
from tests.fixtures import recorder
from tests.oracles.difference import first_difference  # noqa: F401 - the comparison's tests import it from here

if TYPE_CHECKING:
    from tests.oracles.native_harness import Toolchain

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "realworld"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())
OBJECTS = MANIFEST["objects"]

OPTIN_SMEM, LIBRARY_HANDLE, FIRST_KERNEL = recorder.OPTIN_SMEM, recorder.LIBRARY_HANDLE, 0x4B000
# emu's entry: the phase both harnesses print before calling it
PHASES = {"cuda_init": "cuda_init", "cuda_load": "cuda_load", "cuda_load_to_device": "cuda_load_to_device",
          "mlir_cuda_init": "_mlir_cuda_init", "mlir_cuda_load_to_device": "_mlir_cuda_load_to_device", "launch": "launch"}
ENTRY_OF_PHASE = {phase: entry for entry, phase in PHASES.items()}
NOT_IN_EMU = {"cudaLibraryLoadData": ("magic",), "cudaLaunchKernelEx": ("arg0_data",)}
LIBC_OUTPUT = ("printf", "puts", "putchar")
RECORDER_SEQUENCE = ["cuda_init", "cuda_load", {"cuda_load_to_device": {"device": 0}}, "mlir_cuda_init",
                     {"mlir_cuda_load_to_device": {"device": 0}}, {"mlir_cuda_load_to_device": {"device": 1}}, "launch"]
LOADER_ENTRIES = ["cuda_init", "cuda_load", {"cuda_load_to_device": {"device": 0}}, "module_load"]


def recorder_config(path: str, export: str | None = None):
    """The runtime both harnesses' stubs present, on a profile whose device runs the export's cubin (the stubs
    load anything; an H200 refuses sm_100a); `export` names one export of a file that holds several."""
    from emu.cuda.config import RuntimeConfig
    from emu.cuda.object_profile import profile_for_object
    return RuntimeConfig(profile=profile_for_object(path, export), device_count=2, current_device=0, library_handle=LIBRARY_HANDLE,
                         first_kernel_handle=FIRST_KERNEL, device_attributes={97: OPTIN_SMEM},
                         kernel_attributes={"*": {1: 0}})


def _first_word(attribute: int, value: dict):
    """recorder.py: ClusterDimension's x, y, z; any other attribute's first 4 bytes."""
    return [value["x"], value["y"], value["z"]] if attribute == 4 else next(iter(value.values()))


def _used_fields(attribute: int, value):
    """stubs.c: the fields each attribute uses, a dimension as [x, y, z]."""
    if isinstance(value, dict):
        if set(value) == {"x", "y", "z"}:
            return [value["x"], value["y"], value["z"]]
        if len(value) == 1:
            return next(iter(value.values()))
    return value


@dataclass(frozen=True)
class Recorder:
    """What one harness's stubs print, where the two differ."""

    phase_key: str                              # "entry": phases compared as emu's entry names; "phase": as the harness's
    module_load_phase: bool                     # the harness prints {"phase": "module_load"} before Kernel_Module_Load
    unprinted: Mapping[str, tuple[str, ...]]    # fields of a call's line (out-parameter values, ...) its stubs do not print
    attribute_value: Callable[[int, Any], Any]  # a launch attribute's value as its stubs print it
    harness_stream: int | None                  # the stream the harness launches on, shown as "harness" (None: given by the arguments)
    shows_errors: bool                          # a call emu returns nonzero from is followed by {"ret": ...}, a difference

    def emu_lines(self, run) -> list[dict]:
        """emu's entries and calls as these stubs print them: phase, calls, return; calls between entries in place."""
        handles, lines, done, grouped = _Handles(self), [], 0, False
        for entry in run.entries:
            lines += handles.lines(run.calls[done:entry.first_call])        # e.g. the header's cudaGetDeviceCount
            if self.module_load_phase and entry.entry == "mlir_cuda_init" and not grouped:
                lines.append({"phase": "module_load"})
                grouped = True
            lines.append({self.phase_key: entry.entry if self.phase_key == "entry" else PHASES.get(entry.entry, entry.entry)})
            lines += handles.lines(run.calls[entry.first_call:entry.end_call])
            lines.append({"return": entry.returned} if entry.fault is None
                         else {"fault": f"{entry.fault.kind}: {entry.fault.message}"})
            done = entry.end_call
        return lines + handles.lines(run.calls[done:])

    def normalise(self, recorded: list[dict]) -> list[dict]:
        """A recorded run's lines with what differs by design normalised (see the module docstring)."""
        lines, loaded = [], False
        for line in recorded:
            line = dict(line)
            if "phase" in line and self.phase_key == "entry":
                line = {"entry": ENTRY_OF_PHASE[line["phase"]]}
            for field in NOT_IN_EMU.get(line.get("call"), ()):
                del line[field]
            if line.get("call") == "cudaLibraryLoadData":
                loaded = True
            elif "library" in line and loaded and line["library"] == LIBRARY_HANDLE:
                line["library"] = "loaded"
            if line.get("call") == "cudaLaunchKernelEx" and self.harness_stream is not None and line["stream"] == self.harness_stream:
                line["stream"] = "harness"
            lines.append(line)
        return lines


class _Handles:
    """The calls of one emu run as a recorder's lines, naming handles as its stubs do."""

    def __init__(self, recorder_: Recorder):
        self.recorder, self.kernels, self.library = recorder_, {}, None

    def lines(self, calls) -> list[dict]:
        out = []
        for call in calls:
            line = self.line(call)
            out.append({k: v for k, v in line.items() if k not in self.recorder.unprinted.get(line["call"], ())})
            if call.ret != 0 and self.recorder.shows_errors:
                out.append({"ret": call.ret})
        return out

    def kernel(self, handle) -> str:
        return self.kernels.get(handle, "?")

    def line(self, call) -> dict:
        symbol, a, outputs = call.symbol, call.args, call.outputs
        name = symbol.lstrip("_")
        if symbol == "_cudaLibraryLoadData":
            self.library = outputs.get("library")
            return {"call": name, "jit_options": a["jitOptions"], "jit_values": a["jitOptionsValues"],
                    "jit_count": a["numJitOptions"], "library_options": a["libraryOptions"],
                    "library_values": a["libraryOptionValues"], "library_count": a["numLibraryOptions"]}
        if symbol in ("_cudaGetDevice", "cudaGetDeviceCount"):
            return {"call": name}
        if symbol == "_cudaDeviceGetAttribute":
            return {"call": name, "attribute": a["attr"], "device": a["device"], "value": outputs.get("value")}
        if symbol == "_cudaLibraryGetKernel":
            if "pKernel" in outputs:
                self.kernels[outputs["pKernel"]] = a["name"]
            return {"call": name, "library": "loaded" if a["library"] == self.library else a["library"], "name": a["name"]}
        if symbol == "_cuKernelGetAttribute":
            return {"call": name, "attribute": a["attrib"], "kernel": self.kernel(a["kernel"]), "device": a["dev"],
                    "value": outputs.get("pi")}
        if symbol == "_cudaFuncSetAttribute":
            return {"call": name, "kernel": self.kernel(a["func"]), "attribute": a["attr"], "value": a["value"]}
        if symbol == "_cudaKernelSetAttributeForDevice":
            return {"call": name, "kernel": self.kernel(a["kernel"]), "attribute": a["attr"], "value": a["value"],
                    "device": a["device"]}
        if symbol == "_cudaLaunchKernelEx":
            config = a["config"]
            harness = self.recorder.harness_stream is not None and config["stream"] == EMU_STREAM
            return {"call": name, "kernel": self.kernel(a["func"]), "grid": config["gridDim"], "block": config["blockDim"],
                    "dynamic_smem": config["dynamicSmemBytes"], "stream": "harness" if harness else config["stream"],
                    "num_attrs": config["numAttrs"],
                    "attrs": [{"id": x["id"], "value": self.recorder.attribute_value(x["id"], x["value"])} for x in config["attrs"]]}
        if name in LIBC_OUTPUT:
            return {"call": name, "text": outputs.get("text", a.get("text"))}
        return {"call": name, "args": a, "outputs": outputs}        # a call the stubs have no stub for


RECORDER_PY = Recorder(phase_key="entry", module_load_phase=False, harness_stream=recorder.STREAM_HANDLE, shows_errors=True,
                       unprinted={"cudaDeviceGetAttribute": ("value",), "cuKernelGetAttribute": ("value",),
                                  "cudaLaunchKernelEx": ("num_attrs",)}, attribute_value=_first_word)
# emu's errors are not held against stubs.c, which answers 0 where emu (like a device) refuses: dynamic_smem.o's
# launch with 16 bytes of dynamic shared memory for a kernel that uses 2368 returns 165 in emu
STUBS_C = Recorder(phase_key="phase", module_load_phase=True, harness_stream=None, shows_errors=False, unprinted={},
                   attribute_value=_used_fields)
recorded_lines, normalise_native, stubs_c_emu_lines = RECORDER_PY.normalise, STUBS_C.normalise, STUBS_C.emu_lines


def recorder_py_emu_lines(path: Path) -> list[dict]:
    """emu's run of recorder.py's sequence, in recorder.py's format."""
    from emu.dsl.entries import EntrySpec
    from emu.run.session import run_object
    entries = [EntrySpec.model_validate(spec) for spec in RECORDER_SEQUENCE]
    return RECORDER_PY.emu_lines(run_object(str(path), recorder_config(str(path)), entries))


def run_recorder(obj: Path, header: Path, prefix: str, kernel_names: list[str], tools: Toolchain, work: Path) -> list[dict]:
    """Link `obj` with recorder.py's harness for `tools`' architecture, run it (natively or under qemu),
    return its lines as `recorded_lines` gives them."""
    work.mkdir(parents=True, exist_ok=True)
    source, exe = work / "recorder.c", work / "recorder"
    source.write_text(recorder.harness_source(prefix, recorder.launch_symbol(header.read_text()), kernel_names))
    subprocess.run([tools.compiler, *tools.flags, "-O0", "-w", "-o", str(exe), str(source), str(obj)],
                   check=True, capture_output=True, text=True)
    output = subprocess.run([*tools.runner, str(exe)], check=True, capture_output=True, text=True, timeout=60).stdout
    return recorded_lines([json.loads(line) for line in output.splitlines()])


def native_lines(entry: dict) -> list[dict]:
    """A real-world corpus entry's committed native trace, as recorded."""
    return json.loads((ROOT / entry["calls"]).read_text())


def launch_args(entry: dict) -> dict:
    return json.loads((ROOT / entry["args"]).read_text())["args"]


def phase_slice(lines: list[dict], first: str, last: str | None = None) -> list[dict]:
    """Lines from phase `first` up to (not including) phase `last`."""
    start = lines.index({"phase": first})
    end = lines.index({"phase": last}) if last else len(lines)
    return lines[start:end]
