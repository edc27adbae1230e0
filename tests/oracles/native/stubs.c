/* Recording CUDA stubs for native ground truth (compiled once per architecture, linked into every
   fixture's generated harness).

   The stubs answer like emu's CUDA runtime model under one RuntimeConfig (stubs.h fixes the devices;
   the harness supplies kernel names, attribute tables and the object's functions), with the
   H200 rules of FIELD_NOTES.md section 5 restated here independently.  Every call prints one
   JSON line: the entry that was running, the wrapper symbol, the caller as function+offset
   inside the object, every argument the callee receives by value (pointers as raw numbers:
   the comparison decides what to do with them), the values written through out-parameters
   and the return code.  Entries print a line when they return.

   cudaError_t values are CUDA's: 1 InvalidValue, 9 InvalidConfiguration, 98 InvalidDeviceFunction,
   101 InvalidDevice, 400 InvalidResourceHandle, 500 SymbolNotFound. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_runtime.h"
#include "stubs.h"

enum { ERR_INVALID_VALUE = 1, ERR_INVALID_CONFIGURATION = 9, ERR_INVALID_DEVICE_FUNCTION = 98,
       ERR_INVALID_DEVICE = 101, ERR_INVALID_RESOURCE_HANDLE = 400, ERR_SYMBOL_NOT_FOUND = 500 };
enum { ATTR_MAX_THREADS_PER_BLOCK_DEVICE = 1, ATTR_OPTIN_SMEM_DEVICE = 97 };
enum { FA_SHARED_SIZE = 1, FA_MAX_DYNAMIC_SHARED = 8, FA_CARVEOUT = 9, FA_CLUSTER_MUST_BE_SET = 10,
       FA_NON_PORTABLE_CLUSTER = 14, FA_SCHEDULING_POLICY = 15 };
#define MAX_LIBRARIES 64

const char *gt_current_entry = "";
int gt_current_device = CURRENT_DEVICE;       /* _cudaSetDevice changes it */
static uint64_t next_handle = 0x10000;          /* emu's fresh handles: 0x10010, 0x10020, ... */

struct kernel { uint64_t handle; int index; int64_t attrs[DEVICE_COUNT ? DEVICE_COUNT : 1][NUM_FUNC_ATTRIBUTES]; };
struct library { uint64_t handle; struct kernel kernels[MAX_KERNELS]; };
static struct library libraries[MAX_LIBRARIES];
static int library_count;

static uint64_t fresh_handle(void) { next_handle += 0x10; return next_handle; }

void gt_register_library(uint64_t handle, int64_t first_kernel) {
    if (library_count == MAX_LIBRARIES || gt_kernel_count > MAX_KERNELS) { fprintf(stderr, "too many libraries or kernels\n"); exit(2); }
    struct library *library = &libraries[library_count++];
    library->handle = handle;
    for (int i = 0; i < gt_kernel_count; i++) {
        struct kernel *kernel = &library->kernels[i];
        kernel->handle = first_kernel >= 0 ? (uint64_t)first_kernel + i : fresh_handle();
        kernel->index = i;
        for (int d = 0; d < DEVICE_COUNT; d++) memcpy(kernel->attrs[d], gt_kernel_defaults[i], sizeof gt_kernel_defaults[i]);
    }
}

/* The latest registration of a handle wins, as in a dict keyed by handle. */
static struct library *find_library(uint64_t handle) {
    for (int l = library_count - 1; l >= 0; l--)
        if (libraries[l].handle == handle) return &libraries[l];
    return NULL;
}

static struct kernel *find_kernel(uint64_t handle) {
    for (int l = library_count - 1; l >= 0; l--)
        for (int i = 0; i < gt_kernel_count; i++)
            if (libraries[l].kernels[i].handle == handle) return &libraries[l].kernels[i];
    return NULL;
}

static int valid_device(int device) { return device >= 0 && device < DEVICE_COUNT; }

static int device_attribute(int attr, int *value) {
    for (int i = 0; i < gt_device_attribute_count; i++)
        if (gt_device_attributes[i][0] == attr) { *value = gt_device_attributes[i][1]; return 1; }
    return 0;
}

static int set_attribute(struct kernel *kernel, int attr, int value, int device) {
    if (attr < 8 || attr >= NUM_FUNC_ATTRIBUTES) return ERR_INVALID_VALUE;   /* 0-7 read-only */
    int64_t *attrs = kernel->attrs[device];
    if (attr == FA_MAX_DYNAMIC_SHARED) {
        int optin = 0;
        device_attribute(ATTR_OPTIN_SMEM_DEVICE, &optin);
        if (value < 0 || value > optin - attrs[FA_SHARED_SIZE]) return ERR_INVALID_VALUE;
    } else if (attr == FA_CARVEOUT && (value < -1 || value > 100)) {
        return ERR_INVALID_VALUE;
    } else if (attr == FA_SCHEDULING_POLICY && (value < 0 || value > 2)) {
        return ERR_INVALID_VALUE;
    } else if (attr >= FA_CLUSTER_MUST_BE_SET && attr <= FA_NON_PORTABLE_CLUSTER && value < 0) {
        return ERR_INVALID_VALUE;
    }
    attrs[attr] = value;
    return 0;
}

/* ---- injected errors (RuntimeConfig.errors), given on the command line as symbol:call:error[:every] ---- */
#define MAX_INJECTIONS 32
static struct injection { char symbol[96]; int call, error, every; } injections[MAX_INJECTIONS];
static int injection_count;
static struct { const char *symbol; int count; } call_counts[32];

void gt_parse_injection(const char *text) {
    struct injection *injection = &injections[injection_count];
    if (injection_count == MAX_INJECTIONS ||
        sscanf(text, "%95[^:]:%d:%d:%d", injection->symbol, &injection->call, &injection->error, &injection->every) != 4) {
        fprintf(stderr, "bad injection %s (want symbol:call:error:every)\n", text);
        exit(2);
    }
    injection_count++;
}

/* Counts every call of `symbol` (the N-th call in the run, from 1) and returns the error to inject, or 0. */
static int injected(const char *symbol) {
    int slot = 0;
    while (call_counts[slot].symbol && strcmp(call_counts[slot].symbol, symbol) != 0) slot++;
    call_counts[slot].symbol = symbol;
    int count = ++call_counts[slot].count;
    for (int i = 0; i < injection_count; i++)
        if (strcmp(injections[i].symbol, symbol) == 0 &&
            (count == injections[i].call || (injections[i].every && count >= injections[i].call)))
            return injections[i].error;
    return 0;
}

/* ---- printing ------------------------------------------------------------------------------ */
void gt_print_string(const char *text) {
    if (!text) { fputs("null", stdout); return; }
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') printf("\\%c", *c);
        else if (*c < 0x20 || *c >= 0x7f) printf("\\u%04x", *c);
        else putchar(*c);
    }
    putchar('"');
}

/* function+offset inside the object, like emu's trace; a return address outside the object is the
   entry's own return site: the object tail-called the stub (emu's "entry (tail call)"). */
const char *gt_caller_name(const void *return_address) {
    static char text[256];
    uintptr_t address = (uintptr_t)return_address;
    for (int i = 0; i < gt_object_function_count; i++) {
        uintptr_t start = (uintptr_t)gt_object_functions[i].address;
        if (start <= address && address <= start + gt_object_functions[i].size) {
            snprintf(text, sizeof text, "%s+%#lx", gt_object_functions[i].name, (unsigned long)(address - start));
            return text;
        }
    }
    return "entry (tail call)";
}

#define CALLER() gt_caller_name(__builtin_return_address(0))
#define U64(x) ((unsigned long long)(uintptr_t)(x))

void gt_call_head(const char *symbol, const char *caller) {
    printf("{\"kind\": \"call\", \"entry\": ");
    gt_print_string(gt_current_entry);
    printf(", \"symbol\": \"%s\", \"caller\": ", symbol);
    gt_print_string(caller);
}

/* ---- the wrappers the objects call ---------------------------------------------------------- */
int _cudaGetDevice(int *device) {
    const char *caller = CALLER();
    int ret = injected("_cudaGetDevice");
    gt_call_head("_cudaGetDevice", caller);
    printf(", \"args\": {}, \"outputs\": {");
    if (!ret && device) { *device = gt_current_device; printf("\"device\": %d", gt_current_device); }
    printf("}, \"ret\": %d}\n", ret);
    return ret;
}

int _cudaSetDevice(int device) {
    const char *caller = CALLER();
    int ret = injected("_cudaSetDevice");
    if (ret) {}
    else if (!valid_device(device)) ret = ERR_INVALID_DEVICE;
    else gt_current_device = device;
    gt_call_head("_cudaSetDevice", caller);
    printf(", \"args\": {\"device\": %d}, \"outputs\": {}, \"ret\": %d}\n", device, ret);
    return ret;
}

int _cudaDeviceGetAttribute(int *value, int attr, int device) {
    const char *caller = CALLER();
    int ret = injected("_cudaDeviceGetAttribute"), answer = 0, written = 0;
    if (ret) {}
    else if (!valid_device(device)) ret = ERR_INVALID_DEVICE;
    else if (!device_attribute(attr, &answer)) ret = ERR_INVALID_VALUE;
    else if (value) { *value = answer; written = 1; }
    gt_call_head("_cudaDeviceGetAttribute", caller);
    printf(", \"args\": {\"attr\": %d, \"device\": %d}, \"outputs\": {", attr, device);
    if (written) printf("\"value\": %d", answer);
    printf("}, \"ret\": %d}\n", ret);
    return ret;
}

int _cudaLibraryLoadData(void **library, const void *code, void *jitOptions, void **jitOptionsValues,
                         unsigned numJitOptions, void *libraryOptions, void **libraryOptionValues,
                         unsigned numLibraryOptions) {
    const char *caller = CALLER();
    int ret = injected("_cudaLibraryLoadData"), written = 0;
    uint64_t handle = 0;
    if (ret) {}
    else if (!code) ret = ERR_INVALID_VALUE;
    else {
        handle = fresh_handle();
        gt_register_library(handle, -1);
        if (library) { *library = (void *)(uintptr_t)handle; written = 1; }
    }
    gt_call_head("_cudaLibraryLoadData", caller);
    printf(", \"args\": {\"code\": %llu, \"jitOptions\": %llu, \"jitOptionsValues\": %llu, \"numJitOptions\": %u, "
           "\"libraryOptions\": %llu, \"libraryOptionValues\": %llu, \"numLibraryOptions\": %u}, \"outputs\": {",
           U64(code), U64(jitOptions), U64(jitOptionsValues), numJitOptions, U64(libraryOptions),
           U64(libraryOptionValues), numLibraryOptions);
    if (written) printf("\"library\": %llu", (unsigned long long)handle);
    printf("}, \"ret\": %d}\n", ret);
    return ret;
}

int _cudaLibraryGetKernel(void **pKernel, void *library, const char *name) {
    const char *caller = CALLER();
    int ret = injected("_cudaLibraryGetKernel"), written = 0;
    uint64_t handle = 0;
    struct library *found = find_library(U64(library));
    if (ret) {}
    else if (!found) ret = ERR_INVALID_RESOURCE_HANDLE;
    else {
        ret = ERR_SYMBOL_NOT_FOUND;
        for (int i = 0; name && i < gt_kernel_count; i++)
            if (strcmp(name, gt_kernel_names[i]) == 0) { handle = found->kernels[i].handle; ret = 0; }
        if (ret == 0 && pKernel) { *pKernel = (void *)(uintptr_t)handle; written = 1; }
    }
    gt_call_head("_cudaLibraryGetKernel", caller);
    printf(", \"args\": {\"library\": %llu, \"name\": ", U64(library));
    gt_print_string(name);
    printf("}, \"outputs\": {");
    if (written) printf("\"pKernel\": %llu", (unsigned long long)handle);
    printf("}, \"ret\": %d}\n", ret);
    return ret;
}

int _cuKernelGetAttribute(int *pi, int attrib, void *kernel, int dev) {
    const char *caller = CALLER();
    int ret = injected("_cuKernelGetAttribute"), written = 0, answer = 0;
    struct kernel *found = find_kernel(U64(kernel));
    if (ret) {}
    else if (!found) ret = ERR_INVALID_RESOURCE_HANDLE;
    else if (!valid_device(dev)) ret = ERR_INVALID_DEVICE;
    else if (attrib < 0 || attrib >= NUM_FUNC_ATTRIBUTES) ret = ERR_INVALID_VALUE;
    else {
        answer = (int)found->attrs[dev][attrib];
        if (pi) { *pi = answer; written = 1; }
    }
    gt_call_head("_cuKernelGetAttribute", caller);
    printf(", \"args\": {\"attrib\": %d, \"kernel\": %llu, \"dev\": %d}, \"outputs\": {", attrib, U64(kernel), dev);
    if (written) printf("\"pi\": %d", answer);
    printf("}, \"ret\": %d}\n", ret);
    return ret;
}

int _cudaFuncSetAttribute(const void *func, int attr, int value) {
    const char *caller = CALLER();
    int ret = injected("_cudaFuncSetAttribute");
    struct kernel *found = find_kernel(U64(func));
    if (ret) {}
    else if (!found) ret = ERR_INVALID_DEVICE_FUNCTION;
    else if (!valid_device(gt_current_device)) ret = ERR_INVALID_DEVICE;
    else ret = set_attribute(found, attr, value, gt_current_device);
    gt_call_head("_cudaFuncSetAttribute", caller);
    printf(", \"args\": {\"func\": %llu, \"attr\": %d, \"value\": %d}, \"outputs\": {}, \"ret\": %d}\n",
           U64(func), attr, value, ret);
    return ret;
}

int _cudaKernelSetAttributeForDevice(void *kernel, int attr, int value, int device) {
    const char *caller = CALLER();
    int ret = injected("_cudaKernelSetAttributeForDevice");
    struct kernel *found = find_kernel(U64(kernel));
    if (ret) {}
    else if (!valid_device(device)) ret = ERR_INVALID_DEVICE;
    else if (!found) ret = ERR_INVALID_RESOURCE_HANDLE;
    else ret = set_attribute(found, attr, value, device);
    gt_call_head("_cudaKernelSetAttributeForDevice", caller);
    printf(", \"args\": {\"kernel\": %llu, \"attr\": %d, \"value\": %d, \"device\": %d}, \"outputs\": {}, \"ret\": %d}\n",
           U64(kernel), attr, value, device, ret);
    return ret;
}

/* cudaLaunchConfig_t and cudaLaunchAttribute as the CUDA runtime headers lay them out (56 and 72 bytes). */
struct launch_attribute { uint32_t id; uint32_t pad; unsigned char value[64]; };
struct launch_config {
    uint32_t grid[3], block[3];
    uint64_t dynamicSmemBytes;
    void *stream;
    struct launch_attribute *attrs;
    uint32_t numAttrs;
};
_Static_assert(sizeof(struct launch_config) == 56, "cudaLaunchConfig_t is 56 bytes");
_Static_assert(sizeof(struct launch_attribute) == 72, "cudaLaunchAttribute is 72 bytes");

#define FIELD(type, offset) (*(const type *)(value + (offset)))

/* Only the fields each attribute uses: the rest of the 64-byte union is uninitialised stack. */
static void print_launch_attribute_value(uint32_t id, const unsigned char *value) {
    switch (id) {
    case 1: printf("{\"base_ptr\": %llu, \"num_bytes\": %llu, \"hitRatio\": %.9g, \"hitProp\": %d, \"missProp\": %d}",
                   (unsigned long long)FIELD(uint64_t, 0), (unsigned long long)FIELD(uint64_t, 8), FIELD(float, 16),
                   FIELD(int32_t, 20), FIELD(int32_t, 24)); break;
    case 2: printf("{\"cooperative\": %d}", FIELD(int32_t, 0)); break;
    case 3: printf("{\"syncPolicy\": %d}", FIELD(int32_t, 0)); break;
    case 4: case 11: printf("{\"x\": %u, \"y\": %u, \"z\": %u}", FIELD(uint32_t, 0), FIELD(uint32_t, 4), FIELD(uint32_t, 8)); break;
    case 5: printf("{\"clusterSchedulingPolicyPreference\": %d}", FIELD(int32_t, 0)); break;
    case 6: printf("{\"programmaticStreamSerializationAllowed\": %d}", FIELD(int32_t, 0)); break;
    case 7: printf("{\"event\": %llu, \"flags\": %u, \"triggerAtBlockStart\": %d}",
                   (unsigned long long)FIELD(uint64_t, 0), FIELD(uint32_t, 8), FIELD(int32_t, 12)); break;
    case 8: printf("{\"priority\": %d}", FIELD(int32_t, 0)); break;
    case 9: printf("{\"default_\": %u, \"remote\": %u}", FIELD(uint8_t, 0), FIELD(uint8_t, 1)); break;
    case 10: printf("{\"memSyncDomain\": %d}", FIELD(int32_t, 0)); break;
    case 12: printf("{\"event\": %llu, \"flags\": %u}", (unsigned long long)FIELD(uint64_t, 0), FIELD(uint32_t, 8)); break;
    case 13: printf("{\"deviceUpdatable\": %d, \"devNode\": %llu}", FIELD(int32_t, 0), (unsigned long long)FIELD(uint64_t, 8)); break;
    case 14: printf("{\"sharedMemCarveout\": %u}", FIELD(uint32_t, 0)); break;
    default: printf("{}");
    }
}

int _cudaLaunchKernelEx(const struct launch_config *config, const void *func, void **args) {
    const char *caller = CALLER();
    int ret = injected("_cudaLaunchKernelEx"), max_threads = 1;
    struct kernel *found = find_kernel(U64(func));
    device_attribute(ATTR_MAX_THREADS_PER_BLOCK_DEVICE, &max_threads);
    if (ret) {}
    else if (!found) ret = ERR_INVALID_DEVICE_FUNCTION;
    else if (!config) ret = ERR_INVALID_VALUE;
    else {
        const uint32_t *g = config->grid, *b = config->block;
        if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2] || (uint64_t)b[0] * b[1] * b[2] > (uint64_t)max_threads)
            ret = ERR_INVALID_CONFIGURATION;
        else if ((int64_t)config->dynamicSmemBytes > found->attrs[gt_current_device][FA_MAX_DYNAMIC_SHARED])
            ret = ERR_INVALID_VALUE;
    }
    gt_call_head("_cudaLaunchKernelEx", caller);
    printf(", \"args\": {\"config\": ");
    if (!config) printf("0");
    else {
        printf("{\"gridDim\": [%u, %u, %u], \"blockDim\": [%u, %u, %u], \"dynamicSmemBytes\": %llu, \"stream\": %llu, "
               "\"numAttrs\": %u, \"attrs\": [", config->grid[0], config->grid[1], config->grid[2], config->block[0],
               config->block[1], config->block[2], (unsigned long long)config->dynamicSmemBytes, U64(config->stream),
               config->numAttrs);
        for (uint32_t i = 0; i < config->numAttrs; i++) {
            printf("%s{\"id\": %u, \"value\": ", i ? ", " : "", config->attrs[i].id);
            print_launch_attribute_value(config->attrs[i].id, config->attrs[i].value);
            printf("}");
        }
        printf("]}");
    }
    printf(", \"func\": %llu, \"args\": %llu}, \"outputs\": {}, \"ret\": %d}\n", U64(func), U64(args), ret);
    return ret;
}

/* ---- what the export header calls itself ----------------------------------------------------- */
cudaError_t cudaGetDeviceCount(int *count) {
    gt_call_head("cudaGetDeviceCount", "header Kernel_Module_Load");
    printf(", \"args\": {}, \"outputs\": {");
    if (count) { *count = DEVICE_COUNT; printf("\"count\": %d", DEVICE_COUNT); }
    printf("}, \"ret\": 0}\n");
    return 0;
}

cudaError_t cudaLibraryUnload(cudaLibrary_t library) { (void)library; return 0; }
const char *cudaGetErrorName(cudaError_t error) { (void)error; return "cudaError"; }
const char *cudaGetErrorString(cudaError_t error) { (void)error; return "error"; }

/* ---- entries ----------------------------------------------------------------------------------- */
const char *gt_enter(const char *entry) {
    const char *saved = gt_current_entry;
    gt_current_entry = entry;
    return saved;
}

void gt_leave(const char *saved, const char *args_json, long returned) {
    printf("{\"kind\": \"entry\", \"entry\": ");
    gt_print_string(gt_current_entry);
    printf(", \"args\": %s, \"returned\": %ld}\n", args_json, returned);
    gt_current_entry = saved;
}
