"""emu's trace in the format of tests/fixtures/recorder.py, for comparisons with native recorder runs.

recorder.py's C harness links an export with recording stubs and prints one JSON line per call, entry
and return.  `recorded_lines` turns a recorder run's lines into comparable form and `emu_lines` runs
the same sequence in emu (2 devices, attribute 97 = 232448, every kernel's static shared memory 0;
cuda_init, cuda_load, cuda_load_to_device(0), then what the recorder's main does for the header's
Kernel_Module_Load: _mlir_cuda_init and _mlir_cuda_load_to_device for devices 0 and 1; then the launch
wrapper) and prints it the same way.  What the recorder printed that emu's trace cannot hold is left out, and only that: the fatbin
magic read through `code` and the launch's first tensor data pointer.  Handles are compared by identity:
the library each loader uses must be the one the last cudaLibraryLoadData returned, a kernel handle must
name the kernel its cudaLibraryGetKernel looked up, and the launch's stream must be the harness's.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from emu.dsl.launch.arguments import STREAM_HANDLE as EMU_STREAM
from tests.fixtures import recorder
from tests.oracles.native_harness import Toolchain

RECORDER_LIBRARY, RECORDER_STREAM, OPTIN_SMEM = recorder.LIBRARY_HANDLE, recorder.STREAM_HANDLE, recorder.OPTIN_SMEM
PHASE_TO_ENTRY = {"cuda_init": "cuda_init", "cuda_load": "cuda_load", "cuda_load_to_device": "cuda_load_to_device",
                  "_mlir_cuda_init": "mlir_cuda_init", "_mlir_cuda_load_to_device": "mlir_cuda_load_to_device",
                  "launch": "launch"}
NOT_IN_EMU = {"cudaLibraryLoadData": ("magic",), "cudaLaunchKernelEx": ("arg0_data",)}


def recorded_lines(recorded: list[dict]) -> list[dict]:
    """A recorder run's lines, with phases named as emu's entries and the handles as identities."""
    lines = []
    for line in recorded:
        if "phase" in line:
            lines.append({"entry": PHASE_TO_ENTRY[line["phase"]]})
            continue
        line = {k: v for k, v in line.items() if k not in NOT_IN_EMU.get(line.get("call"), ())}
        if line.get("call") == "cudaLibraryGetKernel":
            line["library"] = "loaded" if line["library"] == RECORDER_LIBRARY else line["library"]
        if line.get("call") == "cudaLaunchKernelEx":
            line["stream"] = "harness" if line["stream"] == RECORDER_STREAM else line["stream"]
        lines.append(line)
    return lines


def _launch_attr(attr: dict) -> dict:
    value = attr["value"]
    return {"id": attr["id"], "value": [value["x"], value["y"], value["z"]] if attr["id"] == 4 else next(iter(value.values()))}


def _as_recorded(call, library: int | None, kernels: dict[int, str]) -> dict:
    """One emu call as recorder.py prints it."""
    a = call.args
    name = lambda handle: kernels.get(handle, "?")   # noqa: E731 - the recorder's kernel_name()
    if call.symbol == "_cudaLibraryLoadData":
        return {"call": "cudaLibraryLoadData", "jit_options": a["jitOptions"], "jit_values": a["jitOptionsValues"],
                "jit_count": a["numJitOptions"], "library_options": a["libraryOptions"],
                "library_values": a["libraryOptionValues"], "library_count": a["numLibraryOptions"]}
    if call.symbol == "_cudaGetDevice":
        return {"call": "cudaGetDevice"}
    if call.symbol == "_cudaDeviceGetAttribute":
        return {"call": "cudaDeviceGetAttribute", "attribute": a["attr"], "device": a["device"]}
    if call.symbol == "_cudaLibraryGetKernel":
        return {"call": "cudaLibraryGetKernel", "library": "loaded" if a["library"] == library else a["library"],
                "name": a["name"]}
    if call.symbol == "_cuKernelGetAttribute":
        return {"call": "cuKernelGetAttribute", "attribute": a["attrib"], "kernel": name(a["kernel"]), "device": a["dev"]}
    if call.symbol == "_cudaFuncSetAttribute":
        return {"call": "cudaFuncSetAttribute", "kernel": name(a["func"]), "attribute": a["attr"], "value": a["value"]}
    if call.symbol == "_cudaKernelSetAttributeForDevice":
        return {"call": "cudaKernelSetAttributeForDevice", "kernel": name(a["kernel"]), "attribute": a["attr"],
                "value": a["value"], "device": a["device"]}
    if call.symbol == "_cudaLaunchKernelEx":
        config = a["config"]
        return {"call": "cudaLaunchKernelEx", "kernel": name(a["func"]), "grid": config["gridDim"],
                "block": config["blockDim"], "dynamic_smem": config["dynamicSmemBytes"],
                "stream": "harness" if config["stream"] == EMU_STREAM else config["stream"],
                "attrs": [_launch_attr(attr) for attr in config["attrs"]]}
    return {"call": call.symbol, "args": a}       # a call the recorder has no stub for: always a difference


def emu_lines(path: Path) -> list[dict]:
    """emu's run of the recorder's sequence, in the recorder's format (entry, calls, return)."""
    from emu.cuda.config import RuntimeConfig
    from emu.cuda.object_profile import profile_for_object
    from emu.dsl.entries import EntrySpec
    from emu.run.session import run_object
    # the recorder's stubs answer as a device that runs the cubin (an sm_100a export on a B200 profile)
    config = RuntimeConfig(profile=profile_for_object(str(path)), device_count=2, current_device=0, device_attributes={97: OPTIN_SMEM},
                           kernel_attributes={"*": {1: 0}})
    entries = [EntrySpec(name="cuda_init"), EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device", device=0),
               EntrySpec(name="mlir_cuda_init"), EntrySpec(name="mlir_cuda_load_to_device", device=0),
               EntrySpec(name="mlir_cuda_load_to_device", device=1), EntrySpec(name="launch")]
    run = run_object(str(path), config, entries)
    lines, library, kernels = [], None, {}
    in_entries = {i for entry in run.entries for i in range(entry.first_call, entry.end_call)}
    lines += [{"outside every entry": call.symbol} for i, call in enumerate(run.calls) if i not in in_entries]
    for entry in run.entries:
        lines.append({"entry": entry.entry})
        for call in run.calls[entry.first_call:entry.end_call]:
            lines.append(_as_recorded(call, library, kernels))
            if call.ret != 0:
                lines.append({"ret": call.ret})      # the recorder's stubs all return 0
            if call.symbol == "_cudaLibraryLoadData":
                library = call.outputs.get("library")
            if call.symbol == "_cudaLibraryGetKernel":
                kernels[call.outputs.get("pKernel")] = call.args["name"]
        lines.append({"return": entry.returned} if entry.fault is None
                     else {"fault": f"{entry.fault.kind}: {entry.fault.message}"})
    return lines


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


def first_difference(emu: list[dict], native: list[dict]) -> str | None:
    for index, (mine, truth) in enumerate(zip(emu, native)):
        if mine != truth:
            return f"line {index}:\n  emu:    {json.dumps(mine)}\n  native: {json.dumps(truth)}"
    if len(emu) != len(native):
        return f"emu has {len(emu)} lines, the native trace {len(native)}"
    return None


