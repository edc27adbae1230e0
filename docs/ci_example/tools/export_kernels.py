"""The project's own export step: every kernel it ships, exported with export_to_c into OUT."""
import argparse
import sys
from pathlib import Path

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_stream, make_fake_tensor

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from kernels.rotate import launch  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--out", required=True)
parser.add_argument("--carveouts", default="25")
args = parser.parse_args()
out = Path(args.out)
out.mkdir(parents=True, exist_ok=True)
x = make_fake_tensor(cutlass.Float32, (128,), (1,), assumed_align=16)
for carveout in map(int, args.carveouts.split(",")):
    name = f"rotate_{carveout}"
    compiled = cute.compile(launch, x, make_fake_stream(), carveout,
                            options="--gpu-arch sm_90a --host-target 'llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64'")
    compiled.export_to_c(str(out), name, name)
    print(f"exported {name}")
