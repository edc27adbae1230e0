"""`python -m emu probe OBJECT... --out DIR`: build a harness per export (and for the probe's toy
kernels), run them on this machine's GPU, and write one facts file per harness into DIR.

`--build-only` stops after building: DIR then holds the binaries and `run.sh`, which can be copied
to a GPU machine and run there as `DIR/run.sh FACTS_DIR` (it needs only the NVIDIA driver).
"""
from __future__ import annotations

import fnmatch
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from ..errors import EXIT_BAD_INPUT, EXIT_OK, EmuError
from .build import TOY_SOURCE, BuildError, Target, build, toy_fatbins
from .facts import FactsError, read_facts
from .harness import cuda_kernel_names, export_harness, fatbin_harness
from .header import HeaderError, parse_header

TOYS_LABEL = "tests/data/facts/h200/toys"     # where the committed toy fatbins live, as facts name them
TOY_SWEEP = ("sm_90a",)                       # the toy builds that get the launch sweep


class ProbeError(EmuError):
    exit_code = EXIT_BAD_INPUT


def object_label(path: Path) -> str:
    """The object's path as facts name it: relative to the working directory, else from its `tests/`."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        parts = resolved.parts
        for index in range(len(parts) - 1, -1, -1):
            if parts[index] == "tests":
                return "/".join(parts[index:])
        return resolved.name


def facts_name(label: str) -> str:
    """`tests/fixtures/cutlass-dsl-4.8.0/x86_64/plain.o` -> `cutlass-dsl-4.8.0.x86_64.plain`."""
    stem = label.removeprefix("tests/fixtures/").removeprefix("tests/data/facts/h200/").removeprefix("tests/data/")
    stem = stem.removesuffix(".o")
    return stem.replace("/", ".")


def kernel_slot_names(path: Path) -> list[str]:
    """The kernels an export names: its kernel handle slots, in symbol order (`kernels_kernel_<name>`
    since 4.4, `kernel_<name>` data symbols in 4.3)."""
    from ..binary.elf.reader import load_object
    names = [s.name.removeprefix("kernels_") for s in load_object(path).symbols
             if s.name.startswith("kernels_kernel_") or (s.name.startswith("kernel_") and s.defined and s.type != _STT_FUNC)]
    return list(dict.fromkeys(names))


_STT_FUNC = 2


def export_target(path: Path, sweep: bool) -> Target:
    header_path = path.with_suffix(".h")
    if not header_path.exists():
        return _headerless_target(path, header_path, sweep)
    try:
        header = parse_header(header_path)
    except HeaderError as error:
        raise ProbeError(str(error)) from None
    args_path = path.with_name(path.stem + ".args.json")
    args = json.loads(args_path.read_text()).get("args", {}) if args_path.exists() else {}
    label = object_label(path)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    source = export_harness(header, header_path.name, label, sha, kernel_slot_names(path), args, sweep)
    return Target(facts_name(label), label, sha, source, path.resolve(), header_path.parent.resolve())


def _headerless_target(path: Path, header_path: Path, sweep: bool) -> Target:
    """A TVM-FFI object (it has no header): the harness replays the lazy load emu traced (emu/probe/tvm_ffi.py)."""
    from .tvm_ffi import is_tvm_ffi, tvm_ffi_source
    if not path.exists():
        raise ProbeError(f"{path}: no such file")
    if not is_tvm_ffi(path):
        raise ProbeError(f"{path}: no header {header_path.name} next to it, and not a TVM-FFI object; the probe loads a "
                         "CuTe-ABI export through its own header")
    label = object_label(path)
    sha, source = tvm_ffi_source(path, label, sweep)
    return Target(facts_name(label), label, sha, source, None, None)


def toy_targets(folder: Path) -> list[Target]:
    """Harnesses for the toy kernels, built into `folder` (copy them to tests/data/facts/h200/toys/)."""
    names = cuda_kernel_names(TOY_SOURCE.read_text())
    targets = []
    for variant, data in toy_fatbins(folder).items():
        label = f"{TOYS_LABEL}/sweep_kernels.{variant}.fatbin"
        sha = hashlib.sha256(data).hexdigest()
        source = fatbin_harness(data, label, sha, names, sweep=variant in TOY_SWEEP)
        targets.append(Target(facts_name(label), label, sha, source, None, None))
        if variant not in TOY_SWEEP:      # does the driver load eagerly what it refuses lazily at lookup?
            targets.append(Target(facts_name(label) + ".eager", label, sha, "", None, None,
                                  binary=facts_name(label), env="CUDA_MODULE_LOADING=EAGER"))
    return targets


def probe_command(args) -> int:
    out = Path(args.out)
    sweep_patterns = args.sweep or []
    try:
        targets = [export_target(Path(p), any(fnmatch.fnmatch(object_label(Path(p)), g) for g in sweep_patterns))
                   for p in args.objects]
        if not args.no_toys:
            targets += toy_targets((out if args.build_only else Path(tempfile.mkdtemp(prefix="emu-probe-"))) / "toys")
        build_dir = out if args.build_only else Path(tempfile.mkdtemp(prefix="emu-probe-build-"))
        runner, failed = build(targets, build_dir, jobs=args.jobs)
    except (BuildError, OSError) as error:
        raise ProbeError(str(error)) from None
    for name, error in failed.items():
        print(f"emu: probe: left out {name}: {error}", file=sys.stderr)
    targets = [t for t in targets if (t.binary or t.name) not in failed]
    if args.build_only:
        print(f"built {len(targets)} harnesses; run them on a GPU machine with: {runner} FACTS_DIR")
        return EXIT_OK
    subprocess.run(["sh", str(runner), str(out)], check=False)
    bad = []
    for target in targets:
        try:
            read_facts(out / f"{target.name}.jsonl")
        except (FactsError, OSError) as error:
            bad.append(str(error))
    for line in bad:
        print(f"emu: probe: {line}")
    print(f"wrote {len(targets)} facts files to {out} (log: {out / 'probe.log'})")
    return EXIT_OK if not bad else EXIT_BAD_INPUT
