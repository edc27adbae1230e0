"""Native ground truth for TVM-FFI objects: link one with the recording stubs and the real TVM-FFI and DSL
runtime pieces, call `__tvm_ffi_<name>` with an argument set in a fresh process, return what it recorded.

What is linked (tests/fixtures/tvm_ffi/native/harness.c says why each): the object; tests/oracles/native/stubs.c
(the `_cuda*` wrappers, answering like emu's runtime model under `native_harness.runtime_config`); a generated
table of the object's kernels and functions; the apache-tvm-ffi wheel's libtvm_ffi.so; the
`tvm_ffi_extension.c.o` member of nvidia-cutlass-dsl's libcuda_dialect_runtime_static.a (it defines
cuda_dialect_init_library_once / cuda_dialect_unload_library_once and no wrapper, so no duplicate
definitions); libcute_dsl_runtime.so for CuteDSLRT_TVMFFISetRaisedCudaError (the stubs' wrappers, defined in
the executable, take precedence over its own).

An argument set is the JSON argument form emu's `trace --args` reads (a positional list of
`{tensor: {dtype, shape, strides, data, byte_offset, device}}` (`data` defaults as emu's does: 0xd0000000, 16 MiB
apart), `{int: N}`, `{float: X}`, `{bool: B}`, `{stream: HANDLE}`, `{shape: [N, ...]}` (an ffi.Shape the real
library makes), `{tuple: [...]}` (an ffi.Array the real library makes, tensors inside as its ffi.Tensor objects) or
null; `strides: null` is a NULL pointer), plus, in an argument-set file, `env_stream`
(`{device_id: handle}`, set with TVMFFIEnvSetStream first), `calls` (how many times to call in one process)
`inject` (the stubs' injected errors, `[symbol, call, error, every]`) and `profile` (emu's device profile for the
comparison, which then injects nothing: its own model of that device must give what the injections did).
"""
from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from emu.dsl.launch.arguments import TENSOR_DATA_BASE, TENSOR_DATA_STRIDE
from tests.oracles import native_harness

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "tvm_ffi"
NATIVE = FIXTURES / "native"
STUBS = Path(__file__).resolve().parent / "native"
SHARED_NATIVE = ROOT / "tests" / "data" / "shared" / "native"    # tvm_ffi_bridge.c: the harness for a library's entry
WRAPPED = ("TVMFFIEnvGetStream", "TVMFFIErrorSetRaisedFromCStr", "TVMFFIErrorSetRaisedFromCStrParts",
           "CuteDSLRT_TVMFFISetRaisedCudaError", "cuda_dialect_init_library_once", "cuda_dialect_unload_library_once",
           "cudaGetDeviceCount", "cudaGetErrorName", "cudaGetErrorString", "cudaLibraryUnload")
# the DSL runtime's helpers a library's entry calls through its PLT: the bridge forwards them to the recorders
BRIDGED_HELPERS = ("cuda_dialect_init_library_once", "cuda_dialect_unload_library_once")
PLAIN_RUNTIME = ("cudaGetDeviceCount", "cudaGetErrorName", "cudaGetErrorString", "cudaLibraryUnload")
# DLPack type codes (dlpack.h DLDataTypeCode) and bits, by the names the argument form uses
DTYPES = {"bool": (6, 8), "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64), "uint8": (1, 8),
          "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64), "float16": (2, 16), "float32": (2, 32),
          "float64": (2, 64), "bfloat16": (4, 16), "float8_e4m3fn": (10, 8), "float8_e5m2": (12, 8)}
DEVICES = {"cpu": 1, "cuda": 2, "cuda_host": 3, "rocm": 10}       # DLDeviceType


# -- where the real libraries are ------------------------------------------------------------------------
def _package_dir(name: str, override: str) -> Path | None:
    if os.environ.get(override):
        return Path(os.environ[override])
    spec = importlib.util.find_spec(name)
    return Path(spec.origin).parent if spec and spec.origin else None


def libraries() -> dict | None:
    """{tvm_ffi_include, tvm_ffi_lib, dsl_lib}, or None when the apache-tvm-ffi wheel or the DSL is not installed
    (EMU_TEST_TVM_FFI_DIR / EMU_TEST_DSL_LIBDIR name them instead)."""
    tvm = _package_dir("tvm_ffi", "EMU_TEST_TVM_FFI_DIR")
    dsl_lib = Path(os.environ["EMU_TEST_DSL_LIBDIR"]) if os.environ.get("EMU_TEST_DSL_LIBDIR") else None
    if dsl_lib is None:
        dsl = importlib.util.find_spec("nvidia_cutlass_dsl")
        dsl_lib = Path(list(dsl.submodule_search_locations)[0]) / "cu12" / "lib" if dsl and dsl.submodule_search_locations else None
    if not tvm or not (tvm / "lib" / "libtvm_ffi.so").exists() or not dsl_lib or not (dsl_lib / "libcute_dsl_runtime.so").exists():
        return None
    return {"tvm_ffi_include": tvm / "include", "tvm_ffi_lib": tvm / "lib", "dsl_lib": dsl_lib}


def available() -> bool:
    return shutil.which("cc") is not None and libraries() is not None


def key(path: str) -> str:
    """The name of a fixture's argument sets and trace: its file name, `quack_cache_<12 hex digits>` in the
    quack cache folder (MANIFEST.json's `path`)."""
    rel = Path(path)
    return f"quack_cache_{rel.stem[:12]}" if rel.parts[0] == "quack_cache" else rel.stem


# -- the object ----------------------------------------------------------------------------------------------
def entry_name(obj: Path) -> str:
    """N of the object's `__tvm_ffi_N`."""
    names = [f.name for f in native_harness.defined_functions(obj) if f.is_global and f.name.startswith("__tvm_ffi_")]
    if len(names) != 1:
        raise ValueError(f"{obj}: {len(names)} __tvm_ffi_ entries")
    return names[0].removeprefix("__tvm_ffi_")


def kernel_names(obj: Path) -> list[str]:
    """The kernels the object looks up: its `kernels_<name>` handle slots (nm), in name order."""
    listing = subprocess.run(["nm", str(obj)], check=True, capture_output=True, text=True).stdout
    rows = [line.split() for line in listing.splitlines()]
    return sorted(r[2].removeprefix("kernels_") for r in rows if len(r) == 3 and r[1] in "bB" and r[2].startswith("kernels_"))


def tables_source(obj: Path, functions: list | None = None) -> str:
    """The harness's kernel table (the object's kernels) and function table (`functions`, default the object's)."""
    names = kernel_names(obj)
    lines = ['#include <stdint.h>', '#include "stubs.h"', f"const int gt_kernel_count = {len(names)};",
             "const char *const gt_kernel_names[] = {" + (", ".join(json.dumps(n) for n in names) or "0") + "};",
             "const int64_t gt_kernel_defaults[][NUM_FUNC_ATTRIBUTES] = {"
             + (", ".join("{" + ", ".join(map(str, native_harness.kernel_defaults(native_harness.static_smem(i)))) + "}"
                          for i in range(len(names))) or "{0}") + "};"]
    functions = native_harness.defined_functions(obj) if functions is None else functions
    return "\n".join(lines + native_harness.function_table(functions, set())) + "\n"


def build(obj: Path, work: Path, libs: dict, library: Path | None = None, export: str | None = None,
          sources: tuple[Path, ...] = ()) -> Path:
    """Link the harness for `obj` in `work`; returns the executable. With `library` (a shared library holding
    `obj`'s export, named `export`), the harness calls the library's `__tvm_ffi_<export>` instead: it is linked
    with the library rather than the object, and tests/data/shared/native/tvm_ffi_bridge.c routes the library's
    imports to harness.c's recorders (the kernel tables still come from `obj`, the export's own object)."""
    work.mkdir(parents=True, exist_ok=True)
    functions = native_harness.defined_functions(library or obj)
    if library is not None:      # anchors for caller names: the functions the executable can see, the dynamic ones
        exported = set(_dynamic_symbols(library))
        functions = [dataclasses.replace(f, is_global=f.name in exported) for f in functions]
    (work / "tables.c").write_text(tables_source(obj, functions))
    # a library's plain runtime imports bind to the bridge's recorders: stubs.c's own versions are renamed away
    renamed = "".join(f"#define {s} gt_header_{s}\n" for s in PLAIN_RUNTIME) if library is not None else ""
    (work / "runtime.c").write_text(renamed + native_harness.runtime_source())
    member = "tvm_ffi_extension.c.o"
    subprocess.run(["ar", "x", str(libs["dsl_lib"] / "libcuda_dialect_runtime_static.a"), member],
                   cwd=work, check=True, capture_output=True)
    wrapped, inputs = WRAPPED, [str(obj)]
    if library is not None:      # the library's calls reach the recorders through the bridge, not --wrap
        wrapped = PLAIN_RUNTIME
        subprocess.run(["objcopy", *(f"--redefine-sym={s}=__real_{s}" for s in BRIDGED_HELPERS), member],
                       cwd=work, check=True, capture_output=True)
        inputs = [str(SHARED_NATIVE / "tvm_ffi_bridge.c"), *map(str, sources), str(library.resolve()), "-ldl",
                  "-Wl,--no-as-needed"]
    exe = work / "harness"
    command = ["cc", "-O0", "-w", *(["-fPIC"] if library else []), f"-DENTRY=__tvm_ffi_{export or entry_name(obj)}",
               "-I", str(NATIVE), "-I", str(STUBS),
               "-I", str(STUBS / "include"), "-I", str(libs["tvm_ffi_include"]), "-o", str(exe),
               str(NATIVE / "harness.c"), str(work / "tables.c"), str(work / "runtime.c"), *inputs,
               str(work / member), f"-L{libs['tvm_ffi_lib']}", "-ltvm_ffi", f"-L{libs['dsl_lib']}",
               "-lcute_dsl_runtime", f"-Wl,-rpath,{libs['tvm_ffi_lib']}:{libs['dsl_lib']}",
               *(f"-Wl,--wrap={s}" for s in wrapped)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"linking the TVM-FFI harness for {library or obj} failed:\n{result.stderr}")
    return exe


def _dynamic_symbols(library: Path) -> list[str]:
    listing = subprocess.run(["nm", "-D", "--defined-only", str(library)], check=True, capture_output=True, text=True)
    return [line.split()[-1] for line in listing.stdout.splitlines()]


# -- one argument set ----------------------------------------------------------------------------------------
def _device(text: str) -> tuple[int, int]:
    kind, _, index = text.partition(":")
    return DEVICES[kind], int(index or 0)


def directives(argset: dict) -> str:
    """The harness's stdin for one argument set (harness.c's header lists the directives)."""
    lines = [f"env_stream {int(d)} {int(h)}" for d, h in (argset.get("env_stream") or {}).items()]
    lines += [f"inject {s}:{c}:{e}:{int(every)}" for s, c, e, every in argset.get("inject", ())]
    lines.append(f"calls {argset.get('calls', 1)}")
    tensors = iter(range(1 << 30))
    for arg in argset["args"]:
        lines += _item_lines(arg, tensors)
    return "\n".join(lines) + "\n"


def _item_lines(arg, tensors) -> list[str]:
    """One item of the argument form as harness.c's directive lines: a tuple is `tuple N` and its N items' lines
    (tensors count in flattened order for their default data address, as the argument form's do)."""
    if arg is None:
        return ["none"]
    (kind, value), = arg.items()
    if kind == "tensor":
        code, bits = DTYPES[value["dtype"]]
        device_type, device_id = _device(value.get("device", "cuda:0"))
        shape, strides = value["shape"], value.get("strides")
        index = next(tensors)
        data = value.get("data", TENSOR_DATA_BASE + TENSOR_DATA_STRIDE * index)   # the argument form's default
        return [" ".join(map(str, [code, bits, 1, device_type, device_id, int(data), int(value.get("byte_offset", 0)),
                                   len(shape), int(strides is not None), *shape, *(strides or [])])).join(("tensor ", ""))]
    if kind == "shape":
        return [" ".join(map(str, ["shape", len(value), *value]))]
    if kind == "tuple":
        return [f"tuple {len(value)}"] + [line for item in value for line in _item_lines(item, tensors)]
    if kind in ("int", "stream"):
        return [f"{kind} {int(value)}"]
    if kind == "bool":
        return [f"bool {int(bool(value))}"]
    if kind == "float":
        return [f"float {float(value)!r}"]
    raise ValueError(f"unknown argument kind {kind}")


@functools.lru_cache(maxsize=None)
def _no_aslr() -> tuple[str, ...]:
    """`setarch <machine> -R` where it works (a container may forbid it): without address randomisation the
    recorded pointers repeat run to run. The comparison does not depend on it (pointers compare as null / non-null)."""
    command = ("setarch", os.uname().machine, "-R")
    if shutil.which("setarch") and subprocess.run([*command, "true"], capture_output=True).returncode == 0:
        return command
    return ()


def run(exe: Path, argset: dict) -> dict:
    """Run one argument set in a fresh process: {"lines": [...], "exit": code} and "signal" when it crashed."""
    result = subprocess.run([*_no_aslr(), str(exe)], input=directives(argset), capture_output=True, text=True, timeout=60)
    out = {"lines": [json.loads(line) for line in result.stdout.splitlines()], "exit": result.returncode}
    if result.returncode < 0:
        out["signal"] = signal.Signals(-result.returncode).name
    if result.returncode > 0 and result.stderr:
        out["stderr"] = result.stderr[-2000:]
    return out


def record(obj: Path, argsets: list[dict], libs: dict | None = None) -> list[dict]:
    """Every argument set's native run, in order: [{"name", "args", ..., "native": run(...)}]."""
    libs = libs or libraries()
    with tempfile.TemporaryDirectory(prefix="tvm-ffi-native-") as work:
        exe = build(obj, Path(work), libs)
        return [{**argset, "native": run(exe, argset)} for argset in argsets]


@functools.lru_cache(maxsize=None)
def committed(name: str) -> list[dict]:
    return json.loads((NATIVE / "traces" / f"{name}.json").read_text())["runs"]


# -- the comparison with emu ----
# the runtime's error texts: `const char *` results, compared as non-null (natively the text is in args.text)
TEXT_RESULTS = ("cudaGetErrorName", "cudaGetErrorString")
# emu's faults that a native process dies of with SIGSEGV (its fault address and location are compared)
MEMORY_FAULTS = ("unmapped_read", "unmapped_write", "unmapped_fetch", "protected_read", "protected_write", "protected_fetch")


def comparable(record: dict) -> dict:
    """native_harness.comparable_call, with the error-text lookups' results compared as non-null."""
    event = native_harness.comparable_call(record)
    if event["symbol"] in TEXT_RESULTS:
        event["args"] = {"error": event["args"]["error"]}
        event["ret"] = bool(event["ret"])
    return event


# where handles appear: the outputs that hand one out, the arguments that name one
HANDLE_OUTPUTS = {"_cudaLibraryLoadData": "library", "_cudaLibraryGetKernel": "pKernel"}
HANDLE_ARGS = ("library", "kernel", "func")


def named_handles(events: list[dict]) -> list[dict]:
    """Library and kernel handles as "handle N", N counting the handles in the order they were handed out.
    A handle is opaque; the stubs and emu number theirs from one counter, which they advance differently where
    an H200 refuses a binary (the stubs, told to fail the lookups, still register the kernels; emu's h200 does not)."""
    names: dict[int, str] = {}
    out = []
    for event in events:
        if event["kind"] == "call":
            event = {**event, "args": dict(event["args"]), "outputs": dict(event["outputs"])}
            for key in HANDLE_ARGS:
                if key in event["args"] and event["args"][key] in names:
                    event["args"][key] = names[event["args"][key]]
            field = HANDLE_OUTPUTS.get(event["symbol"])
            if field in event["outputs"]:
                handle = event["outputs"][field]
                event["outputs"][field] = names.setdefault(handle, f"handle {len(names) + 1}")
        out.append(event)
    return out


def argument_sets(key: str) -> list[dict]:
    return json.loads((NATIVE / "argsets" / f"{key}.json").read_text())


def native_events(run: dict) -> list[dict]:
    """A native run as comparable events: calls (native_harness.comparable_call: out-parameters as outputs,
    pointers as null / non-null, library and kernel handles named by `named_handles`), each entry call's return
    and raised error, and a crash's address and location. The lines printed after main returned (the object's
    destructor: cuda_dialect_unload_library_once, cudaLibraryUnload) are emu's `process_exit` entry, which
    returns 0 when the process exits normally."""
    events = []
    for line in run["lines"]:
        if line["kind"] == "tvm_ffi":
            events.append({"kind": "entry", "entry": "tvm_ffi", "returned": line["returned"], "raised": line["raised"]})
        elif line["kind"] == "signal":
            events.append({"kind": "crash", "address": line["address"], "location": line["location"]})
        else:
            events.append(comparable({**line, "entry": line["entry"] or "process_exit"}))
    if run["exit"] == 0:
        events.append({"kind": "entry", "entry": "process_exit", "returned": 0, "raised": None})
    return named_handles(events)


def emu_run(obj: Path, argset: dict, library: Path | None = None, export: str | None = None):
    """emu's run of one argument set under the stubs' runtime (native_harness.runtime_config: 2 devices,
    attribute 97 = 232448, kernel i's static shared memory 1024 * (i + 1), the set's injected errors), on
    the profile whose device runs the object's cubin, the entry called `calls` times, then the process exit. A set with `profile`
    runs on that profile with nothing injected: the native run's injections stand for that device. With `library`,
    the export named `export` of that shared library runs (`obj`, its own object, gives the kernel names)."""
    from emu.cuda.object_profile import profile_for_object
    from emu.dsl.entries import EntrySpec
    from emu.run.session import run_object
    if argset.get("profile"):        # emu's own model of that device stands for what the stubs were told to inject
        config = native_harness.runtime_config(kernel_names(obj), [], argset["profile"])
    else:
        config = native_harness.runtime_config(kernel_names(obj), [tuple(e) for e in argset.get("inject", ())],
                                               profile_for_object(str(library or obj), export))
    env = {int(device): int(handle) for device, handle in (argset.get("env_stream") or {}).items()}
    entry = EntrySpec(name="tvm_ffi", args=argset["args"], env_stream=env or None)
    return run_object(str(library or obj), config=config, entries=[entry] * argset.get("calls", 1) + [EntrySpec(name="process_exit")],
                      export=export)


def emu_events(run) -> list[dict]:
    """emu's run in native_events' shape; an entry that faulted on memory ends with {"kind": "crash", address,
    location} (a native run's SIGSEGV line), any other fault with {"kind": "fault", "fault": "<kind>: <message>"}."""
    events = []
    for entry in run.entries:
        events += [comparable(call.model_dump()) for call in run.calls[entry.first_call:entry.end_call]]
        if entry.fault is not None and entry.fault.kind in MEMORY_FAULTS:
            events.append({"kind": "crash", "address": entry.fault.address, "location": entry.fault.location})
            break                                       # the process died: nothing after it runs
        elif entry.fault is not None:
            events.append({"kind": "fault", "fault": f"{entry.fault.kind}: {entry.fault.message}"})
        else:
            events.append({"kind": "entry", "entry": entry.entry, "returned": entry.returned, "raised": entry.raised})
    return named_handles(events)


def check_trace_cli(path: Path, argset: dict, work: Path, export: str | None = None) -> None:
    """`python -m emu trace PATH --args FILE --json` with the set's argument form alone reports the recorded native
    outcome of its first call: the same return code and raised error, or a memory fault where the process crashed
    (`export`: which of a library's exports, each of which trace runs, the set was recorded on)."""
    import sys
    args = work / "args.json"
    args.write_text(json.dumps(argset["args"]))
    result = subprocess.run([sys.executable, "-m", "emu", "trace", str(path), "--args", str(args), "--json"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    runs = json.loads(result.stdout)
    entry = next(run for run in runs if export in (None, run["export"]))["entries"][0]
    recorded = [line for line in argset["native"]["lines"] if line["kind"] != "call"][0]
    if recorded["kind"] == "signal":
        assert result.returncode != 0 and entry["fault"]["kind"] in MEMORY_FAULTS, result.stderr
        assert (entry["fault"]["address"], entry["fault"]["location"]) == (recorded["address"], recorded["location"])
    else:
        assert (entry["returned"], entry["raised"]) == (recorded["returned"], recorded["raised"]), result.stderr


# -- AArch64: the same harness cross-linked and run under qemu-aarch64 ------------------------------------------
AARCH64_SYSROOT = "/usr/aarch64-linux-gnu"          # qemu-aarch64 -L: the cross toolchain's libc and libstdc++
# harness.c reads the faulting pc from x86-64's register array; AArch64's mcontext names it
_X86_PC, _AARCH64_PC = "uc_mcontext.gregs[REG_RIP]", "uc_mcontext.pc"


def aarch64_libraries() -> dict | None:
    """libraries()'s shape for the AArch64 wheels (apache-tvm-ffi's tvm_ffi folder and nvidia-cutlass-dsl-libs-cu12's
    nvidia_cutlass_dsl/cu12/lib, downloaded with `pip download --platform manylinux_2_28_aarch64` and unpacked),
    named by EMU_TEST_TVM_FFI_AARCH64_DIR and EMU_TEST_DSL_AARCH64_LIBDIR; None when either is not named or lacks
    the library."""
    tvm, dsl_lib = os.environ.get("EMU_TEST_TVM_FFI_AARCH64_DIR"), os.environ.get("EMU_TEST_DSL_AARCH64_LIBDIR")
    if not tvm or not dsl_lib or not (Path(tvm) / "lib" / "libtvm_ffi.so").exists() \
            or not (Path(dsl_lib) / "libcute_dsl_runtime.so").exists():
        return None
    return {"tvm_ffi_include": Path(tvm) / "include", "tvm_ffi_lib": Path(tvm) / "lib", "dsl_lib": Path(dsl_lib)}


def aarch64_available() -> bool:
    return bool(shutil.which("aarch64-linux-gnu-gcc") and shutil.which("qemu-aarch64")
                and Path(AARCH64_SYSROOT, "lib").is_dir() and aarch64_libraries() is not None)


def build_aarch64(obj: Path, work: Path, libs: dict) -> Path:
    """`build` for an AArch64 object: the harness linked by aarch64-linux-gnu-gcc against the AArch64 wheels'
    libraries. Returns a script that runs it under `qemu-aarch64 -L AARCH64_SYSROOT`, so `run` takes it as it is."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "tables.c").write_text(tables_source(obj))
    (work / "runtime.c").write_text(native_harness.runtime_source())
    harness = (NATIVE / "harness.c").read_text()
    if _X86_PC not in harness:
        raise RuntimeError(f"{NATIVE / 'harness.c'} no longer reads {_X86_PC}: update build_aarch64")
    (work / "harness.c").write_text(harness.replace(_X86_PC, _AARCH64_PC))
    subprocess.run(["ar", "x", str(libs["dsl_lib"] / "libcuda_dialect_runtime_static.a"), "tvm_ffi_extension.c.o"],
                   cwd=work, check=True, capture_output=True)
    binary = work / "harness.aarch64"
    command = ["aarch64-linux-gnu-gcc", "-O0", "-w", f"-DENTRY=__tvm_ffi_{entry_name(obj)}",
               "-I", str(NATIVE), "-I", str(STUBS), "-I", str(STUBS / "include"), "-I", str(libs["tvm_ffi_include"]),
               "-o", str(binary), str(work / "harness.c"), str(work / "tables.c"), str(work / "runtime.c"), str(obj),
               str(work / "tvm_ffi_extension.c.o"), f"-L{libs['tvm_ffi_lib']}", "-ltvm_ffi", f"-L{libs['dsl_lib']}",
               "-lcute_dsl_runtime", f"-Wl,-rpath,{libs['tvm_ffi_lib']}:{libs['dsl_lib']}",
               *(f"-Wl,--wrap={s}" for s in WRAPPED)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"linking the AArch64 TVM-FFI harness for {obj} failed:\n{result.stderr}")
    script = work / "harness"
    script.write_text(f'#!/bin/sh\nexec qemu-aarch64 -L {AARCH64_SYSROOT} "{binary}" "$@"\n')
    script.chmod(0o755)
    return script
