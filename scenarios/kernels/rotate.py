"""The kernel of NVIDIA/cutlass#3715 (../shared/seed/repro.py), as a user's own source file.

`scenarios/user_kernel_matrix.yaml` exports `launch` from this file for several carveouts,
GPU architectures and host targets, and checks what the exported loaders do.
"""
import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
from cutlass.memory import SmemAllocator


@cute.kernel
def rotate(x: cute.Tensor):
    tid = cute.arch.thread_idx()[0]
    shared = SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(128))
    shared[tid] = x[tid]
    cute.arch.sync_threads()
    x[tid] = shared[(tid + 1) % 128]


@cute.jit
def launch(x: cute.Tensor, stream: cuda.CUstream, carveout: cutlass.Constexpr):
    rotate(x).launch(
        grid=(1, 1, 1),
        block=(128, 1, 1),
        stream=stream,
        min_blocks_per_mp=2,
        preferred_smem_carveout=carveout,
    )
