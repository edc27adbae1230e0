// The header form nvidia-cutlass-dsl 4.3 wrote (cut down): driver API types, _Kernel_Metadata_Load, <prefix>_wrapper.
#include <cuda.h>
typedef struct {
    CUlibrary module;
} plain_Kernel_Metadata_t;
static inline void plain_Kernel_Metadata_Load(plain_Kernel_Metadata_t *metadata) {
}
typedef struct {
    void *data;
} plain_Tensor_x_t;
static inline int32_t plain_wrapper(plain_Kernel_Metadata_t *metadata, plain_Tensor_x_t *x, CUstream stream) {
    return 0;
}
