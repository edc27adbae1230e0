
#pragma once

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
} pdl_pair_Kernel_Module_t;

#ifdef __cplusplus
extern "C" {
#endif
void _mlir_pdl_pair_cuda_init(void **);
void _mlir_pdl_pair_cuda_load_to_device(void **);
static inline void pdl_pair_Kernel_Module_Load(pdl_pair_Kernel_Module_t *module) {
    cudaLibrary_t *libraryPtr = &(module->module);
    cudaError_t ret = cudaSuccess;
    struct {
        cudaLibrary_t **libraryPtr;
        cudaError_t *ret;
    } initArgs = {&libraryPtr, &ret};
    _mlir_pdl_pair_cuda_init((void **)(&initArgs));
    CUTE_DSL_CUDA_ERROR_CHECK(ret);
    int32_t device_id = 0;
    struct {
        cudaLibrary_t **library;
        int32_t *device_id;
        cudaError_t *ret;
    } loadArgs = {&libraryPtr, &device_id, &ret};
    int32_t device_count;
    CUTE_DSL_CUDA_ERROR_CHECK(cudaGetDeviceCount(&device_count));
    for (int32_t i = 0; i < device_count; i++) {
        device_id = i;
        _mlir_pdl_pair_cuda_load_to_device((void **)(&loadArgs));
        CUTE_DSL_CUDA_ERROR_CHECK(ret);
    }
}

static inline void pdl_pair_Kernel_Module_Unload(pdl_pair_Kernel_Module_t *module) {
    CUTE_DSL_CUDA_ERROR_CHECK(cudaLibraryUnload(module->module));
}

#ifdef __cplusplus
}
#endif

typedef struct {
    void *data;
    int32_t dynamic_shapes[2];
    int64_t dynamic_strides[1];
} pdl_pair_Tensor_u_t;


typedef struct {
    void *data;
    int32_t dynamic_shapes[2];
    int64_t dynamic_strides[1];
} pdl_pair_Tensor_v_t;


typedef struct {
    void *data;
    int32_t dynamic_shapes[2];
    int64_t dynamic_strides[1];
} pdl_pair_Tensor_w_t;


typedef struct {
    void *data;
    int32_t dynamic_shapes[2];
    int64_t dynamic_strides[1];
} pdl_pair_Tensor_x_t;


typedef struct {
    void *data;
    int32_t dynamic_shapes[2];
    int64_t dynamic_strides[1];
} pdl_pair_Tensor_y_t;

#ifdef __cplusplus
extern "C"
#endif
void _mlir_pdl_pair__mlir_ciface_cutlass_pdl_two_kernels_FakeTensorFloat32div1div4i64div41_FakeTensorFloat32div1div4i64div41_FakeTensorFloat32div1div4i64div41_FakeTensorFloat32div1div4i64div41_FakeTensorFloat32div(void **args, int32_t num_args);

static inline int32_t cute_dsl_pdl_pair_wrapper(pdl_pair_Kernel_Module_t *module, pdl_pair_Tensor_u_t *u, pdl_pair_Tensor_v_t *v, pdl_pair_Tensor_w_t *w, pdl_pair_Tensor_x_t *x, pdl_pair_Tensor_y_t *y, cudaStream_t stream) {
    int32_t ret = 0;
    void *args[7] = {
        u, v, w, x, y, &stream,
        &ret
    };
    _mlir_pdl_pair__mlir_ciface_cutlass_pdl_two_kernels_FakeTensorFloat32div1div4i64div41_FakeTensorFloat32div1div4i64div41_FakeTensorFloat32div1div4i64div41_FakeTensorFloat32div1div4i64div41_FakeTensorFloat32div(args, 7);
    return ret;
}
