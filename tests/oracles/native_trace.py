"""Turn an emu run into the real-world corpus's calls.json form, so the two compare line for line.

The committed `<prefix>.calls.json` is what the object did when linked natively with
tests/fixtures/realworld/stubs.c (see native_recorder.py). emu runs the same entries against a runtime
configured to answer as those stubs do (`recorder_config`), and `emu_lines` writes its trace as the
recorder would have printed it. Two things are normalised on both sides, since they differ by design:
a library handle is shown as "latest" when it is the one the last cudaLibraryLoadData returned (the
stubs return one fixed handle, emu a fresh one per load), and cudaLibraryLoadData's `magic` and a launch's
`arg0_data` (bytes read through pointers, which emu's trace does not carry) are left out.
"""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "realworld"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())
OBJECTS = MANIFEST["objects"]

LIBRARY_HANDLE = 0x11B0000
FIRST_KERNEL = 0x4B000
OPTIN_SMEM = 232448
PHASES = {"mlir_cuda_init": "_mlir_cuda_init", "mlir_cuda_load_to_device": "_mlir_cuda_load_to_device"}
LIBC_OUTPUT = ("printf", "puts", "putchar")
LOADER_ENTRIES = ["cuda_init", "cuda_load", {"cuda_load_to_device": {"device": 0}}, "module_load"]


def recorder_config(path: str):
    """The runtime stubs.c presents: 2 devices, optin smem 232448, static smem 0, its handles, on a
    profile whose device runs the object's cubin (the stubs load anything; an H200 refuses sm_100a)."""
    from emu.cuda.config import RuntimeConfig
    from emu.cuda.object_profile import profile_for_object
    return RuntimeConfig(profile=profile_for_object(path), device_count=2, current_device=0, library_handle=LIBRARY_HANDLE,
                         first_kernel_handle=FIRST_KERNEL, device_attributes={97: OPTIN_SMEM},
                         kernel_attributes={"*": {1: 0}})


def native_lines(entry: dict) -> list[dict]:
    return json.loads((ROOT / entry["calls"]).read_text())


def launch_args(entry: dict) -> dict:
    return json.loads((ROOT / entry["args"]).read_text())["args"]


def _attribute_value(value):
    if isinstance(value, dict):
        if set(value) == {"x", "y", "z"}:
            return [value["x"], value["y"], value["z"]]
        if len(value) == 1:
            return next(iter(value.values()))
    return value


class _Converter:
    def __init__(self):
        self.kernels: dict[int, str] = {}
        self.latest_library = None

    def library(self, handle):
        return "latest" if handle == self.latest_library else handle

    def kernel(self, handle) -> str:
        return self.kernels.get(handle, "?")

    def line(self, call: dict) -> dict:
        symbol, args, outputs = call["symbol"], call["args"], call["outputs"]
        name = symbol.lstrip("_")
        if symbol == "_cudaLibraryLoadData":
            self.latest_library = outputs.get("library")
            return {"call": name, "jit_options": args["jitOptions"], "jit_values": args["jitOptionsValues"],
                    "jit_count": args["numJitOptions"], "library_options": args["libraryOptions"],
                    "library_values": args["libraryOptionValues"], "library_count": args["numLibraryOptions"]}
        if symbol in ("_cudaGetDevice", "cudaGetDeviceCount"):
            return {"call": name}
        if symbol == "_cudaDeviceGetAttribute":
            return {"call": name, "attribute": args["attr"], "device": args["device"], "value": outputs.get("value")}
        if symbol == "_cudaLibraryGetKernel":
            if "pKernel" in outputs:
                self.kernels[outputs["pKernel"]] = args["name"]
            return {"call": name, "library": self.library(args["library"]), "name": args["name"]}
        if symbol == "_cuKernelGetAttribute":
            return {"call": name, "attribute": args["attrib"], "kernel": self.kernel(args["kernel"]),
                    "device": args["dev"], "value": outputs.get("pi")}
        if symbol == "_cudaFuncSetAttribute":
            return {"call": name, "kernel": self.kernel(args["func"]), "attribute": args["attr"], "value": args["value"]}
        if symbol == "_cudaKernelSetAttributeForDevice":
            return {"call": name, "kernel": self.kernel(args["kernel"]), "attribute": args["attr"],
                    "value": args["value"], "device": args["device"]}
        if symbol == "_cudaLaunchKernelEx":
            config = args["config"]
            return {"call": name, "kernel": self.kernel(args["func"]), "grid": config["gridDim"],
                    "block": config["blockDim"], "dynamic_smem": config["dynamicSmemBytes"],
                    "stream": config["stream"], "num_attrs": config["numAttrs"],
                    "attrs": [{"id": a["id"], "value": _attribute_value(a["value"])} for a in config["attrs"]]}
        if name in LIBC_OUTPUT:
            return {"call": name, "text": outputs.get("text", args.get("text"))}
        return {"call": name, "args": args, "outputs": outputs}


def normalise_native(lines: list[dict]) -> list[dict]:
    """The native lines with the by-design differences taken out (see the module docstring)."""
    out, latest = [], None
    for line in lines:
        line = dict(line)
        if line.get("call") == "cudaLibraryLoadData":
            latest = LIBRARY_HANDLE
            line.pop("magic")
        if "library" in line and line.get("call") != "cudaLibraryLoadData":
            line["library"] = "latest" if line["library"] == latest else line["library"]
        line.pop("arg0_data", None)
        out.append(line)
    return out


def emu_lines(run) -> list[dict]:
    """emu's entries and calls as the recorder prints them: phase, calls, return."""
    dump = run.model_dump()
    calls, converter, out, next_call = dump["calls"], _Converter(), [], 0
    seen_module_load = False
    for entry in dump["entries"]:
        out += [converter.line(c) for c in calls[next_call:entry["first_call"]]]     # e.g. the header's device count
        if entry["entry"] == "mlir_cuda_init" and not seen_module_load:
            out.append({"phase": "module_load"})
            seen_module_load = True
        out.append({"phase": PHASES.get(entry["entry"], entry["entry"])})
        out += [converter.line(c) for c in calls[entry["first_call"]:entry["end_call"]]]
        if entry["fault"] is not None:
            out.append({"fault": entry["fault"]})
        else:
            out.append({"return": entry["returned"]})
        next_call = entry["end_call"]
    out += [converter.line(c) for c in calls[next_call:]]
    return out


def phase_slice(lines: list[dict], first: str, last: str | None = None) -> list[dict]:
    """Lines from phase `first` up to (not including) phase `last`."""
    start = lines.index({"phase": first})
    end = lines.index({"phase": last}) if last else len(lines)
    return lines[start:end]


def first_difference(emu: list[dict], native: list[dict]) -> str | None:
    for index, (mine, truth) in enumerate(zip(emu, native)):
        if mine != truth:
            return (f"line {index} differs\n  emu:    {json.dumps(mine)}\n  native: {json.dumps(truth)}\n"
                    f"  before: {json.dumps(emu[index - 1]) if index else '(start)'}")
    if len(emu) != len(native):
        longer, name = (native, "native") if len(native) > len(emu) else (emu, "emu")
        return (f"{'emu' if name == 'native' else 'native'} stops after {min(len(emu), len(native))} lines; "
                f"{name} goes on with {json.dumps(longer[min(len(emu), len(native))])}")
    return None
