"""Run host_fma_math's launch natively on this CPU and record the launch configurations it makes.

    python tests/data/avx/host_fma/record_native.py      # from the repository root; needs cc and an FMA CPU

The objects beside this script were built by (nvidia-cutlass-dsl 4.8.0, no GPU):
    CUDA_VISIBLE_DEVICES='' CUTE_DSL_ARCH=sm_90a CUTE_DSL_NO_CACHE=1 python tests/data/avx/build_native_kernels.py \\
        . tests/data/avx/host_fma/native --host native --kernel host_fma_math
    (the same with `x86_64` twice: the portable twin, which calls libc's fmaf/fma instead)
A small C harness links the native object with stubs that answer the CUDA calls and print
each cudaLaunchKernelEx's grid and block, then calls the loaders and the launch wrapper for
each argument set below.  The result, `host_fma_math.native.json`, is what
tests/arch/test_avx_export_x86_64.py compares emu's trace of the same object with.
"""
import json
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# (extent of x, a, b, c, d, e): the first is what emu passes when no arguments are given
ARGUMENT_SETS = [(128, 0.0, 0.0, 0.0, 0.0, 0.0), (96, 0.5, 1.5, 2.0, 1.25, 3.0), (1024, -0.75, 3.1, 1e-3, -2.5, 7.0)]

HARNESS = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct { unsigned x, y, z; } dim3_t;
typedef struct { dim3_t grid, block; size_t smem; void *stream; void *attrs; unsigned num_attrs; } config_t;
int _cudaGetDevice(int *d) { *d = 0; return 0; }
int _cudaDeviceGetAttribute(int *v, int a, int d) { *v = a == 97 ? 232448 : 0; return 0; }
int _cudaLibraryLoadData(void **lib, const void *code, void *a, void *b, unsigned c, void *d, void *e, unsigned f) { *lib = (void *)0x11b0000; return 0; }
int _cudaLibraryGetKernel(void **k, void *lib, const char *name) { *k = (void *)0x4b000; return 0; }
int _cuKernelGetAttribute(int *v, int a, void *k, int d) { *v = 0; return 0; }
int _cudaFuncSetAttribute(const void *f, int a, int v) { return 0; }
int _cudaKernelSetAttributeForDevice(void *k, int a, int v, int d) { return 0; }
int _cudaLaunchKernelEx(const config_t *c, const void *f, void **args) {
    printf("{\"grid\": [%u, %u, %u], \"block\": [%u, %u, %u]}\n", c->grid.x, c->grid.y, c->grid.z, c->block.x, c->block.y, c->block.z);
    return 0;
}
int host_fma_math_cuda_init(void **);
int host_fma_math_cuda_load(void **);
void LAUNCH(void **args, int32_t n);
typedef struct { void *data; int32_t dynamic_shapes[1]; } tensor_t;
int main(int argc, char **argv) {
    void *library = 0;
    host_fma_math_cuda_init(&library);
    host_fma_math_cuda_load(&library);
    tensor_t x = {(void *)0xdada0000, {atoi(argv[1])}};
    float a = strtof(argv[2], 0), b = strtof(argv[3], 0), c = strtof(argv[4], 0);
    double d = strtod(argv[5], 0), e = strtod(argv[6], 0);
    void *stream = (void *)0x5757;
    int32_t ret = -1;
    void *args[8] = {&x, &a, &b, &c, &d, &e, &stream, &ret};
    LAUNCH(args, 8);
    return ret;
}
"""


def main() -> None:
    obj, header = HERE / "native" / "host_fma_math.o", (HERE / "native" / "host_fma_math.h").read_text()
    launch = header.split("void _mlir_host_fma_math__mlir_ciface_", 1)[1].split("(", 1)[0]
    runs = []
    with tempfile.TemporaryDirectory() as work:
        source, exe = Path(work) / "h.c", Path(work) / "h"
        source.write_text(f"#define LAUNCH _mlir_host_fma_math__mlir_ciface_{launch}\n" + HARNESS)
        subprocess.run(["cc", "-O0", "-w", "-o", str(exe), str(source), str(obj)], check=True)
        for arguments in ARGUMENT_SETS:
            out = subprocess.run([str(exe), *map(repr, arguments)], check=True, capture_output=True, text=True).stdout
            runs.append({"extent": arguments[0], "scalars": dict(zip("abcde", arguments[1:])),
                         "launches": [json.loads(line) for line in out.splitlines()]})
    (HERE / "host_fma_math.native.json").write_text(json.dumps(
        {"command": "python tests/data/avx/host_fma/record_native.py", "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
