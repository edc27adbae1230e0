/* The plain CUDA runtime a static-runtime library's own `_cuda*` wrappers call through the PLT, each answered by
   the recording stub of its wrapper. Included, after the stubs' declarations and an EXPORT
   macro, by recording_cudart.c (the loaders' ground truth: tests/fixtures/realworld/stubs.c) and tvm_ffi_bridge.c
   (the TVM-FFI entries': tests/oracles/native/stubs.c). */
EXPORT int cudaGetDevice(int *device) { return _cudaGetDevice(device); }
EXPORT int cudaDeviceGetAttribute(int *value, int attribute, int device) {
    return _cudaDeviceGetAttribute(value, attribute, device);
}
EXPORT int cudaLibraryGetKernel(void **kernel, void *library, const char *name) {
    return _cudaLibraryGetKernel(kernel, library, name);
}
EXPORT int cudaFuncSetAttribute(void *kernel, int attribute, int value) {
    return _cudaFuncSetAttribute(kernel, attribute, value);
}
EXPORT int cudaKernelSetAttributeForDevice(void *kernel, int attribute, int value, int device) {
    return _cudaKernelSetAttributeForDevice(kernel, attribute, value, device);
}
EXPORT int cudaLibraryLoadData(void **library, const void *code, void *jit_options, void **jit_values, unsigned jit_count,
                               void *library_options, void **library_values, unsigned library_count) {
    return _cudaLibraryLoadData(library, code, jit_options, jit_values, jit_count, library_options, library_values,
                                library_count);
}
EXPORT int cudaLaunchKernelExC(const struct launch_config *config, const void *kernel, void **args) {
    return _cudaLaunchKernelEx(config, kernel, args);
}
