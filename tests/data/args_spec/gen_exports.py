"""Export CuTe DSL kernels with varied launch signatures (test data for args_spec/fatbin).

Run with nvidia-cutlass-dsl 4.8.0, no GPU needed:
  CUDA_VISIBLE_DEVICES='' CUTE_DSL_NO_CACHE=1 CUTE_DSL_ARCH=<arch> python gen_exports.py <arch> <outdir>
Writes <outdir>/<name>_<arch>.o for each variant below.
"""
import sys
from pathlib import Path

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_stream, make_fake_tensor

X86 = "--host-target 'llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64'"


@cute.kernel
def axpy(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, n: cutlass.Int32, alpha: cutlass.Float32):
    tid = cute.arch.thread_idx()[0]
    if tid < n:
        c[tid] = a[tid] * alpha + b[tid]


@cute.jit
def many(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, n: cutlass.Int32,
         alpha: cutlass.Float32, block: cutlass.Constexpr, stream: cuda.CUstream):
    axpy(a, b, c, n, alpha).launch(grid=(1, 1, 1), block=(block, 1, 1), stream=stream)


@cute.jit
def defaults(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, n: cutlass.Int32,
             alpha: cutlass.Float32 = 2.5, *, stream: cuda.CUstream = None):
    axpy(a, b, c, n, alpha).launch(grid=(1, 1, 1), block=(128, 1, 1), stream=stream)


@cute.kernel
def scale(x: cute.Tensor, m: cutlass.Int32):
    tid = cute.arch.thread_idx()[0]
    if tid < m:
        x[tid] = x[tid] * 2.0


@cute.jit
def shaped(x: cute.Tensor, shape: cute.Shape, count: cutlass.Int64, stream: cuda.CUstream):
    scale(x, cutlass.Int32(shape[0])).launch(grid=(1, 1, 1), block=(128, 1, 1), stream=stream)


def main(arch: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    t = make_fake_tensor(cutlass.Float32, (128,), (1,), assumed_align=16)
    opts = f"--gpu-arch {arch} {X86}"
    many_c = cute.compile(many, t, t, t, cutlass.Int32(7), cutlass.Float32(1.0), 128,
                          make_fake_stream(), options=opts)
    many_c.export_to_c(str(out), f"many_{arch}", f"many_{arch}")
    if arch == "sm_90a":
        dflt = cute.compile(defaults, t, t, t, cutlass.Int32(7), cutlass.Float32(2.5),
                            stream=make_fake_stream(), options=opts)
        dflt.export_to_c(str(out), f"defaults_{arch}", f"defaults_{arch}")
        shp = cute.compile(shaped, t, (cutlass.Int32(5),), cutlass.Int64(3), make_fake_stream(),
                           options=opts)
        shp.export_to_c(str(out), f"shaped_{arch}", f"shaped_{arch}")


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
