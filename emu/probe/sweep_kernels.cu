// Toy kernels for the probe's launch-configuration sweep, compiled with nvcc for sm_90a and loaded
// with cudaLibraryLoadData like an export's fatbin.  Each one pins down one input of the driver's
// checks: registers (MAX_THREADS_PER_BLOCK, occupancy), launch bounds, static shared memory,
// compile-time cluster dimensions.  Every kernel touches only the first bytes of its buffer.
#include <cuda_runtime.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define CLUSTER(x, y, z)            /* clusters need sm_90; the sm_80 builds are only for loading facts */
#else
#define CLUSTER(x, y, z) __cluster_dims__(x, y, z)
#endif

template <int N>
__device__ void many_registers(float *p) {
  float v[N];
#pragma unroll
  for (int i = 0; i < N; i++) v[i] = p[(threadIdx.x + i * 7) & 255];
#pragma unroll
  for (int r = 0; r < 4; r++) {
#pragma unroll
    for (int i = 0; i < N; i++) v[i] = v[i] * v[(i + 1) % N] + v[(i + 3) % N];
  }
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < N; i++) s += v[i] * (float)(i + 1);
  if (s == 12345.f) p[threadIdx.x & 255] = s;
}

extern "C" __global__ void toy_small(float *p) {
  if (threadIdx.x == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) p[0] += 1.f;
}
extern "C" __global__ void toy_regs_48(float *p) { many_registers<40>(p); }
extern "C" __global__ void toy_regs_96(float *p) { many_registers<88>(p); }
extern "C" __global__ void toy_regs_128(float *p) { many_registers<120>(p); }
extern "C" __global__ void toy_regs_168(float *p) { many_registers<160>(p); }
extern "C" __global__ void toy_regs_max(float *p) { many_registers<250>(p); }
extern "C" __global__ void __launch_bounds__(256) toy_bounds_256(float *p) { if (threadIdx.x == 0) p[1] = 1.f; }
extern "C" __global__ void __launch_bounds__(128, 4) toy_bounds_128_min4(float *p) { many_registers<88>(p); }
extern "C" __global__ void toy_static_smem(float *p) {
  __shared__ float s[10240];   // 40960 bytes
  s[threadIdx.x] = p[threadIdx.x & 255];
  __syncthreads();
  if (s[(threadIdx.x + 1) % blockDim.x] == 12345.f) p[2] = 1.f;
}
extern "C" __global__ void CLUSTER(2, 1, 1) toy_cluster_2(float *p) { if (threadIdx.x == 0) p[3] = 1.f; }
extern "C" __global__ void CLUSTER(4, 2, 1) toy_cluster_4x2(float *p) { if (threadIdx.x == 0) p[4] = 1.f; }
