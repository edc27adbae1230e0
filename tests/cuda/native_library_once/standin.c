/* A recording stand-in for the plain CUDA runtime functions libcuda_dialect_runtime_static.a's
 * cuda_dialect_*_library_once call; the texts are CUDA 13.0's libcudart answers for the codes used. */
#include <stdio.h>

int standin_devices;                /* 0: cudaGetDeviceCount fails with cudaErrorNoDevice, as on a machine without one */
static int unloaded;

int cudaGetDeviceCount(int *count) {
    int status = standin_devices ? 0 : 100;
    *count = standin_devices;
    printf("cudaGetDeviceCount -> %d, count %d\n", status, *count);
    return status;
}

static const char *text(int error, int which) {
    switch (error) {
    case 1: return which ? "invalid argument" : "cudaErrorInvalidValue";
    case 100: return which ? "no CUDA-capable device is detected" : "cudaErrorNoDevice";
    case 209: return which ? "no kernel image is available for execution on the device" : "cudaErrorNoKernelImageForDevice";
    }
    return "unrecognized error code";
}

const char *cudaGetErrorName(int error) {
    printf("cudaGetErrorName(%d)\n", error);
    return text(error, 0);
}

const char *cudaGetErrorString(int error) {
    printf("cudaGetErrorString(%d)\n", error);
    return text(error, 1);
}

int cudaLibraryUnload(void *library) {
    int status = library == (void *)0x1000 && !unloaded ? 0 : 400;
    unloaded |= status == 0;
    printf("cudaLibraryUnload(%#lx) -> %d\n", (unsigned long)library, status);
    return status;
}

void standin_reset(int devices) {
    standin_devices = devices;
    unloaded = 0;
}
