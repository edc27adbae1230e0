/* dlopen a shared library (RTLD_NOW) and run every export's loaders as emu's `trace` does, printing the
   recorder's lines (tests/fixtures/realworld/stubs.c's format; tests/oracles/shared_native.py builds and runs it).

   usage: harness RECORDING_CUDART LIBRARY DEVICES PREFIX...
   The recording runtime is loaded first with RTLD_GLOBAL, as a CUDA process has libcudart loaded; the
   library's NEEDED libcute_dsl_runtime.so / libtvm_ffi.so are the recording stand-ins, found through
   LD_LIBRARY_PATH. For each loader prefix P (an export's `P_cuda_init`, ...): `{"export": P}`, then the phases
   cuda_init, cuda_load and cuda_load_to_device for devices 0 .. DEVICES-1 on one library slot, each as
   `{"phase": name}`, its calls, `{"return": n}`. A symbol that is missing prints `{"missing": symbol}`.
   `{"loaded": true}` follows dlopen (calls before it ran in constructors), `{"dlclose": true}` precedes dlclose
   (calls after it ran in destructors). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int32_t (*loader_fn)(void **library);
typedef int32_t (*load_to_device_fn)(void **library, int32_t device);

static void *find(void *library, const char *prefix, const char *entry) {
    char symbol[1024];
    snprintf(symbol, sizeof symbol, "%s_%s", prefix, entry);
    void *address = dlsym(library, symbol);
    if (!address) printf("{\"missing\": \"%s\"}\n", symbol);
    return address;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s RECORDING_CUDART LIBRARY DEVICES PREFIX...\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
        printf("{\"dlopen\": \"%s\"}\n", dlerror());
        return 3;
    }
    void *library = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        printf("{\"dlopen\": \"%s\"}\n", dlerror());
        return 3;
    }
    printf("{\"loaded\": true}\n");      /* anything before this line ran while dlopen ran constructors */
    int devices = atoi(argv[3]);
    for (int i = 4; i < argc; i++) {
        const char *prefix = argv[i];
        printf("{\"export\": \"%s\"}\n", prefix);
        loader_fn init = (loader_fn)find(library, prefix, "cuda_init");
        loader_fn load = (loader_fn)find(library, prefix, "cuda_load");
        load_to_device_fn load_to_device = (load_to_device_fn)find(library, prefix, "cuda_load_to_device");
        if (!init || !load || !load_to_device) continue;
        void *slot = 0;
        printf("{\"phase\": \"cuda_init\"}\n");
        fflush(stdout);
        printf("{\"return\": %d}\n", init(&slot));
        printf("{\"phase\": \"cuda_load\"}\n");
        fflush(stdout);
        printf("{\"return\": %d}\n", load(&slot));
        for (int device = 0; device < devices; device++) {
            printf("{\"phase\": \"cuda_load_to_device\"}\n");
            fflush(stdout);
            printf("{\"return\": %d}\n", load_to_device(&slot, device));
        }
    }
    printf("{\"dlclose\": true}\n");     /* anything after this line ran in the library's destructors */
    fflush(stdout);
    dlclose(library);
    fflush(stdout);
    return 0;
}
