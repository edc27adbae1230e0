"""Builds the small TVM-FFI objects the tvm_ffi tests run (nvidia-cutlass-dsl 4.8.1 with apache-tvm-ffi, no GPU).

From the repository root, with a Python that has nvidia-cutlass-dsl 4.8.1 and apache-tvm-ffi installed:
    cd tests/data/tvm_ffi && CUTE_DSL_ARCH=sm_90a python build.py
vec_scale.o:  one float32 tensor of symbolic extent n0, a float32 scalar, an explicit stream;
pair_add.o:   two float16 (n0, 64) tensors sharing n0, an int32 and a bool scalar, the stream from TVMFFIEnvGetStream.
`export_vec_scale` is also what tests/data/shared/tvm_export.py and tests/cuda/tvm_ffi_objects/build.py export
(each object byte for byte as before: the kernel keeps its name).
"""
import os

os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")

import cuda.bindings.driver as cuda  # noqa: E402  (the DSL reads CUTE_DSL_ARCH when imported)
import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402


def vec_scale_function(kernel_name: str):
    """`vec_scale(x, s, stream)` launching a scale kernel named `kernel_name` (the name is in the object)."""
    def scale_kernel(x: cute.Tensor, s: cutlass.Float32):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        i = bidx * 128 + tidx
        x[i] = x[i] * s
    scale_kernel.__name__ = scale_kernel.__qualname__ = kernel_name
    kernel = cute.kernel(scale_kernel)

    @cute.jit
    def vec_scale(x: cute.Tensor, s: cutlass.Float32, stream: cuda.CUstream):
        kernel(x, s).launch(grid=[(x.shape[0] + 127) // 128, 1, 1], block=[128, 1, 1], stream=stream)
    return vec_scale


def export_vec_scale(out: str, function_name: str, kernel_name: str = "scale_kernel") -> None:
    n = cute.sym_int()
    x = cute.runtime.make_fake_compact_tensor(cutlass.Float32, (n,), assumed_align=16)
    compiled = cute.compile(vec_scale_function(kernel_name), x, cutlass.Float32(2.0), cuda.CUstream(0),
                            options="--enable-tvm-ffi")
    compiled.export_to_c(out, function_name=function_name)


@cute.kernel
def add_kernel(x: cute.Tensor, y: cute.Tensor, k: cutlass.Int32, flag: cutlass.Boolean):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    if flag:
        x[bidx, tidx] = x[bidx, tidx] + y[bidx, tidx] * k.to(cutlass.Float16)


@cute.jit
def pair_add(x: cute.Tensor, y: cute.Tensor, k: cutlass.Int32, flag: cutlass.Boolean):
    add_kernel(x, y, k, flag).launch(grid=[x.shape[0], 1, 1], block=[64, 1, 1])


def main() -> None:
    export_vec_scale("vec_scale.o", "vec_scale")
    m = cute.sym_int()
    x = cute.runtime.make_fake_compact_tensor(cutlass.Float16, (m, 64), assumed_align=16)
    y = cute.runtime.make_fake_compact_tensor(cutlass.Float16, (m, 64), assumed_align=16)
    cute.compile(pair_add, x, y, cutlass.Int32(3), cutlass.Boolean(True),
                 options="--enable-tvm-ffi").export_to_c("pair_add.o", function_name="pair_add")


if __name__ == "__main__":
    main()
