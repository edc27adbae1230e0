/* A stand-in export whose launch function calls libc as C host code does (tests/stubs/test_libc.py):
   built with cc / aarch64-linux-gnu-gcc -O1 -c, run natively for the reference text, and traced by emu. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef struct CUlib_st *cudaLibrary_t;
const char P_version[] = "1.1";          /* the metadata of a 4.4+ export: its loaders take a pointer to the library slot */
const char P_kernel_info[] = "{}";
int P_cuda_init(cudaLibrary_t *lib) { return 0; }
int P_cuda_load(cudaLibrary_t *lib) { return 0; }
int P_cuda_load_to_device(cudaLibrary_t *lib, int device) { return 0; }
void _mlir_P__mlir_ciface_fmt(void **args, int32_t n) {
    int32_t v = *(int32_t *)args[0];
    double d = *(double *)args[1];
    char *buf = malloc(64);
    memset(buf, 'x', 63); buf[63] = 0;
    memcpy(buf, "copied", 6);
    printf("int %d neg %i u %u x %x X %#X o %#o c %c pct %% s %s p %p nil %p\n", v, -v, (unsigned)-v, v, v, v, 'A' + v % 26, "str", (void *)buf, (void *)0);
    printf("w [%8d] [%-8d] [%08.3d] [%+d] [% d] [%*d] [%-*d] [%.*s] [%10.4s]\n", v, v, v, v, v, 6, v, 6, v, 3, "abcdef", "abcdef");
    printf("l %ld %lu %lld %llx %zu %hhd %hd %jd\n", (long)v * -100000000L, (unsigned long)v << 40, (long long)-1, 0xdeadbeefcafeULL, (size_t)strlen(buf), (signed char)300, (short)70000, (intmax_t)v);
    printf("f %f %.2f %10.3f %-10.1f| %e %E %g %G %g %g\n", d, d, d, d, d, -d, d, 1e-10, 1e20, 0.0001234);
    printf("many %d %d %d %d %d %d %d %d %f %f %f %f %f %f %f %f %f %f %s %d\n", 1, 2, 3, 4, 5, 6, 7, 8, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, buf, v);
    puts("a line");
    fputs("to stdout\n", stdout);
    fprintf(stderr, "err %d\n", v);
    putchar('!');
    char *grown = realloc(buf, 128);
    printf("grown %s\n", grown);
    free(grown);
    *(int32_t *)args[n - 1] = 0;
    if (v == 13) abort();
    if (v == 14) exit(3);
}
