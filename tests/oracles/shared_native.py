"""Native ground truth for shared libraries: `dlopen` each fixture under a recording CUDA runtime, run its loaders.

tests/data/shared/native/ holds the C: `harness.c` (dlopen the library RTLD_NOW, dlsym each export's loaders,
run cuda_init, cuda_load, cuda_load_to_device per device, as emu's `trace` does), and the recording stand-ins,
each built on tests/fixtures/realworld/stubs.c so that they answer and print exactly as the realworld recorder:
`librecording_cudart.so` (the plain runtime and driver behind a static-runtime library's own wrappers; loaded
first with RTLD_GLOBAL), `libcute_dsl_runtime.so` (the `_cuda*` wrappers a `-lcute_dsl_runtime` library imports)
and `libtvm_ffi.so`. `build(arch, work)` compiles them for x86-64 (cc) or AArch64 (aarch64-linux-gnu-gcc, run
under `qemu-aarch64 -L /usr/aarch64-linux-gnu`); `record(library, built)` runs one library and returns its lines;
`record_all()` writes the committed traces `tests/data/shared/<arch>/<name>.calls.json` (`make.py record`).

Lines: `{"loaded": true}` after dlopen, `{"export": P}` starts an export's run, `{"dlclose": true}` comes
before dlclose (a TVM-FFI library's destructor runs then); then STUBS_C's phases and calls (tests/oracles/recorder_lines.py);
`{"runtime": ...}` lines are the plumbing behind a static-runtime wrapper (cudaGetDriverEntryPointByVersion,
cuDeviceGet), `{"call": name, "unmodelled": true}` a runtime function nothing models.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.fixtures.realworld import native_recorder
from tests.oracles.native_harness import Toolchain
from tests.oracles.recorder_lines import LOADER_ENTRIES, STUBS_C, recorder_config

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / "tests" / "data" / "shared"
NATIVE = SHARED / "native"
STUBS = ROOT / "tests" / "fixtures" / "realworld"           # stubs.c
MANIFEST = json.loads((SHARED / "MANIFEST.json").read_text())
LIBRARIES = MANIFEST["libraries"]
DEVICES = 2                                                  # stubs.c's device count: trace loads to each
# What recording_cudart.c defines itself; every other runtime function a static-runtime library imports gets
# an unmodelled recorder (unmodelled.c), so that dlopen(RTLD_NOW) binds every import as a CUDA process would.
MODELLED = {"cudaGetDeviceCount", "cudaLibraryUnload", "cudaGetErrorName", "cudaGetErrorString", "cudaGetDevice",
            "cudaDeviceGetAttribute", "cudaLibraryGetKernel", "cudaFuncSetAttribute", "cudaKernelSetAttributeForDevice",
            "cudaLibraryLoadData", "cudaLaunchKernelExC", "cudaSetDevice", "cudaGetDriverEntryPointByVersion"}


def toolchain(arch: str) -> Toolchain | None:
    """A compiler that links shared objects for `arch`, and how to run its programs, or None."""
    if arch == "x86_64" and shutil.which("cc"):
        return Toolchain("x86_64", "cc", (), ())
    if arch == "aarch64" and shutil.which("aarch64-linux-gnu-gcc") and shutil.which("qemu-aarch64"):
        return Toolchain("aarch64", "aarch64-linux-gnu-gcc", (), ("qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"))
    return None


@dataclass(frozen=True)
class Built:
    tools: Toolchain
    folder: Path            # the stand-ins, by the sonames the libraries need
    harness: Path
    cudart: Path


def unmodelled_source(extra_imports=()) -> str:
    """C for every runtime function the fixtures (and `extra_imports`: another library's) import that nothing models."""
    imported = {name for lib in LIBRARIES for name in lib["runtime_imported"]} | set(extra_imports)
    names = sorted(name for name in imported
                   if name.startswith("cuda") and not name.startswith("cuda_dialect") and name not in MODELLED)
    return "int rec_unmodelled(const char *name);\n" + "".join(
        f'__attribute__((visibility("default"))) int {name}(void) {{ return rec_unmodelled("{name}"); }}\n'
        for name in names)


def _compile(command: list[str]) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr}")


def build(arch: str, work: Path, extra_imports=()) -> Built:
    """Compile the harness and the recording stand-ins for `arch` into `work` (`extra_imports`: runtime functions
    another library imports, for running it too)."""
    tools = toolchain(arch)
    if tools is None:
        raise RuntimeError(f"no toolchain here links and runs {arch} shared libraries")
    work.mkdir(parents=True, exist_ok=True)
    (work / "attributes.c").write_text(native_recorder.device_attribute_table())
    (work / "unmodelled.c").write_text(unmodelled_source(extra_imports))
    cc = [tools.compiler, "-O0", "-w", "-fPIC", "-I", str(STUBS)]
    shared = [*cc, "-shared"]
    cudart = work / "librecording_cudart.so"
    _compile([*shared, "-fvisibility=hidden", "-o", str(cudart), str(NATIVE / "recording_cudart.c"),
              str(work / "attributes.c"), str(work / "unmodelled.c")])
    _compile([*shared, "-Wl,-soname,libcute_dsl_runtime.so", "-o", str(work / "libcute_dsl_runtime.so"),
              str(NATIVE / "recording_dsl_runtime.c"), str(work / "attributes.c")])
    _compile([*shared, "-Wl,-soname,libtvm_ffi.so", "-o", str(work / "libtvm_ffi.so"), str(NATIVE / "recording_tvm_ffi.c")])
    harness = work / "harness"
    _compile([*cc, "-o", str(harness), str(NATIVE / "harness.c"), "-ldl"])
    return Built(tools, work, harness, cudart)


def command(library: dict) -> list[str]:
    """The harness's arguments after the recording runtime: the library, the device count, the loader prefixes."""
    return [library["path"], str(DEVICES), *[export["loader_prefix"] for export in library["exports"]]]


def record(library: dict, built: Built) -> list[dict]:
    """Run one library's loaders natively (or under qemu) and return the recorded lines."""
    return _run([str(built.harness), str(built.cudart), *command(library)], built)


def trace_path(library: dict) -> Path:
    return ROOT / (library["path"].removesuffix(".so") + ".calls.json")


def committed_lines(library: dict) -> list[dict]:
    return json.loads(trace_path(library).read_text())


def launches_path(library: dict) -> Path:
    return ROOT / (library["path"].removesuffix(".so") + ".launches.json")


def committed_launches(library: dict) -> dict[str, list[dict]]:
    """The committed launch runs of a library's launchable exports: export name -> lines."""
    return json.loads(launches_path(library).read_text())


def _json_lines(lines: list[dict]) -> str:
    return "[\n" + ",\n".join(json.dumps(line) for line in lines) + "\n]"


def by_export(lines: list[dict]) -> dict[str, list[dict]]:
    """A library's lines split at each `{"export": P}`: P -> its lines."""
    out: dict[str, list[dict]] = {}
    current = None
    for line in lines:
        if "dlclose" in line:
            break
        if set(line) == {"export"}:
            current = out.setdefault(line["export"], [])
        elif current is not None:
            current.append(line)
    return out


def shown_command(library: dict) -> str:
    """The harness's command line as the MANIFEST shows it (BUILD: the folder `build` compiled into)."""
    runner = " ".join(toolchain(library["arch"]).runner + (("-E", "LD_LIBRARY_PATH=BUILD") if library["arch"] != "x86_64" else ()))
    prefix = "LD_LIBRARY_PATH=BUILD " if library["arch"] == "x86_64" else runner + " "
    return prefix + " ".join(["BUILD/harness", "BUILD/librecording_cudart.so", *command(library)])


# -- launches: the export's own header, linked with the library -------------------------------------------
def launchable(export: dict) -> bool:
    """A realworld export has the header and the launch arguments its corpus run used."""
    return export["abi"] == "cute" and (ROOT / export["object"]).with_suffix(".args.json").exists()


def launch_args(export: dict) -> dict:
    return json.loads((ROOT / export["object"]).with_suffix(".args.json").read_text())["args"]


def record_launch(library: dict, export: dict, built: Built) -> list[dict]:
    """The realworld recorder's run of one export (cuda_init, cuda_load, cuda_load_to_device(0), the header's
    Kernel_Module_Load, the launch with the corpus's arguments: native_recorder.harness_source), its harness
    linked with the library instead of the object: the header's calls go through the library's dynamic symbols."""
    obj, prefix = ROOT / export["object"], export["name"]
    header = obj.with_suffix(".h")
    source = native_recorder.harness_source(prefix, header, native_recorder.wrapper_params(header, prefix),
                                            launch_args(export))
    work = built.folder / "launch" / f"{Path(library['path']).stem}.{prefix}"
    work.mkdir(parents=True, exist_ok=True)
    (work / "harness.c").write_text(source)
    exe = work / "harness"
    wraps = [f"-Wl,--wrap=_mlir_{prefix}_{name}" for name in ("cuda_init", "cuda_load_to_device")]
    _compile([built.tools.compiler, "-O0", "-w", "-I", str(STUBS / "include"), "-I", str(header.parent), "-o", str(exe),
              str(work / "harness.c"), str(built.cudart), str(ROOT / library["path"]), f"-L{built.folder}",
              f"-Wl,-rpath-link,{built.folder}", *wraps])
    return _run([str(exe)], built)


def _run(argv: list[str], built: Built) -> list[dict]:
    """Run a harness natively (or under qemu) with the stand-ins first on the library path."""
    runner = [*built.tools.runner, *(["-E", f"LD_LIBRARY_PATH={built.folder}"] if built.tools.runner else [])]
    env = None if built.tools.runner else {"LD_LIBRARY_PATH": str(built.folder), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([*runner, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    if result.returncode != 0:
        lines.append({"exit": result.returncode, "stderr": result.stderr[-2000:]})
    return lines


# -- the comparison -------------------------------------------------------------------------------------
def comparable(lines: list[dict]) -> list[dict]:
    """One export's native lines as STUBS_C compares them: the plumbing behind the wrappers left out."""
    return STUBS_C.normalise([line for line in lines if "runtime" not in line])


def emu_export(library: dict, export: dict):
    """emu's export of the library that the native run called by `export`'s loader prefix (emu names it)."""
    from emu.cache.loaded import load_image
    _, exports = load_image(str(ROOT / library["path"]))
    found = [e for e in exports if e.prefix == export["loader_prefix"]]
    if not found:
        raise AssertionError(f"{library['path']}: emu finds exports {[e.prefix for e in exports]}, "
                             f"not {export['loader_prefix']}")
    return found[0]


def emu_lines(library: dict, export: dict) -> list[dict]:
    """emu's run of one export's loaders (trace's: cuda_init, cuda_load, cuda_load_to_device per device), as
    the recorder prints them."""
    from emu.dsl.entries import loaders_for_devices
    from emu.run.session import run_object
    path = str(ROOT / library["path"])
    name = emu_export(library, export).name
    run = run_object(path, recorder_config(path, name), loaders_for_devices(DEVICES), export=name)
    return STUBS_C.emu_lines(run)


def emu_launch_lines(library: dict, export: dict) -> list[dict]:
    """emu's run of the realworld recorder's sequence for one export of the library (LOADER_ENTRIES, then the launch
    with the corpus's arguments), as the recorder prints it."""
    from emu.dsl.entries import EntrySpec
    from emu.run.session import run_object
    path = str(ROOT / library["path"])
    name = emu_export(library, export).name
    entries = [EntrySpec.model_validate(spec) for spec in [*LOADER_ENTRIES, {"launch": {"args": launch_args(export)}}]]
    return STUBS_C.emu_lines(run_object(path, recorder_config(path, name), entries, export=name))


def record_all() -> None:
    """Record every library of both architectures, write the committed traces and name them in MANIFEST.json."""
    with tempfile.TemporaryDirectory() as work:
        built = {arch: build(arch, Path(work) / arch) for arch in ("x86_64", "aarch64")}
        for library in LIBRARIES:
            lines = record(library, built[library["arch"]])
            trace_path(library).write_text(_json_lines(lines) + "\n")
            library["native_trace"] = {"path": str(trace_path(library).relative_to(ROOT)), "command": shown_command(library),
                                       "sha256": hashlib.sha256(trace_path(library).read_bytes()).hexdigest()}
            launches = {e["name"]: record_launch(library, e, built[library["arch"]])
                        for e in library["exports"] if launchable(e)}
            if launches:
                launches_path(library).write_text("{\n" + ",\n".join(f"{json.dumps(name)}: {_json_lines(lines)}"
                                                                     for name, lines in launches.items()) + "\n}\n")
                library["native_launches"] = {
                    "path": str(launches_path(library).relative_to(ROOT)),
                    "command": "record_launch: tests/fixtures/realworld/native_recorder.py's harness_source for the export's "
                               "header and args.json, linked with BUILD/librecording_cudart.so and the library, run as above",
                    "sha256": hashlib.sha256(launches_path(library).read_bytes()).hexdigest()}
    (SHARED / "MANIFEST.json").write_text(json.dumps(MANIFEST, indent=1) + "\n")


# -- TVM-FFI entries: each export's `__tvm_ffi_<name>`, called as the `.o` ground truth calls vec_scale.o ---------
# The exports are tests/data/tvm_ffi/build.py's vec_scale (tests/fixtures/tvm_ffi/own/vec_scale.o's kernel, same
# signature): every argument set tests/fixtures/tvm_ffi/native/record.py derived for it, and for an sm_100a export
# the two load failures it adds for one (the load refused; what an H200 answers, which emu gives from its h200 profile).
TVM_FFI_SETS = "vec_scale"


def tvm_ffi_libraries() -> list[dict]:
    return [library for library in LIBRARIES if library["abi"] == "tvm_ffi"]


def tvm_ffi_argument_sets(export: dict) -> list[dict]:
    from tests.fixtures.tvm_ffi.native.record import ENV_STREAMS, H200_SM100A, LOAD_FAILURE
    from tests.oracles import tvm_ffi_native
    sets = tvm_ffi_native.argument_sets(TVM_FFI_SETS)
    if export["name"].endswith("sm_100a"):
        good = next(s for s in sets if s["name"] == "well_formed")["args"]
        sets += [{"name": "load_failure", "args": good, "calls": 2, "inject": LOAD_FAILURE, "env_stream": ENV_STREAMS},
                 {"name": "h200_refuses_sm100a", "args": good, "calls": 2, "inject": H200_SM100A, "profile": "h200",
                  "env_stream": ENV_STREAMS}]
    return sets


def build_tvm_ffi_entry(library: dict, export: dict, work: Path, libs: dict) -> Path:
    """tests/fixtures/tvm_ffi/native/harness.c linked with the library (tvm_ffi_native.build's `library` form: the
    REAL libtvm_ffi.so and DSL runtime helpers, the recording stubs), calling `__tvm_ffi_<export>`."""
    from tests.oracles import tvm_ffi_native
    work.mkdir(parents=True, exist_ok=True)
    (work / "unmodelled.c").write_text(unmodelled_source())
    return tvm_ffi_native.build(ROOT / export["object"], work, libs, library=ROOT / library["path"],
                                export=export["name"], sources=(work / "unmodelled.c",))


def record_tvm_ffi_entry(library: dict, export: dict, libs: dict, argsets: list[dict] | None = None) -> list[dict]:
    """Every argument set run on the library's entry, each in a fresh process: the runs as tvm_ffi_native.run gives them."""
    from tests.oracles import tvm_ffi_native
    with tempfile.TemporaryDirectory(prefix="shared-tvm-ffi-") as work:
        exe = build_tvm_ffi_entry(library, export, Path(work), libs)
        return [tvm_ffi_native.run(exe, argset) for argset in (argsets or tvm_ffi_argument_sets(export))]


def tvm_ffi_trace_path(library: dict) -> Path:
    return ROOT / (library["path"].removesuffix(".so") + ".entry.json")


def committed_tvm_ffi_runs(library: dict) -> dict[str, list[dict]]:
    """export name -> [argument set with its native run under "native"]."""
    return json.loads(tvm_ffi_trace_path(library).read_text())["exports"]


TVM_FFI_COMMAND = "python tests/data/shared/make.py record-tvm-ffi"


def record_tvm_ffi_all() -> None:
    """Write every TVM-FFI library's entry runs (`<name>.entry.json`) and name them in MANIFEST.json."""
    from tests.oracles import tvm_ffi_native
    libs = tvm_ffi_native.libraries()
    if libs is None:
        raise SystemExit("the apache-tvm-ffi wheel and nvidia-cutlass-dsl are needed (or EMU_TEST_TVM_FFI_DIR / EMU_TEST_DSL_LIBDIR)")
    for library in tvm_ffi_libraries():
        exports = {}
        for export in library["exports"]:
            sets = tvm_ffi_argument_sets(export)
            exports[export["name"]] = [{**s, "native": run} for s, run in zip(sets, record_tvm_ffi_entry(library, export, libs, sets))]
        path = tvm_ffi_trace_path(library)
        path.write_text(json.dumps({"library": library["path"], "sha256": library["sha256"], "command": TVM_FFI_COMMAND,
                                    "exports": exports}, indent=1) + "\n")
        library["tvm_ffi_entry_trace"] = {"path": str(path.relative_to(ROOT)), "command": TVM_FFI_COMMAND,
                                          "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    (SHARED / "MANIFEST.json").write_text(json.dumps(MANIFEST, indent=1) + "\n")


def emu_tvm_ffi_run(library: dict, export: dict, argset: dict):
    """emu's run of one argument set on the library's export (tvm_ffi_native.emu_run: the stubs' runtime)."""
    from tests.oracles import tvm_ffi_native
    return tvm_ffi_native.emu_run(ROOT / export["object"], argset, library=ROOT / library["path"],
                                  export=emu_export(library, export).name)


# -- any other library (a third-party wheel's): `python -m tests.oracles.shared_native LIB.so [x86_64|aarch64]` ----
def describe(path: Path, arch: str) -> dict:
    """A library entry like MANIFEST's for a file outside the fixtures: its loader prefixes from its dynamic symbols."""
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(path)], check=True, capture_output=True, text=True).stdout
    prefixes = sorted(name.removesuffix("_cuda_load_to_device") for name in (line.split()[-1] for line in symbols.splitlines())
                      if name.endswith("_cuda_load_to_device") and not name.startswith("_mlir_"))
    return {"path": str(path.resolve()), "arch": arch,
            "exports": [{"name": p.removeprefix("__cute_internal_"), "loader_prefix": p} for p in prefixes]}


def compare_library(path: Path, arch: str) -> list[str]:
    """Record `path` natively under the recording runtime and compare each export with emu: one line per export."""
    from tests.oracles.recorder_lines import first_difference
    undefined = subprocess.run(["nm", "-D", "--undefined-only", str(path)], check=True, capture_output=True, text=True).stdout
    library = describe(path, arch)
    with tempfile.TemporaryDirectory() as work:
        built = build(arch, Path(work), [line.split()[-1].split("@")[0] for line in undefined.splitlines()])
        runs = by_export(record(library, built))
    report = []
    for export in library["exports"]:
        native = comparable(runs.get(export["loader_prefix"], []))
        try:
            difference = first_difference(emu_lines(library, export), native)
        except Exception as error:      # emu refused: say so, as the comparison's answer
            difference = f"emu: {type(error).__name__}: {error}"
        calls = sum("call" in line for line in native)
        report.append(f"{export['loader_prefix']}: {calls} native calls, "
                      + ("emu matches call for call" if difference is None else f"differs: {difference}"))
    return report


if __name__ == "__main__":
    import sys
    print("\n".join(compare_library(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "x86_64")))
