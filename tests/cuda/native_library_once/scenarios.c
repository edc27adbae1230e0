/* Calls cuda_dialect_init_library_once / cuda_dialect_unload_library_once as the DSL's generated code does, with
 * callbacks that print what they are given.  The same file runs natively (main.c, linked with the DSL's static
 * runtime and the recording runtime of standin.c) and in emu (compiled alone: t_cuda_load_to_device(library,
 * scenario) is the entry), so that both print the same lines.  No <stdio.h>: printf is an import in both. */
int printf(const char *format, ...);
typedef int (*load_fn)(void **library);
typedef int (*load_to_device_fn)(void **library, int device);
typedef void (*set_error_fn)(const char *kind, const char *message);
int cuda_dialect_init_library_once(void **slot, load_fn load, load_to_device_fn load_to_device, set_error_fn set_error);
void cuda_dialect_unload_library_once(void **slot);

#define LIBRARY_HANDLE 0x1000      /* emu's default library handle (RuntimeConfig.library_handle) */

static void *slot;
static int load_error;             /* what init returns */
static int device_errors[4];       /* what load_to_device(device) returns */

/* name, devices the runtime reports (0: cudaGetDeviceCount fails with cudaErrorNoDevice) */
const char *const scenario_names[] = {"loads_then_returns_at_once", "init_fails_twice", "some_devices_fail",
                                      "all_devices_fail", "device_count_fails", "no_load_to_device"};
const int scenario_devices[] = {2, 2, 3, 2, 0, 2};
const int scenario_count = 6;

static int init(void **library) {
    printf("init(%s, *library %s) -> %d\n", (void *)library == (void *)&slot ? "slot" : "local", *library ? "set" : "NULL", load_error);
    *library = (void *)LIBRARY_HANDLE;
    return load_error;
}

static int load_to_device(void **library, int device) {
    printf("load_to_device(*library %s, %d) -> %d\n", *library == (void *)LIBRARY_HANDLE ? "handle" : "other", device,
           device_errors[device]);
    return device_errors[device];
}

static void set_error(const char *kind, const char *message) {
    printf("set_error(%s, %s)\n", kind, message);
}

static void init_once(load_to_device_fn per_device) {
    int status = cuda_dialect_init_library_once(&slot, init, per_device, set_error);
    printf("init_library_once -> %d, slot %s\n", status, slot == (void *)LIBRARY_HANDLE ? "handle" : slot ? "other" : "NULL");
}

static void unload_once(void) {
    cuda_dialect_unload_library_once(&slot);
    printf("unload_library_once, slot %s\n", slot ? "set" : "NULL");
}

int scenario(int which) {
    int device;
    slot = 0;
    load_error = 0;
    for (device = 0; device < 4; device++)
        device_errors[device] = 0;
    switch (which) {
    case 0:                                    /* loads; a second call returns at once; unload twice */
        init_once(load_to_device);
        init_once(load_to_device);
        unload_once();
        unload_once();
        break;
    case 1:                                    /* init fails: the slot stays NULL and a second call tries again */
        load_error = 209;
        init_once(load_to_device);
        init_once(load_to_device);
        unload_once();
        break;
    case 2:                                    /* one device of three fails: still loaded */
        device_errors[1] = 1;
        init_once(load_to_device);
        break;
    case 3:                                    /* every device fails: the last error is reported */
        device_errors[0] = 1;
        device_errors[1] = 209;
        init_once(load_to_device);
        break;
    case 4:                                    /* cudaGetDeviceCount fails */
        init_once(load_to_device);
        break;
    case 5:                                    /* no per-device step: no device count either */
        init_once(0);
        break;
    }
    return 0;
}

/* emu's entries (an export named t) */
int t_cuda_init(void *library) { return 0; }
int t_cuda_load(void *library) { return 0; }
int t_cuda_load_to_device(void *library, int which) { return scenario(which); }
