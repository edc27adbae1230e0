"""Build the launch-argument test exports (tests/abi/test_launch_args.py), x86-64 and AArch64.

Command (from the repository root, nvidia-cutlass-dsl 4.8.0, no GPU needed):
    CUDA_VISIBLE_DEVICES='' CUTE_DSL_ARCH=sm_90a CUTE_DSL_NO_CACHE=1 python tests/data/export/launch/build.py

- `add`: three tensors whose structs differ (32-bit extents with a 64-bit stride, a 32-bit stride,
  an explicit 64-bit stride), an Int32 scalar the launch divides by, and the stream; the grid is
  ((M // 128) // alpha, N, 1) with M, N the dynamic extents of `a`.
- `opt`: an Optional tensor compiled as None (the header leaves it out), an Int32 with a Python
  default of 3, and a keyword-only stream; the grid is (M // factor, 1, 1).
- `tiled`: a `cute.Shape` of three Int32 (the header passes `int32_t *tile`, one args[] slot per
  element); the grid is (M // tile[0], tile[1], tile[2]).
(`tiled` was added later: built with this script into a scratch folder and only its files copied.)
"""
import sys
from pathlib import Path
from typing import Optional

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream, make_fake_tensor

HOSTS = {"x86_64": "--host-target 'llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64'",
         "aarch64": "--host-target linux-aarch64"}


@cute.kernel
def add_kernel(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
    i = cute.arch.block_idx()[0] * 128 + cute.arch.thread_idx()[0]
    c[i, 0] = a[i, 0] + b[i, 0]


@cute.jit
def add(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, alpha: cutlass.Int32, stream: cuda.CUstream):
    m = cute.size(a, mode=[0])
    n = cute.size(a, mode=[1])
    add_kernel(a, b, c).launch(grid=((m // 128) // alpha, n, 1), block=(128, 1, 1), stream=stream)


@cute.kernel
def scale_kernel(x: cute.Tensor):
    i = cute.arch.block_idx()[0] * 128 + cute.arch.thread_idx()[0]
    x[i] = x[i] * 2.0


@cute.jit
def tiled(x: cute.Tensor, tile: cute.Shape, stream: cuda.CUstream):
    scale_kernel(x).launch(grid=(cute.size(x, mode=[0]) // tile[0], tile[1], tile[2]), block=(128, 1, 1), stream=stream)


@cute.jit
def opt(x: cute.Tensor, bias: Optional[cute.Tensor], factor: cutlass.Int32 = 3, *, stream: cuda.CUstream = None):
    scale_kernel(x).launch(grid=(cute.size(x, mode=[0]) // factor, 1, 1), block=(128, 1, 1), stream=stream)


def main(out: Path) -> None:
    m, n = cute.sym_int32(divisibility=16), cute.sym_int32(divisibility=8)
    a = make_fake_compact_tensor(cutlass.Float32, (m, n), stride_order=(1, 0), assumed_align=16)
    b = make_fake_compact_tensor(cutlass.Float16, (m, 64), stride_order=(0, 1), use_32bit_stride=True)
    c = make_fake_tensor(cutlass.Float32, (m, n), (cute.sym_int64(divisibility=4), 1), assumed_align=32)
    x = make_fake_compact_tensor(cutlass.Float32, (cute.sym_int32(divisibility=4),))
    for host, target in HOSTS.items():
        (out / host).mkdir(parents=True, exist_ok=True)
        options = f"--gpu-arch sm_90a {target}"
        cute.compile(add, a, b, c, cutlass.Int32(1), make_fake_stream(), options=options).export_to_c(
            str(out / host), "add", "add")
        cute.compile(opt, x, None, cutlass.Int32(3), stream=make_fake_stream(), options=options).export_to_c(
            str(out / host), "opt", "opt")
        tile = (cutlass.Int32(4), cutlass.Int32(2), cutlass.Int32(3))
        cute.compile(tiled, x, tile, make_fake_stream(), options=options).export_to_c(str(out / host), "tiled", "tiled")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
