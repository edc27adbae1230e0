/* Runs libc_export.c's launch function natively: `libc_main V D` prints what its libc calls write. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
void _mlir_P__mlir_ciface_fmt(void **args, int32_t n);
int main(int argc, char **argv) {
    int32_t v = atoi(argv[1]);
    double d = atof(argv[2]);
    int32_t ret = -1;
    void *args[3] = {&v, &d, &ret};
    setvbuf(stdout, NULL, _IONBF, 0);
    _mlir_P__mlir_ciface_fmt(args, 3);
    return ret;
}
