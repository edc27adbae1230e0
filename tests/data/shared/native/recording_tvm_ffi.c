/* A recording libtvm_ffi.so (soname libtvm_ffi.so) for TVM-FFI exports linked into a library: the functions
   their entry imports. No loader calls them; each prints `{"call": name, "unmodelled": true}`. */
#include <stdio.h>

static int unmodelled(const char *name) {
    printf("{\"call\": \"%s\", \"unmodelled\": true}\n", name);
    return -1;
}

void *TVMFFIEnvGetStream(int device_type, int device_id) {
    (void)device_type; (void)device_id;
    unmodelled("TVMFFIEnvGetStream");
    return 0;
}
void TVMFFIErrorSetRaisedFromCStr(const char *kind, const char *message) {
    (void)kind; (void)message;
    unmodelled("TVMFFIErrorSetRaisedFromCStr");
}
void TVMFFIErrorSetRaisedFromCStrParts(const char *kind, const char **parts, int count) {
    (void)kind; (void)parts; (void)count;
    unmodelled("TVMFFIErrorSetRaisedFromCStrParts");
}
