/* Run a shared library's `__tvm_ffi_<name>` entry under tests/fixtures/tvm_ffi/native/harness.c, unchanged.

   harness.c records the TVM-FFI and DSL runtime calls of an object it is linked with through `-Wl,--wrap`,
   which only reaches the objects of its own link. A library's calls go through its PLT instead, and bind to
   the first definition in the process: the executable's. This file, linked into the harness executable
   (tests/oracles/tvm_ffi_native.py, `build(..., library=...)`), defines each such import as a forwarder to
   harness.c's recorder `__wrap_S`, and `__real_S` as the definition after the executable (RTLD_NEXT: the REAL
   libtvm_ffi.so, the REAL libcute_dsl_runtime.so). `cuda_dialect_{init,unload}_library_once` are the REAL
   tvm_ffi_extension.c.o member of libcuda_dialect_runtime_static.a, its two functions renamed `__real_*` (the
   `.o` harness links the same member): a `-lcute_dsl_runtime` library imports them; a static-runtime library
   defines and exports its own copy of that member and calls it through its PLT, so the recorder here interposes
   and the same member, of the installed archive (MANIFEST's link_inputs_sha256 pins the one linked), runs.
   The `_cuda*` wrappers a `-lcute_dsl_runtime` library imports bind to the recording stubs
   (tests/oracles/native/stubs.c) linked into the executable. */
#define _GNU_SOURCE
/* tail calls: the recorder sees the library's own return address, and names its caller from it */
#pragma GCC optimize("O2")
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static void *next(const char *name) {
    void *found = dlsym(RTLD_NEXT, name);
    if (!found) { fprintf(stderr, "tvm_ffi_bridge: no %s after the harness\n", name); exit(4); }
    return found;
}

/* S, a forwarder to the recorder; __real_S (unless the harness links the real one), the next definition. */
#define RECORDED(ret, name, params, args) \
    ret __wrap_##name params; \
    EXPORT ret name params { return __wrap_##name args; }
#define FROM_NEXT(ret, name, params, args) \
    ret __real_##name params { \
        static ret (*real) params; \
        if (!real) real = (ret (*) params)next(#name); \
        return real args; \
    }

typedef void (*set_parts_fn)(const char *, const char **, int32_t);

RECORDED(void *, TVMFFIEnvGetStream, (int32_t device_type, int32_t device_id), (device_type, device_id))
FROM_NEXT(void *, TVMFFIEnvGetStream, (int32_t device_type, int32_t device_id), (device_type, device_id))
RECORDED(void, TVMFFIErrorSetRaisedFromCStr, (const char *kind, const char *message), (kind, message))
FROM_NEXT(void, TVMFFIErrorSetRaisedFromCStr, (const char *kind, const char *message), (kind, message))
RECORDED(void, TVMFFIErrorSetRaisedFromCStrParts, (const char *kind, const char **parts, int32_t count),
         (kind, parts, count))
FROM_NEXT(void, TVMFFIErrorSetRaisedFromCStrParts, (const char *kind, const char **parts, int32_t count),
          (kind, parts, count))
RECORDED(void, CuteDSLRT_TVMFFISetRaisedCudaError, (set_parts_fn set_parts, int error), (set_parts, error))
FROM_NEXT(void, CuteDSLRT_TVMFFISetRaisedCudaError, (set_parts_fn set_parts, int error), (set_parts, error))
RECORDED(int, cuda_dialect_init_library_once, (void **library, void *load, void *load_to_device, void *set_error),
         (library, load, load_to_device, set_error))
RECORDED(void, cuda_dialect_unload_library_once, (void **library), (library))

/* ---- a static-runtime library: its own `_cuda*` wrappers call the plain runtime through the PLT ----
   Each plain function answers through the recording stub of its wrapper (what recording_cudart.c does for the
   loaders' ground truth, here for the stubs harness.c prints with), by a tail call: the stub's caller is then the
   library's wrapper. The runtime functions its inner cuda_dialect_init_library_once calls are harness.c's
   recorders (the `.o` harness wraps the same calls); stubs.c's own header-facing versions are renamed away
   (tvm_ffi_native.build). The driver, as cudaGetDriverEntryPointByVersion hands it out: CUdevice n is ordinal n. */
struct launch_config;
int _cudaGetDevice(int *device);
int _cudaSetDevice(int device);
int _cudaDeviceGetAttribute(int *value, int attr, int device);
int _cudaLibraryLoadData(void **library, const void *code, void *jit_options, void **jit_values, unsigned jit_count,
                         void *library_options, void **library_values, unsigned library_count);
int _cudaLibraryGetKernel(void **kernel, void *library, const char *name);
int _cuKernelGetAttribute(int *value, int attribute, void *kernel, int device);
int _cudaFuncSetAttribute(const void *kernel, int attribute, int value);
int _cudaKernelSetAttributeForDevice(void *kernel, int attribute, int value, int device);
int _cudaLaunchKernelEx(const struct launch_config *config, const void *kernel, void **args);
int __wrap_cudaGetDeviceCount(int *count);
int __wrap_cudaLibraryUnload(void *library);
const char *__wrap_cudaGetErrorName(int error);
const char *__wrap_cudaGetErrorString(int error);

EXPORT int cudaGetDeviceCount(int *count) { return __wrap_cudaGetDeviceCount(count); }
EXPORT int cudaLibraryUnload(void *library) { return __wrap_cudaLibraryUnload(library); }
EXPORT const char *cudaGetErrorName(int error) { return __wrap_cudaGetErrorName(error); }
EXPORT const char *cudaGetErrorString(int error) { return __wrap_cudaGetErrorString(error); }
EXPORT int cudaSetDevice(int device) { return _cudaSetDevice(device); }
#include "plain_runtime.h"

static int driver_device_get(int *device, int ordinal) { *device = ordinal; return 0; }

EXPORT int cudaGetDriverEntryPointByVersion(const char *symbol, void **function, unsigned version,
                                            unsigned long long flags, int *status) {
    (void)version; (void)flags;
    void *found = !strcmp(symbol, "cuDeviceGet") ? (void *)driver_device_get
                : !strcmp(symbol, "cuKernelGetAttribute") ? (void *)_cuKernelGetAttribute : 0;
    *function = found;
    if (status) *status = found ? 0 : 1;
    return 0;
}

/* For shared_native.unmodelled_source: a runtime function nothing here models, printed as a call emu never makes. */
void gt_call_head(const char *symbol, const char *caller);
const char *gt_caller_name(const void *return_address);
int rec_unmodelled(const char *name) {
    gt_call_head(name, gt_caller_name(__builtin_return_address(0)));
    printf(", \"args\": {}, \"outputs\": {}, \"ret\": 999, \"unmodelled\": true}\n");
    return 999;     /* cudaErrorUnknown */
}
