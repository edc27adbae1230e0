"""Link two committed exports into one relocatable object per architecture, as a project linking its
exports together does (`ld -r`): the fixture for a binary that holds several exports.

    python tests/data/multi_export/make.py        # from the repository root; needs ld and aarch64-linux-gnu-ld

Each output, `<arch>/three_exports.o`, holds the 4.8.0 fixtures `two_kernels`, `carveout_25` and
`sm100a_carveout_25`, linked in that order (not their prefixes' order): each has its own `kernels_binary`, the
two sm_90a ones of different sizes and one sm_100a, which an H200 refuses, and two name the same kernel.
`MANIFEST.json` names the inputs and the linker's version.  GNU ld keeps each input's sections in input order, which is what
emu.dsl.exports pairs each export's GPU binary by.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
FIXTURES = ROOT / "tests" / "fixtures" / "cutlass-dsl-4.8.0"
INPUTS = ("two_kernels", "carveout_25", "sm100a_carveout_25")
LINKERS = {"x86_64": "ld", "aarch64": "aarch64-linux-gnu-ld"}


def main() -> None:
    manifest = {}
    for arch, linker in LINKERS.items():
        out = HERE / arch / "three_exports.o"
        out.parent.mkdir(exist_ok=True)
        inputs = [str((FIXTURES / arch / f"{name}.o").relative_to(ROOT)) for name in INPUTS]
        subprocess.run([linker, "-r", "-o", str(out.relative_to(ROOT)), *inputs], cwd=ROOT, check=True)
        version = subprocess.run([linker, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
        manifest[arch] = {"object": str(out.relative_to(ROOT)), "inputs": inputs, "command": f"{linker} -r", "linker": version}
    (HERE / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
