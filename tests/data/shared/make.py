"""Build the shared-library fixtures: committed real-world exports linked as a user links them.

Exactly how the committed files were made, from the repository root (x86-64 Linux, cc and
aarch64-linux-gnu-gcc, no GPU):

    # 1. the DSL's runtime for both hosts (nvidia-cutlass-dsl 4.8.1; the aarch64 wheel only for its static archive)
    python -m venv ../venvs/v481 && ../venvs/v481/bin/pip install nvidia-cutlass-dsl==4.8.1 apache-tvm-ffi==0.1.15.post2 torch
    ../venvs/v481/bin/pip download --platform manylinux_2_28_aarch64 --only-binary=:all: --no-deps \
        nvidia-cutlass-dsl-libs-cu12==4.8.1 -d ../aarch64-wheel
    unzip -o ../aarch64-wheel/*.whl 'nvidia_cutlass_dsl/cu12/lib/*' -d ../aarch64-wheel/x
    # 2. the TVM-FFI objects (x86-64 only: the TVM-FFI form refuses --host-target)
    python tests/data/shared/make.py objects --dsl-python ../venvs/v481/bin/python
    # 3. the libraries and MANIFEST.json
    python tests/data/shared/make.py link --dsl-python ../venvs/v481/bin/python \
        --aarch64-libdir ../aarch64-wheel/x/nvidia_cutlass_dsl/cu12/lib
    # 4. the native traces (native/record.py: dlopen under the recording runtime; AArch64 under qemu-aarch64)
    python tests/data/shared/make.py record
    # 5. the TVM-FFI libraries' entries called natively with the `.o` ground truth's argument sets, each set in a
    #    fresh process (the apache-tvm-ffi wheel and nvidia-cutlass-dsl installed in the running Python)
    python tests/data/shared/make.py record-tvm-ffi

Link forms (`FORMS`), the official flags from `python -m cutlass.cute.export.aot_config`:
- `cute_dsl_runtime`: `cc -shared -o L.so *.o -L$LIBDIR -lcute_dsl_runtime` (`aot_config --ldflags --libs`;
  AArch64: `--target aarch64-unknown-linux-gnu`, the wheel's link stub). The `_cuda*` wrappers are imports.
- `static_runtime`: `cc -shared -o L.so *.o $LIBDIR/libcuda_dialect_runtime_static.a`: the wrappers are defined
  inside and call the plain runtime (`cudaFuncSetAttribute`, `cudaGetDriverEntryPointByVersion`, ...) through
  the PLT; nothing names libcudart (a CUDA process has it loaded).
TVM-FFI libraries add `-L$TVM_FFI_LIBDIR -ltvm_ffi -Wl,-rpath,$ORIGIN` (`tvm-ffi-config --ldflags --libs`, RUNPATH
as shipped wheels have it), and `-lcute_dsl_runtime` in the static form too: `CuteDSLRT_TVMFFISetRaisedCudaError`
is not in the 4.8.1 static archive. `cc` rather than `g++`: the objects are C, and no aarch64 g++ is installed;
the link is the same but for g++'s NEEDED libstdc++.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MANIFEST = HERE / "MANIFEST.json"
REALWORLD = "tests/fixtures/realworld"
TOYS = "tests/fixtures/cutlass-dsl-4.8.1"
TVM_OBJECTS = "tests/data/shared/objects/x86_64"
LINKERS = {"x86_64": "cc", "aarch64": "aarch64-linux-gnu-gcc"}
# (object name, CUTE_DSL_ARCH): the TVM-FFI exports, one per GPU architecture as shipped wheels carry them
TVM_EXPORTS = (("vec_scale_sm_90a", "sm_90a"), ("vec_scale_sm_100a", "sm_100a"))


@dataclass(frozen=True)
class Library:
    name: str
    form: str                         # "cute_dsl_runtime" or "static_runtime"
    objects: tuple[str, ...]          # "{arch}" in a path is the host architecture
    abi: str = "cute"                 # "cute" (prefix_cuda_init, ...) or "tvm_ffi" (__cute_internal_<name>_cuda_init, ...)
    arches: tuple[str, ...] = ("x86_64", "aarch64")
    covers: str = ""

    def object_paths(self, arch: str) -> list[str]:
        return [o.format(arch=arch) for o in self.objects]

    def exports(self, arch: str) -> list[dict]:
        out = []
        for path in self.object_paths(arch):
            name = Path(path).stem
            prefix = name if self.abi == "cute" else f"__cute_internal_{name}"
            out.append({"name": name, "abi": self.abi, "loader_prefix": prefix, "object": path})
        return out


def _rw(*names: str) -> tuple[str, ...]:
    return tuple(f"{REALWORLD}/{{arch}}/{n}.o" for n in names)


LIBRARIES = (
    Library("export_add_one.dyn", "cute_dsl_runtime", _rw("export_add_one"),
            covers="CUTLASS export_to_c tutorial, wrappers imported from libcute_dsl_runtime.so"),
    Library("export_add_one.static", "static_runtime", _rw("export_add_one"),
            covers="CUTLASS export_to_c tutorial, wrappers defined inside (static runtime)"),
    Library("quack_gemm.dyn", "cute_dsl_runtime", _rw("quack_gemm_sm90", "quack_gemm_sm100"),
            covers="quack-kernels GEMM exported for sm_90a and sm_100a under two prefixes"),
    Library("fa4_forward.static", "static_runtime", _rw("fa4_forward_sm90", "fa4_forward_sm100"),
            covers="flash-attn-4 forward for sm_90a and sm_100a under two prefixes, static runtime"),
    Library("cutlass_quack.static", "static_runtime", _rw("hopper_gemm", "quack_rmsnorm", "quack_softmax"),
            covers="a CUTLASS example and two quack kernels in one library, static runtime"),
    Library("toys481.dyn", "cute_dsl_runtime",
            tuple(f"{TOYS}/{{arch}}/{n}.o" for n in ("carveout_25", "mixed", "two_kernels_carveout_50")),
            covers="nvidia-cutlass-dsl 4.8.1 toy exports, three in one library"),
    Library("vec_scale.tvm_ffi.dyn", "cute_dsl_runtime", tuple(f"{TVM_OBJECTS}/{n}.o" for n, _ in TVM_EXPORTS),
            abi="tvm_ffi", arches=("x86_64",), covers="TVM-FFI exports for sm_90a and sm_100a, libcute_dsl_runtime.so"),
    Library("vec_scale_sm_90a.tvm_ffi.static", "static_runtime", (f"{TVM_OBJECTS}/vec_scale_sm_90a.o",),
            abi="tvm_ffi", arches=("x86_64",), covers="one TVM-FFI export, static runtime"),
    Library("vec_scale.tvm_ffi.static", "static_runtime", tuple(f"{TVM_OBJECTS}/{n}.o" for n, _ in TVM_EXPORTS),
            abi="tvm_ffi", arches=("x86_64",), covers="TVM-FFI exports for sm_90a and sm_100a, static runtime"),
)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def output(command: list[str]) -> str:
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def library_path(library: Library, arch: str) -> Path:
    return HERE / arch / f"{library.name}.so"


# -- the DSL's runtime, as aot_config and tvm-ffi-config give it -----------------------------------
@dataclass(frozen=True)
class Runtime:
    """Where the link inputs are on this machine, and the names the committed commands use for them."""
    dsl_version: str
    libdir: dict[str, Path]           # arch -> folder of libcute_dsl_runtime.so (for -L)
    static_archive: dict[str, Path]   # arch -> libcuda_dialect_runtime_static.a
    tvm_ffi_libdir: Path

    def flags(self, library: Library, arch: str) -> tuple[list[str], list[str]]:
        """(real flags, flags as committed with $LIBDIR-style names) after the objects."""
        lib, static = f"$LIBDIR_{arch.upper()}", "$STATIC_LIBDIR_" + arch.upper()
        real, shown = [], []
        if library.form == "static_runtime":
            real.append(str(self.static_archive[arch]))
            shown.append(f"{static}/libcuda_dialect_runtime_static.a")
        if library.form == "cute_dsl_runtime" or library.abi == "tvm_ffi":
            real += [f"-L{self.libdir[arch]}", "-lcute_dsl_runtime"]
            shown += [f"-L{lib}", "-lcute_dsl_runtime"]
        if library.abi == "tvm_ffi":
            real += [f"-L{self.tvm_ffi_libdir}", "-ltvm_ffi", "-Wl,-rpath,$ORIGIN"]
            shown += ["-L$TVM_FFI_LIBDIR", "-ltvm_ffi", "'-Wl,-rpath,$ORIGIN'"]
        return real, shown


def find_runtime(dsl_python: str, aarch64_libdir: str) -> Runtime:
    config = [dsl_python, "-m", "cutlass.cute.export.aot_config"]
    x86 = Path(output([*config, "--libdir"]))
    arm_stub = Path(output([*config, "--libdir", "--target", "aarch64-unknown-linux-gnu"]).splitlines()[-1])
    version = output([dsl_python, "-c", "import importlib.metadata as m; print(m.version('nvidia-cutlass-dsl'))"])
    tvm = Path(output([str(Path(dsl_python).parent / "tvm-ffi-config"), "--libdir"]))
    return Runtime(version, {"x86_64": x86, "aarch64": arm_stub},
                   {"x86_64": x86 / "libcuda_dialect_runtime_static.a",
                    "aarch64": Path(aarch64_libdir) / "libcuda_dialect_runtime_static.a"}, tvm)


# -- steps -------------------------------------------------------------------------------------------
def build_objects(dsl_python: str) -> None:
    """The TVM-FFI exports (tvm_export.py), one process per GPU architecture (the DSL reads CUTE_DSL_ARCH once)."""
    out = ROOT / TVM_OBJECTS
    out.mkdir(parents=True, exist_ok=True)
    for name, gpu in TVM_EXPORTS:
        env = {**os.environ, "CUTE_DSL_ARCH": gpu, "CUDA_VISIBLE_DEVICES": "", "CUTE_DSL_NO_CACHE": "1"}
        subprocess.run([dsl_python, str(HERE / "tvm_export.py"), str(out / f"{name}.o"), name], check=True, env=env,
                       capture_output=True)


def dynamic_facts(path: Path) -> dict:
    """NEEDED, RUNPATH, and the dynamic symbols the loaders touch (readelf/nm read both architectures)."""
    dynamic = output(["readelf", "-d", "-W", str(path)])
    needed = [line.split("[", 1)[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]
    runpath = [line.split("[", 1)[1].rstrip("]") for line in dynamic.splitlines() if "(RUNPATH)" in line]
    symbols = [line.split() for line in output(["nm", "-D", str(path)]).splitlines()]
    undefined = sorted(s[-1].split("@")[0] for s in symbols if s[-2] in ("U", "w"))
    defined = sorted(s[-1] for s in symbols if len(s) == 3 and s[1] in "TW")
    return {"needed": needed, "runpath": runpath,
            "wrappers_imported": [s for s in undefined if s.startswith(("_cuda", "_cu"))],
            "wrappers_defined": [s for s in defined if s.startswith(("_cuda", "_cu"))],
            "runtime_imported": [s for s in undefined if s.startswith(("cuda", "cu", "TVMFFI", "CuteDSLRT"))]}


def link(runtime: Runtime) -> None:
    entries = []
    for library in LIBRARIES:
        for arch in library.arches:
            out = library_path(library, arch)
            out.parent.mkdir(parents=True, exist_ok=True)
            objects = library.object_paths(arch)
            real, shown = runtime.flags(library, arch)
            command = [LINKERS[arch], "-shared", "-o", str(out.relative_to(ROOT)), *objects]
            subprocess.run([*command, *real], check=True, cwd=ROOT, capture_output=True, text=True)
            entries.append({"path": str(out.relative_to(ROOT)), "arch": arch, "form": library.form, "abi": library.abi,
                            "covers": library.covers, "command": " ".join(command + shown),
                            "inputs": {o: sha256(ROOT / o) for o in objects},
                            "exports": library.exports(arch), "sha256": sha256(out), "size": out.stat().st_size,
                            **dynamic_facts(out)})
    link_inputs = {f"static archive {arch}": sha256(path) for arch, path in runtime.static_archive.items()}
    link_inputs |= {f"libcute_dsl_runtime.so {arch}": sha256(path / "libcute_dsl_runtime.so")
                    for arch, path in runtime.libdir.items()}
    link_inputs["libtvm_ffi.so x86_64"] = sha256(runtime.tvm_ffi_libdir / "libtvm_ffi.so")
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}
    manifest.update({
        "description": "Shared libraries linked from committed exports; see README.md and make.py's docstring.",
        "dsl_version": runtime.dsl_version,
        "names": {"$LIBDIR_X86_64": "aot_config --libdir", "$STATIC_LIBDIR_X86_64": "aot_config --libdir",
                  "$LIBDIR_AARCH64": "aot_config --libdir --target aarch64-unknown-linux-gnu (link stub)",
                  "$STATIC_LIBDIR_AARCH64": "nvidia_cutlass_dsl/cu12/lib of the manylinux_2_28_aarch64 wheel of "
                                            "nvidia-cutlass-dsl-libs-cu12",
                  "$TVM_FFI_LIBDIR": "tvm-ffi-config --libdir"},
        "link_inputs_sha256": link_inputs,
        "tvm_ffi_objects": [{"path": f"{TVM_OBJECTS}/{n}.o", "gpu_arch": gpu, "function_name": n,
                             "command": f"CUTE_DSL_ARCH={gpu} python tests/data/shared/tvm_export.py "
                                        f"{TVM_OBJECTS}/{n}.o {n}", "sha256": sha256(ROOT / TVM_OBJECTS / f"{n}.o")}
                            for n, gpu in TVM_EXPORTS],
        "libraries": entries})
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("objects", "link", "record", "record-tvm-ffi"))
    parser.add_argument("--dsl-python", default=sys.executable, help="a Python with nvidia-cutlass-dsl 4.8.1")
    parser.add_argument("--aarch64-libdir", help="nvidia_cutlass_dsl/cu12/lib of the aarch64 wheel")
    args = parser.parse_args(argv)
    if args.step == "objects":
        build_objects(args.dsl_python)
    elif args.step == "link":
        if not args.aarch64_libdir:
            parser.error("link needs --aarch64-libdir (the aarch64 wheel's static archive)")
        link(find_runtime(args.dsl_python, args.aarch64_libdir))
    else:
        sys.path.insert(0, str(ROOT))
        from tests.oracles import shared_native
        shared_native.record_all() if args.step == "record" else shared_native.record_tvm_ffi_all()


if __name__ == "__main__":
    main()
