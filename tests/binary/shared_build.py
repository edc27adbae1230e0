"""Shared libraries linked in a test from committed real-world exports, as a user links them.

`link` runs the C toolchain (cc for x86-64, aarch64-linux-gnu-gcc for AArch64, both in CI) with the DSL's
flags: `-shared` and the runtime, either `-lcute_dsl_runtime` from the installed nvidia-cutlass-dsl's
library folder (the flags `python -m cutlass.cute.export.aot_config --ldflags --libs` prints; the AArch64
link library is its `stubs/aarch64-unknown-linux-gnu` stand-in) or, on x86-64, the static runtime
`libcuda_dialect_runtime_static.a` (the `_cuda*` wrappers then defined inside the library).
"""
from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REALWORLD = ROOT / "tests" / "fixtures" / "realworld"
COMPILER = {"x86_64": "cc", "aarch64": "aarch64-linux-gnu-gcc"}
# Three exports of different shapes: a 4.4+ elementwise kernel, a cooperative launch, dynamic shared memory.
EXPORTS = ("elementwise_add", "cooperative", "dynamic_smem")


def runtime_folder() -> Path:
    """The installed nvidia-cutlass-dsl's library folder (what `aot_config --libdir` prints)."""
    spec = importlib.util.find_spec("nvidia_cutlass_dsl")
    return Path(list(spec.submodule_search_locations)[0]) / "cu12" / "lib"


def link(out: Path, arch: str, exports: tuple[str, ...] = EXPORTS, runtime: str = "dynamic",
         extra: tuple[str, ...] = ()) -> Path:
    """`out`, a shared library linked from the committed real-world `.o` of each export."""
    objects = [str(REALWORLD / arch / f"{name}.o") for name in exports]
    libdir = runtime_folder()
    if runtime == "static":
        flags = [str(libdir / "libcuda_dialect_runtime_static.a")]
    else:
        folder = libdir if arch == "x86_64" else libdir / "stubs" / "aarch64-unknown-linux-gnu"
        flags = [f"-L{folder}", "-lcute_dsl_runtime"]
    subprocess.run([COMPILER[arch], "-shared", "-o", str(out), *objects, *flags, *extra], check=True,
                   capture_output=True)
    return out
