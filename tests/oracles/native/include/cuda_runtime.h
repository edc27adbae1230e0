/* The few CUDA runtime declarations a CuTe DSL export header uses, for native ground-truth harnesses.
   Sizes and values follow the CUDA runtime headers; the functions are defined in stubs.c. */
#pragma once
#include <stdint.h>

typedef int cudaError_t;            /* an enum in CUDA: int-sized on x86-64 and AArch64 */
enum { cudaSuccess = 0 };
typedef struct CUlib_st *cudaLibrary_t;
typedef struct CUstream_st *cudaStream_t;

#ifdef __cplusplus
extern "C" {
#endif
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaLibraryUnload(cudaLibrary_t library);
const char *cudaGetErrorName(cudaError_t error);
const char *cudaGetErrorString(cudaError_t error);
#ifdef __cplusplus
}
#endif
