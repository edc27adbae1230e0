// Occupancy against the number of named barriers a kernel uses (emu issue 20: occupancy model).
#include <cstdio>
#include <cuda_runtime.h>
#define BAR(i) asm volatile("bar.sync " #i ", 32;")
__global__ void b1(int *p)  { BAR(0); p[threadIdx.x] = 1; }
__global__ void b2(int *p)  { BAR(1); p[threadIdx.x] = 1; }
__global__ void b4(int *p)  { BAR(3); p[threadIdx.x] = 1; }
__global__ void b6(int *p)  { BAR(5); p[threadIdx.x] = 1; }
__global__ void b8(int *p)  { BAR(7); p[threadIdx.x] = 1; }
__global__ void b11(int *p) { BAR(10); p[threadIdx.x] = 1; }
__global__ void b12(int *p) { BAR(11); p[threadIdx.x] = 1; }
__global__ void b16(int *p) { BAR(15); p[threadIdx.x] = 1; }
int main() {
  struct { const char *name; const void *f; } ks[] = {{"b1",(void*)b1},{"b2",(void*)b2},{"b4",(void*)b4},{"b6",(void*)b6},
    {"b8",(void*)b8},{"b11",(void*)b11},{"b12",(void*)b12},{"b16",(void*)b16}};
  int sizes[] = {32, 64, 96, 128, 256};
  for (auto &k : ks) {
    cudaFuncAttributes a; cudaFuncGetAttributes(&a, k.f);
    printf("{\"kernel\":\"%s\",\"regs\":%d,\"max_threads\":%d", k.name, a.numRegs, a.maxThreadsPerBlock);
    for (int s : sizes) { int n = -1; cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k.f, s, 0);
      printf(",\"%d\":[%d,%d]", s, (int)e, n); }
    printf("}\n");
  }
  return 0;
}
