/* Just enough of cuda_runtime.h for the C compiler to read an export_to_c header (test_header.py). */
#include <stdint.h>
typedef struct CUstream_st *cudaStream_t;
typedef struct CUlib_st *cudaLibrary_t;
typedef struct CUkern_st *cudaKernel_t;
typedef enum { cudaSuccess = 0 } cudaError_t;
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaLibraryUnload(cudaLibrary_t library);
const char *cudaGetErrorName(cudaError_t error);
const char *cudaGetErrorString(cudaError_t error);
