/* A recording CUDA runtime (libcudart) and driver for shared libraries linked with the DSL's static runtime.

   Such a library defines the `_cuda*` wrappers itself (libcuda_dialect_runtime_static.a) and calls the plain
   runtime through the PLT: `_cudaFuncSetAttribute` jumps to `cudaFuncSetAttribute`, `_cudaLaunchKernelEx` to
   `cudaLaunchKernelExC`, and `_cuKernelGetAttribute` fetches the driver's `cuDeviceGet` and
   `cuKernelGetAttribute` once with `cudaGetDriverEntryPointByVersion`. Each plain function here answers and
   prints exactly as the realworld recorder's wrapper of the same name (tests/fixtures/realworld/stubs.c,
   included below with hidden visibility, so that nothing here can stand in for the library's own wrappers).
   The plumbing behind a wrapper is printed as `{"runtime": ...}` lines (a comparison with emu, which answers
   the wrappers themselves, leaves them out). Every other runtime function a static-runtime library imports is
   defined by the harness build (`unmodelled.c`, from MANIFEST.json) and prints `{"call": name, "unmodelled": true}`. */
#include <stdarg.h>      /* stubs.c's headers first: the pragma below must not hide libc's stdout */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#pragma GCC visibility push(hidden)
#define rec_phase rec_phase_hidden
#define rec_return rec_return_hidden
#define cudaGetDeviceCount rec_cudaGetDeviceCount
#define cudaLibraryUnload rec_cudaLibraryUnload
#define cudaGetErrorName rec_cudaGetErrorName
#define cudaGetErrorString rec_cudaGetErrorString
#include "stubs.c"
#undef rec_phase
#undef rec_return
#undef cudaGetDeviceCount
#undef cudaLibraryUnload
#undef cudaGetErrorName
#undef cudaGetErrorString
#pragma GCC visibility pop

#define EXPORT __attribute__((visibility("default")))

/* For a launch harness linked with the library (tests/fixtures/realworld/native_recorder.py's harness_source). */
EXPORT void rec_phase(const char *name) { rec_phase_hidden(name); }
EXPORT void rec_return(long value) { rec_return_hidden(value); }

EXPORT int cudaGetDeviceCount(int *count) { return rec_cudaGetDeviceCount(count); }
EXPORT int cudaLibraryUnload(void *library) { return rec_cudaLibraryUnload(library); }
EXPORT const char *cudaGetErrorName(int error) { return rec_cudaGetErrorName(error); }
EXPORT const char *cudaGetErrorString(int error) { return rec_cudaGetErrorString(error); }
#include "plain_runtime.h"
EXPORT int cudaSetDevice(int device) {
    out("{\"call\": \"cudaSetDevice\", \"device\": %d}\n", device);
    return 0;
}

/* The driver, as cudaGetDriverEntryPointByVersion hands it out: CUdevice n is ordinal n. */
static int driver_device_get(int *device, int ordinal) {
    out("{\"runtime\": \"cuDeviceGet\", \"ordinal\": %d}\n", ordinal);
    *device = ordinal;
    return 0;
}

static const struct { const char *name; void *function; } driver_functions[] = {
    {"cuDeviceGet", (void *)driver_device_get},
    {"cuKernelGetAttribute", (void *)_cuKernelGetAttribute},
};

/* cudaDriverEntryPointQueryResult: 0 success, 1 symbol not found. */
EXPORT int cudaGetDriverEntryPointByVersion(const char *symbol, void **function, unsigned version,
                                            unsigned long long flags, int *status) {
    void *found = 0;
    for (unsigned i = 0; i < sizeof driver_functions / sizeof driver_functions[0]; i++)
        if (strcmp(symbol, driver_functions[i].name) == 0) found = driver_functions[i].function;
    out("{\"runtime\": \"cudaGetDriverEntryPointByVersion\", \"symbol\": ");
    out_string(symbol);
    out(", \"version\": %u, \"flags\": %llu, \"found\": %s}\n", version, flags, found ? "true" : "false");
    *function = found;
    if (status) *status = found ? 0 : 1;
    return 0;
}

/* For unmodelled.c: a runtime function nothing here models. */
int rec_unmodelled(const char *name) {
    out("{\"call\": \"%s\", \"unmodelled\": true}\n", name);
    return 999;     /* cudaErrorUnknown */
}
