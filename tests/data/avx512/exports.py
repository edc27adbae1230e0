"""Real exports whose host code is compiled for AVX-512 CPUs, their EVEX census, and their native runs.

From the repository root (the corpus venv of tests/fixtures/realworld/build.py, and its CUTLASS checkout):

1. Export every real-world recipe for each AVX-512 CPU into DIR/<cpu>/ (nothing committed is touched):
       ../venvs/corpus/bin/python tests/data/avx512/exports.py export DIR --cutlass-examples ../cutlass/examples/python/CuTeDSL
2. List the EVEX-encoded (and VEX mask) instructions in every function of them (capstone):
       python tests/data/avx512/exports.py census DIR
3. Copy the exports that use AVX-512 forms into tests/data/avx512/exports/ and write, beside each, the
   native recorder's harness (`*.harness.c`, `run.sh`, `*.exe`, `stubs.o`: not committed); `run.sh`
   links and runs them (needs an AVX-512 CPU and cc); RESULTS is any folder:
       python tests/data/avx512/exports.py prepare DIR
       OUT=RESULTS bash tests/data/avx512/exports/run.sh           # on the AVX-512 machine
       python tests/data/avx512/exports.py collect RESULTS           # back here: <prefix>.calls.json
4. TVM-FFI objects are always built for the CPU that compiles them (the DSL refuses --host-target with
   --enable-tvm-ffi): on an AVX-512 machine, compile some recipes that way into DIR/tvm_ffi/, then list every
   vector instruction in them that emu's AVX unit refuses (a linear sweep of each executable section, each
   VEX/EVEX vector or mask instruction decoded by emu's decoder):
       ../venvs/corpus/bin/python tests/data/avx512/exports.py export-tvm-ffi DIR RECIPE... --cutlass-examples ...
       python tests/data/avx512/exports.py refused DIR/tvm_ffi
The committed objects were built with nvidia-cutlass-dsl 4.8.0 on x86-64 (AMD EPYC, no AVX-512) and
recorded natively on an Intel Xeon with AVX-512 (Sapphire Rapids: avx512_fp16), the project's device machine.
"""
from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
REALWORLD = ROOT / "tests" / "fixtures" / "realworld"
EXPORTS = HERE / "exports"
CPUS = ("sapphirerapids", "skylake-avx512", "znver4")
# the exports committed: each holds the AVX-512 forms LLVM emitted (compares into k, kandw, kmovd,
# vpmovm2d, vpaddd {1to4}; znver4 also zmm moves)
COMMITTED = {"sapphirerapids": ("elementwise_add", "pdl_pair", "quack_gemm_sm90", "quack_gemm_sm100"),
             "skylake-avx512": ("elementwise_add",), "znver4": ("elementwise_add", "quack_gemm_sm90")}
PREFIXES = (0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x66, 0x67, 0xF2, 0xF3)


def host_target(cpu: str) -> str:
    return f"--host-target 'llvm -mtriple=x86_64-unknown-linux-gnu -mcpu={cpu}'"


def export_recipe(name: str, out: Path, examples: Path | None) -> None:
    """In its own process (the DSL reads CUTE_DSL_ARCH once): compile one recipe for every CPU."""
    sys.path[:0] = [str(REALWORLD / "stand_ins"), str(REALWORLD), str(REALWORLD.parent)]
    import cutlass.cute as cute
    from recipe import Context
    from recipes import ALL_RECIPES
    recipe = ALL_RECIPES[name]
    ctx = Context(examples=examples)
    fn, args, kwargs = recipe.build(ctx)
    for cpu in CPUS:
        compiled = cute.compile(fn, *args, **kwargs, options=f"--gpu-arch {recipe.gpu_arch} {host_target(cpu)}")
        folder = out / cpu
        folder.mkdir(parents=True, exist_ok=True)
        compiled.export_to_c(file_path=str(folder), file_name=name, function_prefix=name)
        (folder / f"{name}.args.json").write_text(json.dumps({"args": ctx.args}, indent=1) + "\n")


def export_recipe_tvm_ffi(name: str, out: Path, examples: Path | None) -> None:
    """In its own process: compile one recipe for TVM-FFI (host code for this machine's CPU) into out/tvm_ffi/."""
    sys.path[:0] = [str(REALWORLD / "stand_ins"), str(REALWORLD), str(REALWORLD.parent)]
    import cutlass.cute as cute
    from recipe import Context
    from recipes import ALL_RECIPES
    fn, args, kwargs = ALL_RECIPES[name].build(Context(examples=examples))
    compiled = cute.compile(fn, *args, **kwargs, options="--enable-tvm-ffi")
    (out / "tvm_ffi").mkdir(parents=True, exist_ok=True)
    compiled.export_to_c(str(out / "tvm_ffi" / f"{name}.o"), function_name=name)


def export_all(out: Path, examples: Path | None, names: list[str] | None = None, verb: str = "export-one") -> None:
    sys.path[:0] = [str(REALWORLD), str(REALWORLD.parent)]
    from recipes import ALL_RECIPES
    for name in names or ALL_RECIPES:
        recipe = ALL_RECIPES[name]
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "CUTE_DSL_ARCH": recipe.gpu_arch, "CUTE_DSL_NO_CACHE": "1"}
        command = [sys.executable, __file__, verb, name, str(out)] + (["--cutlass-examples", str(examples)] if examples else [])
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        tail = (result.stdout + result.stderr).strip().splitlines()[-1:] if result.returncode else ""
        print(name, "exported" if result.returncode == 0 else f"FAILED {tail}", flush=True)


def evex_forms(obj: Path) -> collections.Counter:
    """'mnemonic L<bits> [k-mask] [bcst|er/sae] [x16+]' of each EVEX instruction, and 'kxxx VEX' of mask ones."""
    import lief
    from capstone import CS_ARCH_X86, CS_MODE_64, Cs
    cs = Cs(CS_ARCH_X86, CS_MODE_64)
    cs.skipdata = True
    found = collections.Counter()
    binary = lief.parse(str(obj))                                 # kept alive while its sections are read
    for section in binary.sections:
        if not section.flags & 0x4:                               # SHF_EXECINSTR
            continue
        for insn in cs.disasm(bytes(section.content), 0):
            raw = bytes(insn.bytes)
            i = next((n for n, b in enumerate(raw) if b not in PREFIXES), 0)
            if raw[i] != 0x62 or len(raw) < i + 6:
                if insn.id and insn.mnemonic.startswith("k") and raw[i] in (0xC4, 0xC5):
                    found[f"{insn.mnemonic} VEX"] += 1
                continue
            p2, memory = raw[i + 3], raw[i + 5] >> 6 != 3
            tags = [f"L{(128, 256, 512, 0)[p2 >> 5 & 3]}" if not (p2 & 0x10 and not memory) else "L(rc)"]
            if p2 & 7:
                tags.append("{k}{z}" if p2 & 0x80 else "{k}")
            if p2 & 0x10:
                tags.append("bcst" if memory else "er/sae")
            if any(f"mm{n}" in insn.op_str for n in range(16, 32)):
                tags.append("x16+")
            found[" ".join([insn.mnemonic, *tags])] += 1
    return found


def refused_instructions(obj: Path) -> collections.Counter:
    """'instruction: why' for each VEX/EVEX vector or mask instruction of obj's code that emu's AVX unit refuses."""
    import lief
    from capstone import CS_ARCH_X86, CS_MODE_64, Cs
    from emu.arch.x86_64.avx.decoder import Decoder
    from emu.arch.x86_64.avx.errors import UnsupportedInstruction
    from emu.arch.x86_64.avx.scan import is_vector_vex
    cs, decoder, found = Cs(CS_ARCH_X86, CS_MODE_64), Decoder(), collections.Counter()
    cs.skipdata = True
    binary = lief.parse(str(obj))
    for section in binary.sections:
        if not section.flags & 0x4:                               # SHF_EXECINSTR
            continue
        for insn in cs.disasm(bytes(section.content), 0):
            raw = bytes(insn.bytes)
            if not insn.id or not is_vector_vex(raw, insn.mnemonic):
                continue
            try:
                decoder.decode(raw, 0)
            except UnsupportedInstruction as err:
                found[str(err).replace(" at 0x0", "")] += 1
    return found


def refused(folder: Path) -> None:
    sys.path.insert(0, str(ROOT))                                 # this checkout's emu
    total = collections.Counter()
    for obj in sorted(folder.rglob("*.o")):
        found = refused_instructions(obj)
        total.update(found)
        print(f"{obj.relative_to(folder)}: " + ("; ".join(f"{k} x{n}" for k, n in sorted(found.items())) or "none refused"))
    print("all:", "; ".join(f"{k} x{n}" for k, n in sorted(total.items())) or "none refused")


def census(folder: Path) -> None:
    total = collections.Counter()
    for obj in sorted(folder.glob("*/*.o")):
        forms = evex_forms(obj)
        total.update(forms)
        if forms:
            print(f"{obj.parent.name}/{obj.name}: " + ", ".join(f"{k} x{n}" for k, n in sorted(forms.items())))
    print("all:", ", ".join(f"{k} x{n}" for k, n in sorted(total.items())))


def prepare(folder: Path) -> None:
    sys.path[:0] = [str(REALWORLD)]
    import native_recorder as recorder
    lines = ["#!/bin/bash", "# links and runs each export with the recording stubs; results under $OUT/<cpu>/", "set -u",
             'cd "$(dirname "$0")"', "cc -O0 -w -c -o stubs.o ../../../fixtures/realworld/stubs.c"]
    for cpu, names in COMMITTED.items():
        for prefix in names:
            target = EXPORTS / cpu
            target.mkdir(parents=True, exist_ok=True)
            for suffix in (".o", ".h", ".args.json"):
                shutil.copy(folder / cpu / f"{prefix}{suffix}", target)
            obj, header = target / f"{prefix}.o", target / f"{prefix}.h"
            args = json.loads((target / f"{prefix}.args.json").read_text())["args"]
            harness = recorder.harness_source(prefix, header, recorder.wrapper_params(header, prefix), args)
            (target / f"{prefix}.harness.c").write_text(harness)
            imports = recorder.undefined_symbols(obj)
            wraps = [f"-Wl,--wrap={s}" for s in recorder.LIBC_OUTPUT if s in imports]
            wraps += [f"-Wl,--wrap=_mlir_{prefix}_{name}" for name in ("cuda_init", "cuda_load_to_device")]
            lines.append(f"mkdir -p $OUT/{cpu} && cc -O0 -w -I ../../../fixtures/realworld/include -I {cpu} "
                         f"-o {cpu}/{prefix}.exe {cpu}/{prefix}.harness.c stubs.o {cpu}/{prefix}.o {' '.join(wraps)} "
                         f"&& ./{cpu}/{prefix}.exe > $OUT/{cpu}/{prefix}.calls.jsonl; echo \"$? {cpu}/{prefix}\"")
    (EXPORTS / "run.sh").write_text("\n".join(lines) + "\n")


def collect(results: Path) -> None:
    for cpu, names in COMMITTED.items():
        for prefix in names:
            calls = [json.loads(line) for line in (results / cpu / f"{prefix}.calls.jsonl").read_text().splitlines()]
            (EXPORTS / cpu / f"{prefix}.calls.json").write_text(json.dumps(calls, indent=1) + "\n")


def main() -> None:
    verb, *rest = sys.argv[1:]
    examples = Path(rest[rest.index("--cutlass-examples") + 1]).resolve() if "--cutlass-examples" in rest else None
    if verb == "export":
        export_all(Path(rest[0]).resolve(), examples)
    elif verb == "export-one":
        export_recipe(rest[0], Path(rest[1]), examples)
    elif verb == "export-tvm-ffi":
        names = rest[1:rest.index("--cutlass-examples")] if "--cutlass-examples" in rest else rest[1:]
        export_all(Path(rest[0]).resolve(), examples, names, "export-tvm-ffi-one")
    elif verb == "export-tvm-ffi-one":
        export_recipe_tvm_ffi(rest[0], Path(rest[1]), examples)
    elif verb == "refused":
        refused(Path(rest[0]))
    elif verb == "census":
        census(Path(rest[0]))
    elif verb == "prepare":
        prepare(Path(rest[0]))
    elif verb == "collect":
        collect(Path(rest[0]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
