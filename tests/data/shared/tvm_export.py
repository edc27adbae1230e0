"""Export one TVM-FFI object: a vector scale kernel, `export_to_c(OUT, function_name=NAME)`.

Run by make.py with nvidia-cutlass-dsl 4.8.1 and apache-tvm-ffi installed, once per GPU architecture:
    CUTE_DSL_ARCH=sm_90a python tests/data/shared/tvm_export.py OUT.o NAME
The TVM-FFI form refuses --host-target, so the object is for the host that builds it (x86-64 here). The kernel is
tests/data/tvm_ffi/build.py's vec_scale.
"""
import importlib.util
import sys
from pathlib import Path

BUILD = Path(__file__).resolve().parents[1] / "tvm_ffi" / "build.py"

if __name__ == "__main__":
    spec = importlib.util.spec_from_file_location("tvm_ffi_data_build", BUILD)
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    build.export_vec_scale(*sys.argv[1:3])
