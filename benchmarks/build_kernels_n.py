"""Build the N-kernel exports the benchmark compares (kernels_1.o, kernels_64.o).

Exact commands that produced benchmarks/fixtures/ (nvidia-cutlass-dsl 4.8.0, no GPU):
    CUDA_VISIBLE_DEVICES= CUTE_DSL_ARCH=sm_90a CUTE_DSL_NO_CACHE=1 python benchmarks/build_kernels_n.py 64 benchmarks/fixtures
    CUDA_VISIBLE_DEVICES= CUTE_DSL_ARCH=sm_90a CUTE_DSL_NO_CACHE=1 python benchmarks/build_kernels_n.py 1 benchmarks/fixtures

One launch function launches N specialisations of one kernel (a Constexpr addend),
so the export has N kernels and its loaders N times the per-kernel calls.
"""
import sys
from pathlib import Path
import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_stream, make_fake_tensor

N = int(sys.argv[1])
out = Path(sys.argv[2])

@cute.kernel
def add(x: cute.Tensor, k: cutlass.Constexpr):
    tid = cute.arch.thread_idx()[0]
    x[tid] = x[tid] + k

@cute.jit
def launch(x: cute.Tensor, stream: cuda.CUstream):
    for k in cutlass.range_constexpr(N):
        add(x, k + 1).launch(grid=(1, 1, 1), block=(128, 1, 1), stream=stream)

x = make_fake_tensor(cutlass.Float32, (128,), (1,), assumed_align=16)
compiled = cute.compile(launch, x, make_fake_stream(),
    options="--gpu-arch sm_90a --host-target 'llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64'")
out.mkdir(parents=True, exist_ok=True)
compiled.export_to_c(str(out), f"kernels_{N}", f"kernels_{N}")
print(len(compiled.kernel_info), "kernels")
