"""Export one TVM-FFI object: a vector scale kernel, `export_to_c(OUT, function_name=NAME)`.

Run by make.py with nvidia-cutlass-dsl 4.8.1 and apache-tvm-ffi installed, once per GPU architecture:
    CUTE_DSL_ARCH=sm_90a python tests/data/shared/tvm_export.py OUT.o NAME
The TVM-FFI form refuses --host-target, so the object is for the host that builds it (x86-64 here).
"""
import sys

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute


@cute.kernel
def scale_kernel(x: cute.Tensor, s: cutlass.Float32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * 128 + tidx
    x[i] = x[i] * s


@cute.jit
def vec_scale(x: cute.Tensor, s: cutlass.Float32, stream: cuda.CUstream):
    scale_kernel(x, s).launch(grid=[(x.shape[0] + 127) // 128, 1, 1], block=[128, 1, 1], stream=stream)


def main(out: str, name: str) -> None:
    n = cute.sym_int()
    x = cute.runtime.make_fake_compact_tensor(cutlass.Float32, (n,), assumed_align=16)
    compiled = cute.compile(vec_scale, x, cutlass.Float32(2.0), cuda.CUstream(0), options="--enable-tvm-ffi")
    compiled.export_to_c(out, function_name=name)


if __name__ == "__main__":
    main(*sys.argv[1:])
