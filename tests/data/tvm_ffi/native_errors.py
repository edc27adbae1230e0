"""Runs every case of error_cases.yaml natively and writes native_errors.json: what the REAL libtvm_ffi.so holds
as raised (kind, message) after each call, the int32 the entry returned, and how many CUDA-side calls it made.

The harness links vec_scale.o and pair_add.o with libtvm_ffi.so (apache-tvm-ffi 0.1.15.post2) and with counting
stubs for the CUDA wrappers and cuda_dialect_* helpers (argument checks come before any of them).  x86-64 only.
From the repository root, with pyyaml installed, naming the installed apache-tvm-ffi package's folder (the
one holding include/ and lib/libtvm_ffi.so: `python -c "import tvm_ffi, os; print(os.path.dirname(tvm_ffi.__file__))"`):
    python tests/data/tvm_ffi/native_errors.py TVM_FFI_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {"float16": (2, 16), "float32": (2, 32), "int32": (0, 32)}      # DLDataTypeCode kDLFloat 2, kDLInt 0
DEVICES = {"cuda": 2, "cpu": 1}                                          # DLDeviceType
DATA_BASE, DATA_STRIDE = 0xD000_0000, 0x100_0000
STUBS = ["_cuKernelGetAttribute", "_cudaDeviceGetAttribute", "_cudaFuncSetAttribute", "_cudaGetDevice",
         "_cudaKernelSetAttributeForDevice", "_cudaLaunchKernelEx", "_cudaLibraryGetKernel", "_cudaLibraryLoadData",
         "_cudaSetDevice", "cuda_dialect_init_library_once", "cuda_dialect_unload_library_once",
         "CuteDSLRT_TVMFFISetRaisedCudaError"]


def c_case(index: int, case: dict) -> str:
    lines, cells, tensors = [], [], 0
    for n, item in enumerate(case["args"]):
        if item is None:
            cells.append("{.type_index = 0}")
            continue
        (kind, value), = item.items()
        if kind == "tensor":
            code, bits = DTYPES[value["dtype"]]
            device, _, device_id = value.get("device", "cuda:0").partition(":")
            shape, strides = value["shape"], value["strides"]
            data = value.get("data", DATA_BASE + tensors * DATA_STRIDE)
            lines.append(f"  static int64_t shape{n}[] = {{{', '.join(map(str, shape))}}};")
            lines.append(f"  static int64_t strides{n}[] = {{{', '.join(map(str, strides))}}};")
            lines.append(f"  static DLTensor t{n}; t{n}.data = (void *){data:#x}ULL; t{n}.device.device_type = "
                         f"{DEVICES[device]}; t{n}.device.device_id = {int(device_id or 0)}; t{n}.ndim = {len(shape)}; "
                         f"t{n}.dtype.code = {code}; t{n}.dtype.bits = {bits}; t{n}.dtype.lanes = 1; t{n}.shape = shape{n}; "
                         f"t{n}.strides = strides{n}; t{n}.byte_offset = {value.get('byte_offset', 0)};")
            cells.append(f"{{.type_index = 7, .v_ptr = &t{n}}}")
            tensors += 1
        elif kind == "int":
            cells.append(f"{{.type_index = 1, .v_int64 = {value}LL}}")
        elif kind == "bool":
            cells.append(f"{{.type_index = 2, .v_int64 = {int(value)}}}")
        elif kind == "float":
            cells.append(f"{{.type_index = 3, .v_float64 = {float(value)!r}}}")
        else:
            cells.append(f"{{.type_index = 4, .v_ptr = (void *){value:#x}ULL}}")
    entry = "__tvm_ffi_" + os.path.splitext(case["object"])[0]
    return "\n".join([f"static void case{index}(void) {{", *lines,
                      f"  TVMFFIAny args[] = {{{', '.join(cells)}}};",
                      f"  run(\"{case['case']}\", {entry}, args, {len(cells)});", "}"])


HARNESS = r"""
#include <stdio.h>
#include <tvm/ffi/c_api.h>
/* c_api.h's cell accessors are C++ only: the error cell follows the object header */
#define TVMFFIErrorGetCellPtr(obj) ((TVMFFIErrorCell *)((char *)(obj) + sizeof(TVMFFIObject)))
static int cuda_calls;
%(stubs)s
int __tvm_ffi_vec_scale(void *, const TVMFFIAny *, int32_t, TVMFFIAny *);
int __tvm_ffi_pair_add(void *, const TVMFFIAny *, int32_t, TVMFFIAny *);
typedef int (*entry_t)(void *, const TVMFFIAny *, int32_t, TVMFFIAny *);
static void text(const TVMFFIByteArray *b) {
  putchar('"');
  for (size_t i = 0; i < b->size; i++) {
    char c = b->data[i];
    if (c == '"' || c == '\\') putchar('\\');
    putchar(c);
  }
  putchar('"');
}
static void run(const char *name, entry_t entry, TVMFFIAny *args, int n) {
  TVMFFIAny result = {.type_index = 0};
  cuda_calls = 0;
  int returned = entry(NULL, args, n, &result);
  printf("{\"case\": \"%%s\", \"returned\": %%d, \"cuda_calls\": %%d, \"raised\": ", name, returned, cuda_calls);
  TVMFFIObjectHandle error = NULL;
  TVMFFIErrorMoveFromRaised(&error);
  if (error == NULL) { printf("null}\n"); return; }
  TVMFFIErrorCell *cell = TVMFFIErrorGetCellPtr(error);
  printf("{\"kind\": "); text(&cell->kind); printf(", \"message\": "); text(&cell->message); printf("}}\n");
  TVMFFIObjectDecRef(error);
}
%(cases)s
int main(void) {
%(calls)s
  return 0;
}
"""


def main(tvm: str) -> None:
    with open(os.path.join(HERE, "error_cases.yaml")) as handle:
        cases = yaml.safe_load(handle)
    source = HARNESS % {"stubs": "\n".join(f"int {s}() {{ cuda_calls++; return 0; }}" for s in STUBS),
                        "cases": "\n".join(c_case(i, c) for i, c in enumerate(cases)),
                        "calls": "\n".join(f"  case{i}();" for i in range(len(cases)))}
    lib = os.path.join(tvm, "lib")
    with tempfile.TemporaryDirectory() as work:
        c_file, program = os.path.join(work, "harness.c"), os.path.join(work, "harness")
        with open(c_file, "w") as handle:
            handle.write(source)
        subprocess.run(["cc", "-o", program, c_file, os.path.join(HERE, "vec_scale.o"), os.path.join(HERE, "pair_add.o"),
                        f"-I{os.path.join(tvm, 'include')}", f"-L{lib}", "-ltvm_ffi", f"-Wl,-rpath,{lib}"], check=True)
        out = subprocess.run([program], check=True, capture_output=True, text=True).stdout
    runs = [json.loads(line) for line in out.splitlines()]
    version = next(line.split("=")[-1].strip().strip("'\"") for line in open(os.path.join(tvm, "_version.py"))
                   if line.startswith("__version__ = "))
    with open(os.path.join(HERE, "native_errors.json"), "w") as handle:
        json.dump({"libtvm_ffi": f"apache-tvm-ffi {version}", "runs": runs}, handle, indent=1)
        handle.write("\n")
    print(f"{len(runs)} cases", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
