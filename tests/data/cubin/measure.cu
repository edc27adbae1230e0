// Measures what a real GPU's driver answers for the kernels of cubins, through the same calls the
// CuTe DSL loaders and wrappers make (cudaLibraryLoadData, cudaLibraryGetKernel, cuKernelGetAttribute,
// cudaKernelSetAttributeForDevice, cudaOccupancyMaxActiveBlocksPerMultiprocessor, cudaLaunchKernelEx).
// Prints one JSON object a line (the kinds of the probe's facts, contract 3 of the team brief).
//   nvcc -O0 -o measure measure.cu          (cudart static; the driver is reached through cudaGetDriverEntryPoint)
//   ./measure kernels_sm90a.cubin kernels_sm80.cubin ../../fixtures/.../dsl_sm90a.cubin > measured_h200.jsonl
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <string>

typedef int (*KernelGetAttribute)(int *, int, void *, int);
static KernelGetAttribute get_attribute;

static std::vector<char> read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    std::vector<char> data;
    if (!f) return data;
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    data.resize(n);
    if (fread(data.data(), 1, n, f) != (size_t)n) data.clear();
    fclose(f);
    return data;
}

static void *buffer;

static int launch(cudaKernel_t kernel, unsigned gx, unsigned gy, unsigned gz, unsigned bx, size_t smem,
                  int cluster, int cx, int coop, int policy, int pdl) {
    cudaLaunchConfig_t config = {};
    cudaLaunchAttribute attrs[4];
    int n = 0;
    config.gridDim = dim3(gx, gy, gz); config.blockDim = dim3(bx, 1, 1); config.dynamicSmemBytes = smem;
    if (cluster) { attrs[n].id = cudaLaunchAttributeClusterDimension; attrs[n].val.clusterDim.x = cx;
                   attrs[n].val.clusterDim.y = 1; attrs[n].val.clusterDim.z = 1; n++; }
    if (coop) { attrs[n].id = cudaLaunchAttributeCooperative; attrs[n].val.cooperative = 1; n++; }
    if (policy >= 0) { attrs[n].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
                       attrs[n].val.clusterSchedulingPolicyPreference = (cudaClusterSchedulingPolicy)policy; n++; }
    if (pdl) { attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
               attrs[n].val.programmaticStreamSerializationAllowed = 1; n++; }
    config.attrs = attrs; config.numAttrs = n;
    void *args[] = {&buffer, &buffer};     // every kernel here takes a pointer first; a second int reads the pointer's low bits
    int r = cudaLaunchKernelExC(&config, (const void *)kernel, args);
    cudaGetLastError();
    int s = cudaDeviceSynchronize();
    cudaGetLastError();
    (void)s;
    return r;
}

static void launch_fact(const char *object, const char *name, cudaKernel_t kernel, unsigned gx, unsigned gy,
                        unsigned bx, size_t smem, int cluster, int cx, int coop, int policy, int pdl,
                        int pre8, int pre14) {
    int before8 = 0;
    get_attribute(&before8, 8, (void *)kernel, 0);
    if (pre8 >= 0) cudaKernelSetAttributeForDevice(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, pre8, 0);
    if (pre14 >= 0) cudaKernelSetAttributeForDevice(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, pre14, 0);
    int r = launch(kernel, gx, gy, 1, bx, smem, cluster, cx, coop, policy, pdl);
    printf("{\"kind\":\"launch\",\"object\":\"%s\",\"kernel\":\"%s\",\"via\":\"cudaLaunchKernelEx\",\"config\":{\"grid\":[%u,%u,1],"
           "\"block\":[%u,1,1],\"dynamic_smem\":%zu,\"attrs\":[", object, name, gx, gy, bx, smem);
    const char *sep = "";
    if (cluster) { printf("%s{\"id\":4,\"value\":[%d,1,1]}", sep, cx); sep = ","; }
    if (coop) { printf("%s{\"id\":2,\"value\":1}", sep); sep = ","; }
    if (policy >= 0) { printf("%s{\"id\":5,\"value\":%d}", sep, policy); sep = ","; }
    if (pdl) { printf("%s{\"id\":6,\"value\":1}", sep); }
    printf("]},\"pre\":{");
    sep = "";
    if (pre8 >= 0) { printf("\"8\":%d", pre8); sep = ","; }
    if (pre14 >= 0) printf("%s\"14\":%d", sep, pre14);
    printf("},\"result\":%d}\n", r);
    if (pre8 >= 0) cudaKernelSetAttributeForDevice(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, before8, 0);
    if (pre14 >= 0) cudaKernelSetAttributeForDevice(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 0, 0);
}

int main(int argc, char **argv) {
    cudaDriverEntryPointQueryResult status;
    cudaFree(0);
    cudaGetDriverEntryPoint("cuKernelGetAttribute", (void **)&get_attribute, cudaEnableDefault, &status);
    cudaMalloc(&buffer, 64 << 20);
    cudaMemset(buffer, 0, 64 << 20);
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    for (int a = 1; a < argc; ++a) {
        std::vector<char> image = read_file(argv[a]);
        cudaLibrary_t library;
        int r = cudaLibraryLoadData(&library, image.data(), 0, 0, 0, 0, 0, 0);
        printf("{\"kind\":\"load\",\"object\":\"%s\",\"result\":%d}\n", argv[a], r);
        if (r) { cudaGetLastError(); continue; }
        unsigned count = 0;
        int enumerated = cudaLibraryGetKernelCount(&count, library);
        printf("{\"kind\":\"kernel_count\",\"object\":\"%s\",\"result\":%d,\"count\":%u}\n", argv[a], enumerated, count);
        cudaGetLastError();
        const char *lookup = getenv("MEASURE_KERNEL");
        if (lookup) {   // the loader's path for one kernel name: lookup, attributes, a setter, a launch
            cudaKernel_t kernel = 0;
            int found = cudaLibraryGetKernel(&kernel, library, lookup);
            cudaGetLastError();
            printf("{\"kind\":\"lookup\",\"object\":\"%s\",\"kernel\":\"%s\",\"result\":%d}\n", argv[a], lookup, found);
            for (int attribute = 0; attribute < 18; ++attribute) {
                int value = -12345;
                int res = get_attribute(&value, attribute, (void *)kernel, 0);
                printf("{\"kind\":\"kernel_attribute\",\"object\":\"%s\",\"kernel\":\"%s\",\"device\":0,\"attribute\":%d,\"result\":%d,\"value\":%s}\n",
                       argv[a], lookup, attribute, res, res ? "null" : std::to_string(value).c_str());
            }
            int set = cudaKernelSetAttributeForDevice(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024, 0);
            cudaGetLastError();
            printf("{\"kind\":\"setter\",\"object\":\"%s\",\"kernel\":\"%s\",\"api\":\"cudaKernelSetAttributeForDevice\",\"attribute\":8,\"value\":1024,\"device\":0,\"result\":%d}\n", argv[a], lookup, set);
            if (found) launch_fact(argv[a], lookup, kernel, 1, 1, 128, 0, 0, 0, 0, -1, 0, -1, -1);
        }
        std::vector<cudaKernel_t> kernels(count);
        cudaLibraryEnumerateKernels(kernels.data(), count, library);
        for (unsigned k = 0; k < count; ++k) {
            const char *name = "";
            cudaFuncGetName(&name, (void *)kernels[k]);
            for (int attribute = 0; attribute < 18; ++attribute) {
                int value = -12345;
                int res = get_attribute(&value, attribute, (void *)kernels[k], 0);
                if (res) printf("{\"kind\":\"kernel_attribute\",\"object\":\"%s\",\"kernel\":\"%s\",\"device\":0,\"attribute\":%d,\"result\":%d,\"value\":null}\n", argv[a], name, attribute, res);
                else printf("{\"kind\":\"kernel_attribute\",\"object\":\"%s\",\"kernel\":\"%s\",\"device\":0,\"attribute\":%d,\"result\":0,\"value\":%d}\n", argv[a], name, attribute, value);
            }
            int sizes[] = {32, 64, 96, 128, 256, 384, 512, 640, 768, 896, 1024};
            size_t smems[] = {0, 1024, 4096, 49152, 100000};
            int carveouts[] = {-2, 0, 10, 25, 50, 75, 100, -1};
            int default_dynamic = 0;   // restored after the occupancy queries, so launches meet the loaded kernel
            get_attribute(&default_dynamic, 8, (void *)kernels[k], 0);
            for (int c : carveouts) {
                if (c != -2) cudaKernelSetAttributeForDevice(kernels[k], cudaFuncAttributePreferredSharedMemoryCarveout, c, 0);
                cudaKernelSetAttributeForDevice(kernels[k], cudaFuncAttributeMaxDynamicSharedMemorySize, 100000, 0);
                for (int b : sizes) for (size_t s : smems) {
                    if (c != -2 && (b != 128 && b != 1024)) continue;
                    int blocks = -1;
                    int res = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (void *)kernels[k], b, s);
                    cudaGetLastError();
                    printf("{\"kind\":\"occupancy\",\"object\":\"%s\",\"kernel\":\"%s\",\"block_size\":%d,\"dynamic_smem\":%zu,\"carveout\":%s,\"result\":%d,\"num_blocks\":%d}\n",
                           argv[a], name, b, s, c == -2 ? "null" : std::to_string(c).c_str(), res, blocks);
                }
                cudaKernelSetAttributeForDevice(kernels[k], cudaFuncAttributeMaxDynamicSharedMemorySize, default_dynamic, 0);
            }
            cudaKernelSetAttributeForDevice(kernels[k], cudaFuncAttributePreferredSharedMemoryCarveout, -1, 0);
            // launch verdicts: (grid x, grid y, block, smem, cluster?, cluster x, coop, policy, pdl, pre8, pre14)
            if (!strncmp(name, "kernel_cutlass", 14)) continue;   // DSL kernels need their tensor arguments: not launched
            int bl = 0; get_attribute(&bl, 0, (void *)kernels[k], 0);
            launch_fact(argv[a], name, kernels[k], 1, 1, 128, 0, 0, 0, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 1, 1, 256, 0, 0, 0, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 1, 1, 1024, 0, 0, 0, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 1, 1, bl + 32 <= 1024 ? bl + 32 : 2048, 0, 0, 0, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 1, 1, 2048, 0, 0, 0, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 1, 65536, 32, 0, 0, 0, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 1, 1, 32, 49152, 0, 0, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 1, 1, 32, 49153, 0, 0, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 1, 1, 32, 100000, 0, 0, 0, -1, 0, 100000, -1);
            launch_fact(argv[a], name, kernels[k], 1, 1, 32, 100001, 0, 0, 0, -1, 0, 100000, -1);
            launch_fact(argv[a], name, kernels[k], 1, 1, 32, 0, 1, 2, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 2, 1, 32, 0, 1, 2, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 8, 1, 32, 0, 1, 8, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 16, 1, 32, 0, 1, 16, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 16, 1, 32, 0, 1, 16, 0, -1, 0, -1, 1);
            launch_fact(argv[a], name, kernels[k], 32, 1, 32, 0, 1, 32, 0, -1, 0, -1, 1);
            launch_fact(argv[a], name, kernels[k], 9, 1, 32, 0, 1, 9, 0, -1, 0, -1, 1);
            launch_fact(argv[a], name, kernels[k], 12, 1, 32, 0, 1, 3, 0, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 4, 1, 32, 0, 1, 4, 0, 1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 4, 1, 32, 0, 1, 4, 0, 3, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 4, 1, 32, 0, 0, 0, 0, 3, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 1, 1, 128, 0, 0, 0, 0, -1, 1, -1, -1);
            launch_fact(argv[a], name, kernels[k], 1, 1, 128, 0, 0, 0, 1, -1, 0, -1, -1);
            for (int b : {128, 1024}) {
                int per_sm = 0;
                cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (void *)kernels[k], b, 0);
                unsigned resident = (unsigned)per_sm * sms;
                launch_fact(argv[a], name, kernels[k], resident, 1, b, 0, 0, 0, 1, -1, 0, -1, -1);
                launch_fact(argv[a], name, kernels[k], resident + 1, 1, b, 0, 0, 0, 1, -1, 0, -1, -1);
            }
            launch_fact(argv[a], name, kernels[k], 10000, 1, 1024, 0, 0, 0, 1, -1, 0, -1, -1);
            launch_fact(argv[a], name, kernels[k], 1, 1, 64, 0, 0, 0, 0, -1, 0, -1, -1);
            for (unsigned b : {128u, 2048u}) for (unsigned g : {1u, 0u}) {    // the plain wrapper's dimension checks
                void *args[] = {&buffer, &buffer};
                int r = cudaLaunchKernel((const void *)kernels[k], dim3(g), dim3(b), args, 0, 0);
                cudaGetLastError(); cudaDeviceSynchronize(); cudaGetLastError();
                printf("{\"kind\":\"launch\",\"object\":\"%s\",\"kernel\":\"%s\",\"via\":\"cudaLaunchKernel\",\"config\":{\"grid\":[%u,1,1],\"block\":[%u,1,1],\"dynamic_smem\":0,\"attrs\":[]},\"pre\":{},\"result\":%d}\n",
                       argv[a], name, g, b, r);
            }
            int cluster = 0;
            get_attribute(&cluster, 11, (void *)kernels[k], 0);
            for (unsigned b : {128u, 1024u}) if (cluster > 0) {   // the largest cooperative grid a cluster kernel may launch
                cudaLaunchConfig_t config = {};
                config.gridDim = dim3(cluster, 1, 1); config.blockDim = dim3(b, 1, 1);
                int clusters = -1;
                int rc = cudaOccupancyMaxActiveClusters(&clusters, (void *)kernels[k], &config);
                cudaGetLastError();
                unsigned lo = 0, hi = 20000;
                while (lo < hi) {
                    unsigned mid = (lo + hi + 1) / 2;
                    unsigned grid = mid * cluster;
                    if (launch(kernels[k], grid, 1, 1, b, 0, 0, 0, 1, -1, 0) == 0) lo = mid; else hi = mid - 1;
                }
                printf("{\"kind\":\"cooperative_limit\",\"object\":\"%s\",\"kernel\":\"%s\",\"block_size\":%u,\"cluster\":%d,\"max_active_clusters\":%d,\"max_active_clusters_result\":%d,\"largest_grid\":%u}\n",
                       argv[a], name, b, cluster, clusters, rc, lo * cluster);
            }
        }
    }
    return 0;
}
