/* A recording libcute_dsl_runtime.so, for shared libraries linked with the DSL's official flags
   (`-lcute_dsl_runtime`): the `_cuda*` wrappers are imports, answered and printed by
   tests/fixtures/realworld/stubs.c exactly as for a linked object. Built with soname libcute_dsl_runtime.so
   and found through LD_LIBRARY_PATH before any real one. Adds what 4.8.1 exports import beyond the realworld
   corpus: `_cudaSetDevice`, and the TVM-FFI runtime functions (`cuda_dialect_*_library_once`,
   `CuteDSLRT_TVMFFISetRaisedCudaError`), which no loader calls: each prints `{"call": name, "unmodelled": true}`. */
#include "stubs.c"

int _cudaSetDevice(int device) {
    out("{\"call\": \"cudaSetDevice\", \"device\": %d}\n", device);
    return 0;
}

static int unmodelled(const char *name) {
    out("{\"call\": \"%s\", \"unmodelled\": true}\n", name);
    return -1;
}

int cuda_dialect_init_library_once(void) { return unmodelled("cuda_dialect_init_library_once"); }
int cuda_dialect_unload_library_once(void) { return unmodelled("cuda_dialect_unload_library_once"); }
int CuteDSLRT_TVMFFISetRaisedCudaError(void) { return unmodelled("CuteDSLRT_TVMFFISetRaisedCudaError"); }
