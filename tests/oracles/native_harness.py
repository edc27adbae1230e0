"""Native ground truth for emu: link an export with recording C stubs, run it, compare with emu.

For one fixture this module
- picks the RuntimeConfig both sides use (`runtime_config`) and the entry sequence (`entry_specs`),
- compiles `stubs.c` (the recording stubs, answering like emu's runtime model) once per architecture
  (`build_stubs`),
- writes a C harness (`harness_source`): the fixture's kernel and function tables, its own export
  header (its `Kernel_Module_Load` and launch wrapper run for real) and a `main` that calls the
  entries in the same order emu runs them; `--wrap` records the entries the header calls,
- links harness, stubs and object (`build`, natively or with a cross compiler) and runs it once per
  variant (`run_native`; injected errors go on the command line),
- turns emu's ObjectRun into the same event list (`emu_events`) and finds the first difference
  (`first_difference`).

Events are entry returns and calls, in order.  Call arguments are compared by their stub-model
marker: `out` parameters are left out (their values are compared as outputs), `ptr` parameters are
compared as null / non-null (they point into the caller's stack or the object's data, which differ
natively), everything else (integers, handles, C strings, decoded structs) exactly.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from emu.dsl.launch.arguments import STREAM_HANDLE, TENSOR_DATA_BASE, TENSOR_DATA_STRIDE
from tests.oracles import difference
from stub_models import model_of

HERE = Path(__file__).resolve().parent
NATIVE = HERE / "native"          # the recording stubs (stubs.c, stubs.h) and the CUDA headers they declare
PROFILE = HERE.parent.parent / "emu" / "cuda" / "profiles" / "h200.json"
NUM_FUNC_ATTRIBUTES = 18          # CUfunction_attribute 0-17 (stubs.h says the same)
DEVICE_COUNT = 2                  # stubs.h says the same
LIBRARY_HANDLE = 0x11B0000
FIRST_KERNEL_HANDLE = 0x4B000
OPTIN_SMEM = 232448               # H200 cudaDevAttrMaxSharedMemoryPerBlockOptin (97)
STATIC_SMEM_STEP = 1024           # kernel i has static shared memory 1024 * (i + 1)

# A second run of every fixture fails chosen calls (RuntimeConfig.errors): each loader form meets an
# error somewhere, so the stop-at-first-error paths, the entry results and what later entries see
# (a failed cudaLibraryLoadData leaves the old library in the slot) are compared too.
# (symbol, N-th call, cudaError_t, every later call too); where each lands depends on the kernel count.
INJECTED_ERRORS = (
    ("_cudaFuncSetAttribute", 2, 1, False),                # the first cuda_load stops at attribute 14
    ("_cuKernelGetAttribute", 2, 400, False),              # a cuda_load_to_device stops at a kernel
    ("_cudaKernelSetAttributeForDevice", 3, 1, False),
    ("_cudaLibraryLoadData", 2, 2, False),                 # mlir_cuda_init fails: the old library stays
    ("_cudaGetDevice", 3, 3, False),                       # a cuda_load fails before any kernel
    ("_cudaLibraryGetKernel", 9, 500, False),
    ("_cudaDeviceGetAttribute", 12, 101, True),            # from here every load_to_device fails first thing
    ("_cudaLaunchKernelEx", 1, 9, False),                  # the launch wrapper stops at the failed launch
)
VARIANTS = {"answers": (), "injected_errors": INJECTED_ERRORS}


# -- the configuration both sides share ---------------------------------------------------------
def static_smem(index: int) -> int:
    return STATIC_SMEM_STEP * (index + 1)


def runtime_config(kernel_names: list[str], errors=(), profile: str = "h200"):
    from emu.cuda.config import RuntimeConfig
    return RuntimeConfig(profile=profile, device_count=DEVICE_COUNT, current_device=0, library_handle=LIBRARY_HANDLE,
                         first_kernel_handle=FIRST_KERNEL_HANDLE, device_attributes={97: OPTIN_SMEM},
                         kernel_attributes={name: {1: static_smem(i)} for i, name in enumerate(kernel_names)},
                         errors=[{"symbol": symbol, "call": call, "error": error, "every": every}
                                 for symbol, call, error, every in errors])


def injection_args(errors=()) -> list[str]:
    """The harness's command line for RuntimeConfig.errors: symbol:call:error:every."""
    return [f"{symbol}:{call}:{error}:{int(every)}" for symbol, call, error, every in errors]


def entry_specs(has_mlir_cuda_load: bool) -> list:
    """Loaders before cuda_init (on the configured library), an absent device, then every form."""
    from emu.dsl.entries import EntrySpec as E
    plain_loads = [E(name="cuda_load")] + [E(name="cuda_load_to_device", device=d) for d in (0, 1)]
    return [*plain_loads, E(name="cuda_load_to_device", device=DEVICE_COUNT),
            E(name="cuda_init"), *plain_loads,
            E(name="mlir_cuda_init"), *([E(name="mlir_cuda_load")] if has_mlir_cuda_load else []),
            *[E(name="mlir_cuda_load_to_device", device=d) for d in (0, 1, DEVICE_COUNT)],
            E(name="module_load"), E(name="launch")]


def kernel_defaults(static_shared: int) -> list[int]:
    """Every CUfunction_attribute of a fresh kernel on the H200, as measured (facts/h200-probe.jsonl)."""
    profile = json.loads(PROFILE.read_text())
    values = [0] * NUM_FUNC_ATTRIBUTES
    for table in ("kernel_read_only", "kernel_settable_defaults"):
        for attr, value in profile[table].items():
            values[int(attr)] = value
    values[1] = static_shared
    values[8] = max(0, 48 * 1024 - static_shared)     # CUDA's default dynamic shared memory limit
    return values


def device_attributes() -> dict[int, int]:
    profile = json.loads(PROFILE.read_text())
    return {**{int(k): v for k, v in profile["device_attributes"].items()}, 97: OPTIN_SMEM}


def runtime_source() -> str:
    """stubs.c with the device attribute table: one object per architecture, shared by every harness."""
    table = ", ".join(f"{{{a}, {v}}}" for a, v in sorted(device_attributes().items()))
    return "\n".join(['#include "stubs.c"', f"const int gt_device_attributes[][2] = {{{table}}};",
                      f"const int gt_device_attribute_count = {len(device_attributes())};"]) + "\n"


# -- the object's defined functions (for caller names), read straight from its ELF symbol table -----
@dataclass(frozen=True)
class Function:
    name: str
    size: int
    section: int
    value: int
    is_global: bool


def defined_functions(obj: Path) -> list[Function]:
    """Every function (STT_FUNC) the object defines, global or local."""
    data = obj.read_bytes()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    functions = []
    for _, sh_type, _, _, offset, size, link, _, _, entsize in sections:
        if sh_type != 2:                                  # SHT_SYMTAB
            continue
        strtab = sections[link]
        for pos in range(offset + entsize, offset + size, entsize):
            st_name, st_info, _, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", data, pos)
            if st_info & 0xF == 2 and 0 < st_shndx < 0xFF00:                # STT_FUNC in a real section
                start = strtab[4] + st_name
                functions.append(Function(data[start:data.index(b"\0", start)].decode(), st_size, st_shndx,
                                          st_value, st_info >> 4 != 0))
    return functions


def function_table(functions: list[Function], wrapped: set[str]) -> list[str]:
    """C for `gt_object_functions`: globals by name (asm labels, since the header may declare the same
    names with other C types; wrapped ones through __real_), locals at an offset from a global
    function of their section."""
    globals_ = [f for f in functions if f.is_global]
    lines, rows = [], []
    for i, f in enumerate(globals_):
        lines.append(f'extern char object_function_{i}[] __asm__("{"__real_" + f.name if f.name in wrapped else f.name}");')
    for f in functions:
        anchor = next((i for i, g in enumerate(globals_) if g.section == f.section), None)
        if anchor is None:
            continue                                       # unreachable from C; its calls show as raw addresses
        rows.append(f'{{"{f.name}", object_function_{anchor} + ({f.value} - {globals_[anchor].value}), {f.size}}}')
    lines.append("const struct gt_function gt_object_functions[] = {" + ", ".join(rows) + "};")
    lines.append(f"const int gt_object_function_count = {len(rows)};")
    return lines


# -- the harness ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Fixture:
    obj: Path
    header: Path
    prefix: str
    kernel_names: tuple[str, ...]
    arch: str                         # "x86_64" or "aarch64"

    @property
    def functions(self) -> list[Function]:
        return defined_functions(self.obj)

    @property
    def has_mlir_cuda_load(self) -> bool:
        return any(f.name == f"_mlir_{self.prefix}_cuda_load" for f in self.functions)


_WRAPPER = re.compile(r"static inline int32_t (cute_dsl_\w+_wrapper)\(([^)]*)\)\s*\{(.*?)\n\}", re.S)
_TYPEDEF = re.compile(r"typedef struct \{([^}]*)\}\s*(\w+);", re.S)
_LAUNCH = re.compile(r"void (_mlir_\w+__mlir_ciface_\w+)\(void \*\*args, int32_t num_args\);")


def _launch_call(header_text: str) -> tuple[str, list[str]]:
    """C statements that build the wrapper's arguments the way emu's launch.py does, and the call."""
    match = _WRAPPER.search(header_text)
    if match is None:
        raise ValueError("no cute_dsl_<prefix>_wrapper in the header")
    structs = {name: body for body, name in _TYPEDEF.findall(header_text)}
    lines, call_args = [], ["&module"]
    for index, param in enumerate(p.strip() for p in match.group(2).split(",")[1:]):
        ctype, name = re.match(r"(.*?)\s*(\**\w+)$", param).groups()
        pointer, name = name.startswith("*"), name.lstrip("*")
        if pointer and ctype in structs:
            lines.append(f"{ctype} {name}; memset(&{name}, 0, sizeof {name});")
            for field in filter(None, (f.strip() for f in structs[ctype].split(";"))):
                ftype, fname = field.rsplit(None, 1)
                if "*" in ftype or fname.startswith("*"):
                    value = TENSOR_DATA_BASE + index * TENSOR_DATA_STRIDE
                    lines.append(f"{name}.{fname.lstrip('*')} = (void *)(uintptr_t){value:#x};")
                else:
                    array = re.match(r"(\w+)\[(\d+)\]", fname)
                    base, count = (array.group(1), int(array.group(2))) if array else (fname, 0)
                    value = 1 if "stride" in base else 128
                    if array:
                        lines.append(f"for (int i = 0; i < {count}; i++) {name}.{base}[i] = {value};")
                    else:
                        lines.append(f"{name}.{base} = {value};")
            call_args.append(f"&{name}")
        elif "Stream" in ctype or "stream" in ctype:
            call_args.append(f"(cudaStream_t)(uintptr_t){STREAM_HANDLE:#x}")
        else:
            call_args.append("0")
    lines.append(f"{match.group(1)}({', '.join(call_args)});")
    return launch_symbol(header_text), lines


def launch_symbol(header_text: str) -> str:
    match = _LAUNCH.search(header_text)
    if match is None:
        raise ValueError("no launch wrapper declaration in the header")
    return match.group(1)


def wrapped_symbols(fixture: Fixture) -> list[str]:
    """Object functions the header calls: linked with --wrap so entries are recorded around them."""
    p = fixture.prefix
    return [f"_mlir_{p}_cuda_init", f"_mlir_{p}_cuda_load_to_device", launch_symbol(fixture.header.read_text())]


def harness_source(fixture: Fixture) -> str:
    p, header_text = fixture.prefix, fixture.header.read_text()
    names = list(fixture.kernel_names)
    wrapped = set(wrapped_symbols(fixture))
    out = ["#include <stdio.h>", "#include <stdint.h>", "#include <string.h>", '#include "cuda_runtime.h"',
           '#include "stubs.h"',
           f"const int gt_kernel_count = {len(names)};",
           "const char *const gt_kernel_names[] = {" + ", ".join(json.dumps(n) for n in names) + "};",
           "const int64_t gt_kernel_defaults[][NUM_FUNC_ATTRIBUTES] = {"
           + ", ".join("{" + ", ".join(map(str, kernel_defaults(static_smem(i)))) + "}" for i in range(len(names))) + "};"]
    out += function_table(fixture.functions, wrapped)
    out += ["#define CUTE_DSL_CUDA_ERROR_CHECK(err) { cudaError_t status_ = (err); (void)status_; }",
            f'#include "{fixture.header.name}"',
            f"static {p}_Kernel_Module_t module;"]
    launch, launch_lines = _launch_call(header_text)
    for symbol, entry, device_arg in ((f"_mlir_{p}_cuda_init", "mlir_cuda_init", None),
                                      (f"_mlir_{p}_cuda_load_to_device", "mlir_cuda_load_to_device", 1)):
        ret_index = 2 if device_arg else 1
        args = ('char args_[32]; snprintf(args_, sizeof args_, "{\\"device\\": %d}", *(int32_t *)packed[1]);'
                if device_arg else 'const char *args_ = "{}";')
        out += [f"void __real_{symbol}(void **packed);",
                f"void __wrap_{symbol}(void **packed) {{",
                f'    const char *saved = gt_enter("{entry}"); {args}',
                f"    *(int32_t *)packed[{ret_index}] = -1; __real_{symbol}(packed);",
                f"    gt_leave(saved, args_, *(int32_t *)packed[{ret_index}]);", "}"]
    out += [f"void __real_{launch}(void **args, int32_t num_args);",
            f"void __wrap_{launch}(void **args, int32_t num_args) {{",
            '    const char *saved = gt_enter("launch"); char args_[32];',
            '    snprintf(args_, sizeof args_, "{\\"num_args\\": %d}", num_args);',
            f"    *(int32_t *)args[num_args - 1] = -1; __real_{launch}(args, num_args);",
            "    gt_leave(saved, args_, *(int32_t *)args[num_args - 1]);", "}",
            f"int {p}_cuda_init(void **); int {p}_cuda_load(void **); int {p}_cuda_load_to_device(void **, int);",
            f"void _mlir_{p}_cuda_load(void **);",
            "int main(int argc, char **argv) {",
            "    for (int i = 1; i < argc; i++) gt_parse_injection(argv[i]);",
            f"    module.module = (cudaLibrary_t)(uintptr_t){LIBRARY_HANDLE:#x};",
            "    gt_register_library(LIBRARY_HANDLE_, FIRST_KERNEL_HANDLE_);",
            "    cudaLibrary_t *library_ptr = &module.module;",
            "    int32_t ret, device_id; char args_[32]; const char *saved;",
            "    setvbuf(stdout, NULL, _IOFBF, 1 << 16);"]
    for spec in entry_specs(fixture.has_mlir_cuda_load):
        name, device = spec.name, spec.device or 0
        if name in ("cuda_init", "cuda_load"):
            out.append(f'    saved = gt_enter("{name}"); ret = {p}_{name}((void **)&module.module); gt_leave(saved, "{{}}", ret);')
        elif name == "cuda_load_to_device":
            out.append(f'    saved = gt_enter("{name}"); ret = {p}_cuda_load_to_device((void **)&module.module, {device});'
                       f' gt_leave(saved, "{{\\"device\\": {device}}}", ret);')
        elif name == "mlir_cuda_init":
            out.append(f"    {{ void *packed[2] = {{&library_ptr, &ret}}; _mlir_{p}_cuda_init(packed); }}")
        elif name == "mlir_cuda_load":
            out.append(f'    {{ void *packed[2] = {{&library_ptr, &ret}}; saved = gt_enter("mlir_cuda_load"); ret = -1;'
                       f' _mlir_{p}_cuda_load(packed); gt_leave(saved, "{{}}", ret); }}')
        elif name == "mlir_cuda_load_to_device":
            out.append(f"    {{ device_id = {device}; void *packed[3] = {{&library_ptr, &device_id, &ret}};"
                       f" _mlir_{p}_cuda_load_to_device(packed); }}")
        elif name == "module_load":
            out.append(f'    saved = gt_enter("module_load"); {p}_Kernel_Module_Load(&module); gt_current_entry = saved;')
        else:
            out.append("    {")
            out += ["        " + line for line in launch_lines]
            out.append("    }")
    out += ["    (void)args_; return 0;", "}"]
    defines = [f"#define LIBRARY_HANDLE_ {LIBRARY_HANDLE:#x}", f"#define FIRST_KERNEL_HANDLE_ {FIRST_KERNEL_HANDLE:#x}"]
    return "\n".join(defines + out) + "\n"


# -- toolchains -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Toolchain:
    arch: str
    compiler: str
    flags: tuple[str, ...]
    runner: tuple[str, ...]            # prefix for running the binary (qemu-aarch64), or ()


def toolchain(arch: str) -> Toolchain | None:
    """A compiler (and emulator) that can link and run objects of `arch` on this machine, or None."""
    machine = os.uname().machine
    if arch == "x86_64" and machine == "x86_64" and shutil.which("cc"):
        return Toolchain("x86_64", "cc", (), ())
    if arch == "aarch64":
        if machine == "aarch64" and shutil.which("cc"):
            return Toolchain("aarch64", "cc", (), ())
        if shutil.which("aarch64-linux-gnu-gcc") and shutil.which("qemu-aarch64"):
            return Toolchain("aarch64", "aarch64-linux-gnu-gcc", ("-static",), ("qemu-aarch64",))
    return None


def _compile(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{' '.join(command)}\n{result.stderr}")


def build_stubs(tools: Toolchain, work: Path) -> Path:
    """Compile the recording stubs once for an architecture."""
    work.mkdir(parents=True, exist_ok=True)
    source, obj = work / f"runtime-{tools.arch}.c", work / f"runtime-{tools.arch}.o"
    source.write_text(runtime_source())
    _compile([tools.compiler, "-O0", "-w", "-c", "-I", str(NATIVE / "include"), "-I", str(NATIVE),
              "-o", str(obj), str(source)], f"compiling the {tools.arch} stubs")
    return obj


def build(fixture: Fixture, tools: Toolchain, work: Path, stubs: Path) -> Path:
    """Write the harness for `fixture`, link it with the stubs and the object, return the executable."""
    work.mkdir(parents=True, exist_ok=True)
    source, exe = work / "harness.c", work / "harness"
    source.write_text(harness_source(fixture))
    wraps = [f"-Wl,--wrap={symbol}" for symbol in wrapped_symbols(fixture)]
    _compile([tools.compiler, *tools.flags, "-O0", "-w", "-I", str(NATIVE / "include"), "-I", str(NATIVE),
              "-I", str(fixture.header.parent), "-o", str(exe), str(source), str(stubs), str(fixture.obj), *wraps],
             f"linking the harness for {fixture.obj}")
    return exe


def run_native(exe: Path, tools: Toolchain, errors=()) -> list[dict]:
    result = subprocess.run([*tools.runner, str(exe), *injection_args(errors)], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"{exe} exited with {result.returncode}:\n{result.stderr}\n{result.stdout[-2000:]}")
    return [json.loads(line) for line in result.stdout.splitlines()]


# -- emu's side, in the same shape ------------------------------------------------------------------
def run_emu(fixture: Fixture, errors=()):
    from emu.run.session import run_object
    from emu.cuda.object_profile import profile_for_object
    profile = profile_for_object(str(fixture.obj))    # the harness's stubs answer as a device that runs the cubin
    return run_object(str(fixture.obj), config=runtime_config(list(fixture.kernel_names), errors, profile),
                      entries=entry_specs(fixture.has_mlir_cuda_load))


def _comparable_args(symbol: str, args: dict) -> dict:
    # every stub family; a plain runtime call a helper makes (cudaGetDeviceCount) has its wrapper's model
    model = model_of(symbol) or model_of("_" + symbol)
    if model is None:
        return dict(args)
    out = {}
    for param in model.params():
        if param.name not in args or param.c.kind == "out":
            continue
        value = args[param.name]
        if param.c.kind == "ptr":
            value = bool(value)
        elif param.c.kind == "struct" and isinstance(value, dict):
            value = _without_names(value)
        out[param.name] = value
    return out


def _without_names(value):
    """Decoded structs: emu adds each launch attribute's enum name, derived from its id."""
    if isinstance(value, dict):
        return {k: _without_names(v) for k, v in value.items() if k != "name"}
    if isinstance(value, list):
        return [_without_names(v) for v in value]
    return value


def comparable_call(record: dict) -> dict:
    return {"kind": "call", "entry": record["entry"], "symbol": record["symbol"], "caller": record["caller"],
            "args": _comparable_args(record["symbol"], record["args"]), "outputs": dict(record["outputs"]),
            "ret": record["ret"]}


def emu_events(run) -> list[dict]:
    """emu's entries and calls as one ordered list: each entry's return follows its calls."""
    events, entries = [], list(run.entries)
    for index, call in enumerate(run.calls):
        while entries and entries[0].end_call <= index:
            events.append(_entry_event(entries.pop(0)))
        events.append(comparable_call(call.model_dump()))
    events += [_entry_event(entry) for entry in entries]
    return events


def _entry_event(entry) -> dict:
    event = {"kind": "entry", "entry": entry.entry, "args": dict(entry.args), "returned": entry.returned}
    if entry.fault is not None:
        event["fault"] = f"{entry.fault.kind}: {entry.fault.message}"
    return event


def native_events(lines: list[dict]) -> list[dict]:
    return [comparable_call(line) if line["kind"] == "call" else line for line in lines]


def first_difference(emu: list[dict], native: list[dict]) -> str | None:
    """None when the two event lists agree; otherwise a message naming the first differing event."""
    return difference.first_difference(emu, native, "event")
