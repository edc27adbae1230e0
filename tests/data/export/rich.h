#pragma once
/* A header in the form export_to_c writes, with every kind of parameter the DSL's generator emits
   (tensor lists, 64-bit extents, every scalar type, a Shape, a pointer); written by hand for test_header.py. */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <stdio.h>
#include <stdint.h>

// Macro to check for cuda errors.
#ifndef CUTE_DSL_CUDA_ERROR_CHECK
#define CUTE_DSL_CUDA_ERROR_CHECK(err) { \
    if ((err) != cudaSuccess) { \
        printf("Got Cuda Error %s: %s\n", cudaGetErrorName(err), cudaGetErrorString(err)); \
    } \
}
#endif

typedef struct {
    cudaLibrary_t module;
} rich_Kernel_Module_t;

#ifdef __cplusplus
extern "C" {
#endif
void _mlir_rich_cuda_init(void **);
#ifdef __cplusplus
}
#endif

typedef struct {
    void *data;
    int64_t dynamic_shapes[3];
    int64_t dynamic_strides[2];
} rich_Tensor_a_t;

typedef struct {
    void *data;
    int32_t dynamic_shapes[1];
} rich_Tensor_b_t;

typedef struct {
    void *data;
    int32_t dynamic_shapes[3];
    int64_t dynamic_strides[1];
} rich_Tensor_xs_t;

typedef struct {
    rich_Tensor_xs_t elements[3];
    int32_t count;
} rich_TensorList_xs_t;

typedef struct {
    void *data;
    int32_t dynamic_shapes[1];
    int32_t dynamic_strides[2];
} rich_Tensor_c_t;

#ifdef __cplusplus
extern "C"
#endif
void _mlir_rich__mlir_ciface_cutlass_rich(void **args, int32_t num_args); /* the launch */

static inline int32_t cute_dsl_rich_wrapper(rich_Kernel_Module_t *module, rich_Tensor_a_t *a, rich_Tensor_b_t *b, rich_TensorList_xs_t *xs, rich_Tensor_c_t *c, uint8_t flag, __half_raw h, __nv_bfloat16 bf, double alpha, int64_t n, int32_t*shape, void *ptr, cudaStream_t stream) {
    int32_t ret = 0;
    void *args[16] = {
        a, b, &xs->elements[0], &xs->elements[1], &xs->elements[2], c, &flag, &h, &bf, &alpha, &n, &shape[0], &shape[1], &ptr, &stream,
        &ret
    };
    _mlir_rich__mlir_ciface_cutlass_rich(args, 16);
    return ret;
}
