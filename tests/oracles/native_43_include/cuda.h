/* The few CUDA driver declarations a nvidia-cutlass-dsl 4.3 export header uses (it includes <cuda.h>,
   later releases <cuda_runtime.h>), for the native ground-truth harness of tests/versions.  Sizes and
   values follow the CUDA driver headers.  The header's Kernel_Metadata_Load (the only user of these
   functions) is never called by the harness, so they are declared and not defined. */
#pragma once
#include <stdint.h>
#include <stdlib.h>
#include "cuda_runtime.h"

typedef int CUresult;
enum { CUDA_SUCCESS = 0 };
typedef int CUdevice;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;
typedef struct CUstream_st *CUstream;
enum { CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97 };
enum { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };

CUresult cuGetErrorString(CUresult error, const char **text);
CUresult cuGetErrorName(CUresult error, const char **text);
CUresult cuCtxGetDevice(CUdevice *device);
CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device);
CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary library);
CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int count, CUlibrary library);
CUresult cuKernelSetAttribute(int attribute, int value, CUkernel kernel, CUdevice device);
CUresult cuLibraryUnload(CUlibrary library);
