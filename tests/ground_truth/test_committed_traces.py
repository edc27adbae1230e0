"""Toolchain-free native oracle: every fixture's emu trace equals its committed native trace.

`tests/fixtures/build_fixtures.py` linked each x86-64 and host-native fixture with the recording
stubs of `tests/fixtures/recorder.py`, ran it on a real CPU and committed what it printed as
`<prefix>.calls.json` (MANIFEST.json's "calls").  This test runs the same object in emu with a
runtime that answers like those stubs (2 devices, attribute 97 = 232448, every kernel's static
shared memory 0) and the same entry sequence (cuda_init, cuda_load, cuda_load_to_device(0), the
header's Kernel_Module_Load, the launch wrapper), turns emu's trace into the recorder's lines and
requires the two to be equal, so a machine without cross compilers or cc still checks against native.

What the recorder printed that emu's trace cannot hold is left out, and only that: the fatbin magic
the recorder read through `code` (emu records the pointer; the recorder's 0xBA55ED50 is checked by
the builder), and the launch's first tensor data pointer (emu passes its own fake tensors).  The
library handle, kernel handles and stream are compared by identity: the library each loader uses must
be the one the last cudaLibraryLoadData returned, a kernel handle must name the kernel the
cudaLibraryGetKernel that returned it looked up, and the launch's stream must be the harness's.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from emu.launch import STREAM_HANDLE as EMU_STREAM

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())["fixtures"]
WITH_TRACE = [entry for entry in MANIFEST if entry.get("calls")]

# tests/fixtures/recorder.py's constants (the harness that produced the committed traces)
RECORDER_LIBRARY = 0x11B0000
RECORDER_STREAM = 0x5757
OPTIN_SMEM = 232448
PHASE_TO_ENTRY = {"cuda_init": "cuda_init", "cuda_load": "cuda_load", "cuda_load_to_device": "cuda_load_to_device",
                  "_mlir_cuda_init": "mlir_cuda_init", "_mlir_cuda_load_to_device": "mlir_cuda_load_to_device",
                  "launch": "launch"}
NOT_IN_EMU = {"cudaLibraryLoadData": ("magic",), "cudaLaunchKernelEx": ("arg0_data",)}


def native_lines(entry: dict) -> list[dict]:
    """The committed trace, with phases named as emu's entries and the handles as identities."""
    lines = []
    for line in json.loads((FIXTURES / entry["calls"]).read_text()):
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
    from emu.entries import EntrySpec
    from emu.run import run_object
    config = RuntimeConfig(device_count=2, current_device=0, device_attributes={97: OPTIN_SMEM},
                           kernel_attributes={"*": {1: 0}})
    entries = [EntrySpec(name="cuda_init"), EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device", device=0),
               EntrySpec(name="module_load"), EntrySpec(name="launch")]
    run = run_object(str(path), config, entries)
    lines, library, kernels = [], None, {}
    in_entries = {i for entry in run.entries for i in range(entry.first_call, entry.end_call)}
    lines += [{"outside every entry": call.symbol} for i, call in enumerate(run.calls)
              # the header's Kernel_Module_Load asks for the device count; the recorder's main loops itself
              if i not in in_entries and call.symbol != "cudaGetDeviceCount"]
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


def first_difference(emu: list[dict], native: list[dict]) -> str | None:
    for index, (mine, truth) in enumerate(zip(emu, native)):
        if mine != truth:
            return f"line {index}:\n  emu:    {json.dumps(mine)}\n  native: {json.dumps(truth)}"
    if len(emu) != len(native):
        return f"emu has {len(emu)} lines, the native trace {len(native)}"
    return None


@pytest.mark.oracle
@pytest.mark.parametrize("entry", WITH_TRACE, ids=[e["path"] for e in WITH_TRACE])
def test_emu_trace_equals_committed_native_trace(entry):
    native = native_lines(entry)
    assert native and any("call" in line for line in native), f"{entry['calls']} holds no call"
    difference = first_difference(emu_lines(FIXTURES / entry["path"]), native)
    assert difference is None, f"{entry['path']}: emu differs from the committed native run {entry['calls']}\n{difference}"


def test_every_committed_trace_is_checked():
    """All 40 committed traces are in the manifest (and so in the test above); none is orphaned."""
    on_disk = {str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("cutlass-dsl-*/**/*.calls.json")}
    assert on_disk == {e["calls"] for e in WITH_TRACE}
    assert len(on_disk) >= 40


def test_a_changed_trace_is_a_difference():
    """The comparison can fail: one changed value in the native trace is reported with its line."""
    entry = next(e for e in WITH_TRACE if e["path"].endswith("x86_64/carveout_25.o"))
    native = native_lines(entry)
    setter = next(i for i, line in enumerate(native) if line.get("attribute") == 8)
    native[setter] = {**native[setter], "value": native[setter]["value"] - 1}
    difference = first_difference(emu_lines(FIXTURES / entry["path"]), native)
    assert difference is not None and difference.startswith(f"line {setter}:"), difference
