#pragma once
#include <stdint.h>
typedef struct { void *module; } P_Kernel_Module_t;
#ifdef __cplusplus
extern "C"
#endif
void _mlir_P__mlir_ciface_fmt(void **args, int32_t num_args);
static inline int32_t cute_dsl_P_wrapper(P_Kernel_Module_t *module, int32_t v, double d) {
    int32_t ret = 0;
    void *args[3] = {
        &v, &d,
        &ret
    };
    _mlir_P__mlir_ciface_fmt(args, 3);
    return ret;
}
