"""Build a scenario's kernel once: exports cached by content, safe under parallel workers.

The key is a digest of everything that decides the export's bytes: the spec, the source of
the kernel's file, the installed nvidia-cutlass-dsl version and, for host `native`, this
machine's CPU. Each build runs in a private staging folder that is renamed into place in one
step, so pytest-xdist workers racing on one key never see a half-written export; the loser
discards its copy.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Callable

from ..errors import BuildError, DslNotInstalled
from .spec import BuildSpec

CACHE_DIR_ENV = "EMU_BUILD_CACHE_DIR"


def dsl_version() -> str | None:
    """The installed nvidia-cutlass-dsl version, or None."""
    try:
        return metadata.version("nvidia-cutlass-dsl")
    except metadata.PackageNotFoundError:
        return None


def cache_dir() -> Path:
    """$EMU_BUILD_CACHE_DIR, else `builds/` in emu's store ($EMU_CACHE_DIR, default ~/.cache/emu)."""
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV])
    store = os.environ.get("EMU_CACHE_DIR")
    if store and store != "off":
        return Path(store) / "builds"
    return Path.home() / ".cache" / "emu" / "builds"


def cpu_identity() -> str:
    """What decides the instructions of a host-native export: the CPU model and its flags."""
    try:
        first_cpu = Path("/proc/cpuinfo").read_text().split("\n\n", 1)[0]
    except OSError:
        return platform.machine() + " " + platform.processor()
    wanted = ("model name", "flags", "Features", "CPU part")
    return platform.machine() + "\n" + "\n".join(line for line in first_cpu.splitlines() if line.split(":")[0].strip() in wanted)


def cache_key(spec: BuildSpec, source: bytes, version: str) -> str:
    material = {"spec": spec.model_dump(mode="json"), "source": hashlib.sha256(source).hexdigest(),
                "nvidia-cutlass-dsl": version}
    if spec.options.host == "native":
        material["cpu"] = cpu_identity()
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def build_object(spec: BuildSpec, base_dir: str, *, where: str | None = None) -> str:
    """The path of the export of `spec` (module relative to `base_dir`), building it if needed.

    `where` names the scenario (file and line) in errors.
    """
    version = dsl_version()
    if version is None:
        raise DslNotInstalled(f"building {spec.label()} needs nvidia-cutlass-dsl, which is not installed "
                              "(pip install 'cute-emu[dsl]', emu's dsl extra, or nvidia-cutlass-dsl itself)", path=where)
    module_path = os.path.normpath(os.path.join(base_dir, spec.module))
    try:
        source = Path(module_path).read_bytes()
    except OSError as error:
        raise BuildError(f"cannot read the kernel module {spec.module} ({error.strerror or error}; looked for {module_path})", path=where) from None
    entry = cache_dir() / cache_key(spec, source, version)
    key = {"spec": spec.model_dump(mode="json"), "module": spec.module, "nvidia-cutlass-dsl": version}
    return str(build_once(entry, f"{spec.export_prefix()}.o", key,
                          lambda staging: _run_worker(spec, module_path, staging, version, where)))


def build_once(entry: Path, product: str, key: dict, build: Callable[[Path], None]) -> Path:
    """`entry/product`, made by `build(staging folder)` only when the entry does not exist yet.

    The build writes into a private staging folder beside the entry, which is renamed into place in
    one step (with `key.json` saying what it was built from); a process that loses the race to another
    discards its copy and uses the winner's. The tests' DSL fixture cache uses it too.
    """
    obj = entry / product
    if obj.is_file():
        return obj
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=entry.parent))
    try:
        build(staging)
        (staging / "key.json").write_text(json.dumps(key, indent=1) + "\n")
        os.chmod(staging, 0o755)          # mkdtemp makes it private
        try:
            os.replace(staging, entry)
        except OSError:
            if not obj.is_file():         # not a lost race: a real failure
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return obj


def _run_worker(spec: BuildSpec, module_path: str, out_dir: Path, version: str, where: str | None) -> None:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", CUTE_DSL_ARCH=spec.options.gpu_arch, CUTE_DSL_NO_CACHE="1")
    request = json.dumps({"spec": spec.model_dump(mode="json"), "module_path": module_path, "out_dir": str(out_dir)})
    result = subprocess.run([sys.executable, "-m", "emu.build.worker"], input=request, env=env,
                            capture_output=True, text=True)
    if result.returncode != 0 or not (out_dir / f"{spec.export_prefix()}.o").is_file():
        raise BuildError(f"nvidia-cutlass-dsl {version} could not export {spec.label()} for "
                         f"{spec.options.gpu_arch}/{spec.options.host}: {_last_error(result.stderr)}", path=where)


def _last_error(stderr: str) -> str:
    """The line that says what went wrong: the exception line at the end of a traceback."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if not line.startswith(("File ", "^", "~")) and ("Error" in line or "error" in line or "Exception" in line):
            return line[:600]
    return (lines[-1][:600] if lines else "the build process failed without a message")
