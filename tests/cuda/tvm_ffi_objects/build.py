"""Builds the TVM-FFI exports test_library_once.py runs: vec_scale (x: Tensor([n], float32), s: Float32, stream),
one per GPU architecture, with nvidia-cutlass-dsl 4.8.1 (and apache-tvm-ffi) on an x86-64 host (the TVM-FFI
export refuses --host-target):

    cd tests/cuda/tvm_ffi_objects && CUTE_DSL_ARCH=sm_90a python build.py && CUTE_DSL_ARCH=sm_100a python build.py

writes vec_scale_<arch>.o (about 3 s each; no GPU needed).  The DSL reads CUTE_DSL_ARCH when it is imported:
one architecture per process.  The kernel is tests/data/tvm_ffi/build.py's vec_scale, its kernel named `k`.
"""
import importlib.util
import os
from pathlib import Path

spec = importlib.util.spec_from_file_location("tvm_ffi_data_build",
                                              Path(__file__).resolve().parents[2] / "data" / "tvm_ffi" / "build.py")
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)
arch = os.environ["CUTE_DSL_ARCH"]
build.export_vec_scale(f"vec_scale_{arch}.o", "vec_scale", kernel_name="k")
print(f"vec_scale_{arch}.o")
