// Kernels with known resource usage, compiled to cubins that tests/cuda/test_cubin.py reads:
//   nvcc -cubin -arch=sm_90a -Xptxas -v -o kernels_sm90a.cubin kernels.cu 2> kernels_sm90a.ptxas.txt
//   nvcc -cubin -arch=sm_80 -Xptxas -v -o kernels_sm80.cubin kernels.cu 2> kernels_sm80.ptxas.txt
// (CUDA 13.0 nvcc; ptxas -v prints each kernel's registers, stack frame, shared and constant bytes.)
#include <cstdint>

__constant__ float table[256];

extern "C" __global__ void __launch_bounds__(256) bounded(float *out) {
    out[threadIdx.x] = table[threadIdx.x] * 2.0f;
}

extern "C" __global__ void static_shared(float *out) {
    __shared__ float tile[1024];
    tile[threadIdx.x] = out[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[1023 - threadIdx.x];
}

extern "C" __global__ void local_array(float *out, int n) {
    float scratch[64];                         // indexed at run time: lives in local memory
    for (int i = 0; i < 64; ++i) scratch[(i * n) & 63] = out[i];
    out[threadIdx.x] = scratch[(threadIdx.x * n) & 63];
}

extern "C" __global__ void __maxnreg__(32) register_capped(float *out) {
    out[threadIdx.x] = sqrtf(out[threadIdx.x]);
}

#if __CUDA_ARCH__ >= 900 || !defined(__CUDA_ARCH__)
extern "C" __global__ void __cluster_dims__(2, 1, 1) clustered(float *out) {
    out[blockIdx.x] = 1.0f;
}
#endif

// Many live values: enough registers to lower MAX_THREADS_PER_BLOCK below 1024.
extern "C" __global__ void register_heavy(const float *in, float *out) {
    float acc[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = in[threadIdx.x + i * 1024];
#pragma unroll
    for (int k = 0; k < 8; ++k)
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] = acc[i] * acc[(i + k + 1) % 64] + 1.0f;
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < 64; ++i) sum += acc[i];
    out[threadIdx.x] = sum;
}
