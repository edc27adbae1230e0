"""Builds the TVM-FFI exports test_library_once.py runs: vec_scale (x: Tensor([n], float32), s: Float32, stream),
one per GPU architecture, with nvidia-cutlass-dsl 4.8.1 (and apache-tvm-ffi) on an x86-64 host (the TVM-FFI
export refuses --host-target):

    cd tests/cuda/tvm_ffi_objects && CUTE_DSL_ARCH=sm_90a python build.py && CUTE_DSL_ARCH=sm_100a python build.py

writes vec_scale_<arch>.o (about 3 s each; no GPU needed).  The DSL reads CUTE_DSL_ARCH when it is imported:
one architecture per process.
"""
import os

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute


@cute.kernel
def k(x: cute.Tensor, s: cutlass.Float32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * 128 + tidx
    x[i] = x[i] * s


@cute.jit
def vec_scale(x: cute.Tensor, s: cutlass.Float32, stream: cuda.CUstream):
    k(x, s).launch(grid=[(x.shape[0] + 127) // 128, 1, 1], block=[128, 1, 1], stream=stream)


arch = os.environ["CUTE_DSL_ARCH"]
n = cute.sym_int()
x = cute.runtime.make_fake_compact_tensor(cutlass.Float32, (n,), assumed_align=16)
compiled = cute.compile(vec_scale, x, cutlass.Float32(2.0), cuda.CUstream(0), options="--enable-tvm-ffi")
compiled.export_to_c(f"vec_scale_{arch}.o", function_name="vec_scale")
print(f"vec_scale_{arch}.o")
