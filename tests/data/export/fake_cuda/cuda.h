/* Just enough of cuda.h (driver API) for a 4.3 export_to_c header (test_header.py). */
#include <stdint.h>
#include <stdlib.h>
typedef struct CUstream_st *CUstream;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;
typedef int CUdevice;
typedef enum { CUDA_SUCCESS = 0 } CUresult;
typedef enum { CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97 } CUdevice_attribute;
typedef enum { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 } CUfunction_attribute;
CUresult cuCtxGetDevice(CUdevice *device);
CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device);
CUresult cuGetErrorName(CUresult error, const char **name);
CUresult cuGetErrorString(CUresult error, const char **text);
CUresult cuKernelSetAttribute(CUfunction_attribute attribute, int value, CUkernel kernel, CUdevice device);
CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int count, CUlibrary library);
CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary library);
CUresult cuLibraryUnload(CUlibrary library);
