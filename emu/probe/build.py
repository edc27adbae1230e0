"""Build the probe's harnesses with nvcc and write the runner script that executes them on a GPU machine.

Building needs nvcc and no GPU, so it can happen on one machine and the run on another: the build
folder is self-contained (binaries, the CUDA runtime library they load, `run.sh`).  Each harness
links the export with the DSL's `libcuda_dialect_runtime_static.a`, as a C++ application would, and
with `--wrap=_cudaLaunchKernelEx` so the wrapper's launches are recorded.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

RUNTIME_HEADER = Path(__file__).with_name("probe_runtime.h")
TOY_SOURCE = Path(__file__).with_name("sweep_kernels.cu")
RUNNER = Path(__file__).with_name("run.sh")
_CUDA_PROTOTYPE = re.compile(r"CUresult CUDAAPI (cu\w+)\s*\(")
_CUDA_VERSIONED = re.compile(r"#define\s+cu\w+\s+(cu\w+_v\d+)\b")


class BuildError(RuntimeError):
    """nvcc, the CUDA toolkit or the DSL's runtime library is missing, or a harness did not compile."""


@dataclass
class Target:
    name: str            # file stem of the harness, the binary and the facts
    label: str           # the object as facts name it (repository-relative path)
    sha256: str
    source: str          # C++ text
    object_path: Path | None   # the export's .o to link, None for a fatbin harness
    include_dir: Path | None   # where the export's header is
    binary: str = ""           # run another target's binary (with `env`) instead of building one
    env: str = ""              # VAR=value for the run, e.g. CUDA_MODULE_LOADING=EAGER


def nvcc_path() -> str:
    found = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if found is None:
        raise BuildError("nvcc not found on PATH (nor /usr/local/cuda/bin/nvcc): the probe builds its harnesses with it")
    return found


def cuda_home(nvcc: str) -> Path:
    """The toolkit folder (include/cuda.h, lib64/): $CUDA_HOME, beside nvcc, or /usr/local/cuda."""
    for home in (os.environ.get("CUDA_HOME"), Path(os.path.realpath(nvcc)).parent.parent, "/usr/local/cuda"):
        if home and (Path(home) / "include" / "cuda.h").exists():
            return Path(home)
    raise BuildError(f"no CUDA toolkit with include/cuda.h found for {nvcc} (set CUDA_HOME)")


def dsl_runtime_library() -> Path:
    try:
        import nvidia_cutlass_dsl
    except ImportError as error:
        raise BuildError("nvidia-cutlass-dsl is not installed: the harnesses link its libcuda_dialect_runtime_static.a") from error
    for base in nvidia_cutlass_dsl.__path__:
        for found in sorted(Path(base).glob("cu*/lib/libcuda_dialect_runtime_static.a")):
            return found
    raise BuildError("nvidia-cutlass-dsl has no cu*/lib/libcuda_dialect_runtime_static.a")


def driver_stub(home: Path, folder: Path) -> Path:
    """A folder with a libcuda.so to link against: the toolkit's stub, or one generated from cuda.h."""
    stubs = home / "lib64" / "stubs"
    if (stubs / "libcuda.so").exists():
        return stubs
    folder.mkdir(parents=True, exist_ok=True)
    header = (home / "include" / "cuda.h").read_text()
    names = sorted(set(_CUDA_PROTOTYPE.findall(header)) | set(_CUDA_VERSIONED.findall(header)))
    source = folder / "libcuda_stub.c"
    source.write_text("".join(f"void {n}(void) {{}}\n" for n in names))
    _run(["cc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", str(folder / "libcuda.so"), str(source)], "the libcuda stub")
    return folder


def build(targets: list[Target], out: Path, jobs: int = 2) -> tuple[Path, dict[str, str]]:
    """Compile every target into `out/bin/`, copy the CUDA runtime next to them, write `out/run.sh`;
    returns the runner and {target name: error} for harnesses that did not build (left out of the run)."""
    nvcc = nvcc_path()
    home = cuda_home(nvcc)
    dsl = dsl_runtime_library()
    bin_dir, src_dir = out / "bin", out / "src"
    for folder in (bin_dir, src_dir):
        folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(RUNTIME_HEADER, src_dir / RUNTIME_HEADER.name)
    stub = driver_stub(home, out / "stub")
    runtime = home / "lib64" / "libcudart.so.13"
    if not runtime.exists():
        candidates = sorted((home / "lib64").glob("libcudart.so.*[0-9]"))
        if not candidates:
            raise BuildError(f"no libcudart.so in {home / 'lib64'}")
        runtime = candidates[0]
    shutil.copy(runtime, bin_dir / runtime.name)

    def one(target: Target) -> str | None:
        """Build one harness (unless the same source and header were built before); the error, if any."""
        source, key_file, binary = src_dir / f"{target.name}.cpp", src_dir / f"{target.name}.key", bin_dir / target.name
        header = target.object_path.with_suffix(".h") if target.object_path is not None else None
        key = hashlib.sha256(target.source.encode() + RUNTIME_HEADER.read_bytes()
                             + (header.read_bytes() if header and header.exists() else b"")).hexdigest()
        if binary.exists() and key_file.exists() and key_file.read_text() == key:
            return None
        source.write_text(target.source)
        command = [nvcc, "-O1", "-std=c++17", f"-I{src_dir}", "-cudart", "shared",
                   "-o", str(bin_dir / target.name), str(source)]
        if target.include_dir is not None:
            command.insert(1, f"-I{target.include_dir}")
        if target.object_path is not None:
            command += [str(target.object_path), str(dsl)]
        command += [f"-L{stub}", "-lcuda", "-Xlinker", "--wrap=_cudaLaunchKernelEx", "-Xlinker", "-rpath,$ORIGIN"]
        try:
            _run(command, f"harness {target.name}")
        except BuildError as error:
            binary.unlink(missing_ok=True)
            return str(error)
        key_file.write_text(key)
        return None

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        errors = dict(zip((t.name for t in targets if not t.binary), pool.map(one, [t for t in targets if not t.binary])))
    failed = {name: error for name, error in errors.items() if error}
    built = [t for t in targets if (t.binary or t.name) not in failed]
    (out / "targets.tsv").write_text("".join(f"{t.name}\t{t.label}\t{t.sha256}\t{t.binary or t.name}\t{t.env or '-'}\n"
                                             for t in built))
    shutil.copy(RUNNER, out / "run.sh")
    (out / "run.sh").chmod(0o755)
    return out / "run.sh", failed


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, errors="replace")
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-12:]
        raise BuildError(f"building {what} failed ({' '.join(command[:3])} ...):\n" + "\n".join(tail))


def toy_fatbins(out: Path) -> dict[str, bytes]:
    """The probe's toy kernels compiled once per target the loading rules need: the H200's own cubin,
    PTX only (JIT), and cubins of other architectures (sm_80, sm_100a) with and without PTX."""
    nvcc = nvcc_path()
    variants = {
        "sm_90a": ["-gencode", "arch=compute_90a,code=sm_90a"],
        "compute_90": ["-gencode", "arch=compute_90,code=compute_90"],
        "sm_80": ["-gencode", "arch=compute_80,code=sm_80"],
        "sm_80_ptx": ["-gencode", "arch=compute_80,code=[sm_80,compute_80]"],
        "sm_100a": ["-gencode", "arch=compute_100a,code=sm_100a"],
    }
    out.mkdir(parents=True, exist_ok=True)
    built = {}
    for name, flags in variants.items():
        target = out / f"sweep_kernels.{name}.fatbin"
        _run([nvcc, "-fatbin", "-O3", *flags, "-o", str(target), str(TOY_SOURCE)], f"toy fatbin {name}")
        built[name] = target.read_bytes()
    return built
