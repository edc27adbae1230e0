// What cudaOccupancyMaxActiveClusters answers on a device, over cluster shapes x blocks per SM: the ground
// truth emu's model of cluster occupancy is fitted to and checked against (emu/probe/README.md, "Cluster grid").
//
// One kernel with no compile-time cluster, little register use and only dynamic shared memory, so that the
// blocks an SM holds are set by the block size and the dynamic shared memory alone.  For each block size and
// dynamic shared memory of the grid below it writes one `occupancy` line (cudaOccupancyMaxActiveBlocksPerMultiprocessor)
// and, for each cluster shape, with attribute 14 (non-portable cluster sizes) 0 and 1, one `cluster` line.
// `./cluster_grid extra` measures the edges instead (lines named by `kernel`): cluster sizes 17-33 along x; a
// register-heavy kernel, whose blocks per SM the registers limit, over block sizes 32-1024; grids that the
// cluster does not divide.
// Build: nvcc -O3 -gencode arch=compute_90a,code=sm_90a -o cluster_grid emu/probe/cluster_grid.cu
// Run:   ./cluster_grid > cluster_grid.jsonl; ./cluster_grid extra > cluster_grid_extra.jsonl   (seconds on an H200)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void grid_kernel(float *out) {
  extern __shared__ float staged[];
  staged[threadIdx.x] = (float)threadIdx.x;
  __syncthreads();
  if (out) out[blockIdx.x * blockDim.x + threadIdx.x] = staged[blockDim.x - 1 - threadIdx.x];
}

// Many live values a thread: the registers, not the threads or shared memory, limit its blocks per SM.
__global__ void heavy_kernel(float *out, int n) {
  float v[48];
#pragma unroll
  for (int i = 0; i < 48; i++) v[i] = out ? out[(threadIdx.x * 48 + i) % 4096] : (float)i;
  for (int r = 0; r < n; r++)
#pragma unroll
    for (int i = 0; i < 48; i++) v[i] = v[i] * v[(i + 7) % 48] + v[(i + 13) % 48];
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < 48; i++) sum += v[i];
  if (out) out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// The two questions, asked one way for every line: the answer's error (cleared) and value (-1 on an error).
template <typename K>
static cudaError_t max_clusters(K kernel, unsigned block, size_t smem, const unsigned grid[3], const unsigned shape[3],
                                int *clusters) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = shape[0]; attr.val.clusterDim.y = shape[1]; attr.val.clusterDim.z = shape[2];
  cudaLaunchConfig_t lc{};
  lc.gridDim = dim3(grid[0], grid[1], grid[2]);
  lc.blockDim = dim3(block, 1, 1);
  lc.dynamicSmemBytes = smem;
  lc.attrs = &attr;
  lc.numAttrs = 1;
  *clusters = -1;
  cudaError_t e = cudaOccupancyMaxActiveClusters(clusters, kernel, &lc);
  if (e != cudaSuccess) { cudaGetLastError(); *clusters = -1; }
  return e;
}

template <typename K>
static cudaError_t blocks_per_sm(K kernel, unsigned block, size_t smem, int *blocks) {
  *blocks = -1;
  cudaError_t r = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, block, smem);
  if (r != cudaSuccess) { cudaGetLastError(); *blocks = -1; }
  return r;
}

template <typename K>
static void cluster_line(K kernel, const char *name, unsigned block, size_t smem, int nonportable, const unsigned grid[3],
                         const unsigned shape[3]) {
  int clusters;
  cudaError_t e = max_clusters(kernel, block, smem, grid, shape, &clusters);
  printf("{\"kind\": \"cluster\", \"kernel\": \"%s\", \"block_size\": %u, \"dynamic_smem\": %zu, \"nonportable\": %d, "
         "\"grid\": [%u, %u, %u], \"cluster\": [%u, %u, %u], \"result\": %d, \"num_clusters\": %d}\n", name, block, smem,
         nonportable, grid[0], grid[1], grid[2], shape[0], shape[1], shape[2], (int)e, clusters);
}

template <typename K>
static int occupancy_line(K kernel, const char *name, unsigned block, size_t smem) {
  int blocks;
  cudaError_t r = blocks_per_sm(kernel, block, smem, &blocks);
  printf("{\"kind\": \"occupancy\", \"kernel\": \"%s\", \"block_size\": %u, \"dynamic_smem\": %zu, \"result\": %d, \"num_blocks\": %d}\n",
         name, block, smem, (int)r, blocks);
  return blocks;
}

static int extra(int per_sm) {
  cudaFuncAttributes fa{};
  cudaFuncGetAttributes(&fa, heavy_kernel);
  printf("{\"kind\": \"kernel\", \"kernel\": \"heavy_kernel\", \"num_regs\": %d, \"static_smem\": %zu, \"max_threads\": %d}\n",
         fa.numRegs, fa.sharedSizeBytes, fa.maxThreadsPerBlock);
  cudaFuncSetAttribute(grid_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaFuncSetAttribute(heavy_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  // cluster sizes past 16, at 1, 2, 4 and 8 blocks per SM
  for (int k : {1, 2, 4, 8}) {
    size_t smem = (size_t)((per_sm / k - 1024) / 128 * 128);
    occupancy_line(grid_kernel, "grid_kernel", 32, smem);
    for (unsigned c = 17; c <= 33; c++) {
      unsigned shape[3] = {c, 1, 1};
      cluster_line(grid_kernel, "grid_kernel", 32, smem, 1, shape, shape);
    }
  }
  // registers as the limit: every block size the kernel takes, cluster sizes 1-16
  for (unsigned block = 32; block <= (unsigned)fa.maxThreadsPerBlock; block += 32) {
    occupancy_line(heavy_kernel, "heavy_kernel", block, 0);
    for (unsigned c : {1u, 2u, 3u, 4u, 6u, 8u, 12u, 16u}) {
      unsigned shape[3] = {c, 1, 1};
      cluster_line(heavy_kernel, "heavy_kernel", block, 0, 1, shape, shape);
    }
  }
  // grids the cluster does not divide, and grids of many clusters
  for (int k : {1, 8}) {
    size_t smem = (size_t)((per_sm / k - 1024) / 128 * 128);
    for (unsigned c : {2u, 4u, 8u}) {
      unsigned shape[3] = {c, 1, 1};
      unsigned grids[][3] = {{c + 1, 1, 1}, {1, 1, 1}, {c * 1000, 1, 1}, {c, 7, 1}};
      for (auto &g : grids) cluster_line(grid_kernel, "grid_kernel", 32, smem, 1, g, shape);
    }
  }
  return 0;
}

static const unsigned SHAPES[][3] = {
  {1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {4, 1, 1}, {5, 1, 1}, {6, 1, 1}, {7, 1, 1}, {8, 1, 1}, {9, 1, 1}, {10, 1, 1},
  {11, 1, 1}, {12, 1, 1}, {13, 1, 1}, {14, 1, 1}, {15, 1, 1}, {16, 1, 1}, {17, 1, 1},
  {1, 2, 1}, {1, 3, 1}, {1, 4, 1}, {1, 8, 1}, {1, 16, 1}, {1, 1, 2}, {1, 1, 4}, {1, 1, 8},
  {2, 2, 1}, {2, 2, 2}, {4, 2, 1}, {2, 4, 1}, {4, 4, 1}, {8, 2, 1}, {2, 8, 1}, {3, 2, 1}, {6, 2, 1}, {5, 3, 1},
  {2, 2, 4}, {3, 3, 1}, {4, 2, 2}};

int main(int argc, char **argv) {
  cudaFuncSetAttribute(grid_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 232448);
  int sms = 0, per_sm = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0);
  if (argc > 1 && !strcmp(argv[1], "extra")) return extra(per_sm);
  cudaFuncAttributes fa{};
  cudaFuncGetAttributes(&fa, grid_kernel);
  printf("{\"kind\": \"kernel\", \"num_regs\": %d, \"static_smem\": %zu, \"sms\": %d, \"smem_per_sm\": %d}\n",
         fa.numRegs, fa.sharedSizeBytes, sms, per_sm);
  // (block size, dynamic shared memory): every block size at 0 bytes, then for block sizes 32, 128, 256 the
  // shared memory that leaves room for k blocks, k = 1..32 (reservation 1 KiB a block, 128-byte units)
  struct Config { unsigned block; size_t smem; };
  Config configs[256];
  int n = 0;
  for (unsigned block : {32u, 64u, 96u, 128u, 192u, 256u, 320u, 384u, 448u, 512u, 640u, 768u, 1024u}) configs[n++] = {block, 0};
  for (unsigned block : {32u, 128u, 256u})
    for (int k = 1; k <= 32; k++) {
      long room = (long)per_sm / k - 1024;
      if (room < (long)(block * sizeof(float))) continue;
      configs[n++] = {block, (size_t)(room / 128 * 128)};
    }
  for (int i = 0; i < n; i++) {
    const Config &c = configs[i];
    int blocks;
    cudaError_t r = blocks_per_sm(grid_kernel, c.block, c.smem, &blocks);
    printf("{\"kind\": \"occupancy\", \"block_size\": %u, \"dynamic_smem\": %zu, \"result\": %d, \"num_blocks\": %d}\n",
           c.block, c.smem, (int)r, blocks);
    for (int nonportable = 0; nonportable <= 1; nonportable++) {
      cudaFuncSetAttribute(grid_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, nonportable);
      for (auto &s : SHAPES) {
        int clusters;
        cudaError_t e = max_clusters(grid_kernel, c.block, c.smem, s, s, &clusters);
        printf("{\"kind\": \"cluster\", \"block_size\": %u, \"dynamic_smem\": %zu, \"nonportable\": %d, \"cluster\": [%u, %u, %u], "
               "\"result\": %d, \"num_clusters\": %d}\n", c.block, c.smem, nonportable, s[0], s[1], s[2], (int)e, clusters);
      }
    }
  }
  return 0;
}
