"""Runs every case of error_cases.yaml natively and writes native_errors.json: each case (as an argument set of
tests/oracles/tvm_ffi_native.py) with its native run, the object linked by that one harness with the REAL
libtvm_ffi.so, cuda_dialect_init_library_once and CuteDSLRT_TVMFFISetRaisedCudaError and the recording CUDA stubs.

From the repository root, with the apache-tvm-ffi wheel and nvidia-cutlass-dsl installed (the dsl extra), or named
by EMU_TEST_TVM_FFI_DIR / EMU_TEST_DSL_LIBDIR as tests/fixtures/tvm_ffi/native/README.md says:
    python tests/data/tvm_ffi/native_errors.py
"""
import json
import sys
from importlib.metadata import version
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from tests.oracles import tvm_ffi_native as native  # noqa: E402


def main() -> None:
    cases = yaml.safe_load((HERE / "error_cases.yaml").read_text())
    if native.libraries() is None:
        raise SystemExit("the apache-tvm-ffi wheel and nvidia-cutlass-dsl are needed (or EMU_TEST_TVM_FFI_DIR / EMU_TEST_DSL_LIBDIR)")
    runs = []
    for obj in sorted({case["object"] for case in cases}):
        runs += native.record(HERE / obj, [case for case in cases if case["object"] == obj])
    runs.sort(key=lambda run: [case["case"] for case in cases].index(run["case"]))
    data = {"command": "python tests/data/tvm_ffi/native_errors.py",
            "linked": {"tvm_ffi": "apache-tvm-ffi " + version("apache-tvm-ffi"),
                       "dsl": "nvidia-cutlass-dsl " + version("nvidia-cutlass-dsl")}, "runs": runs}
    (HERE / "native_errors.json").write_text(json.dumps(data, indent=1) + "\n")
    print(f"{len(runs)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
