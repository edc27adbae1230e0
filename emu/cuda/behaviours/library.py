"""Behaviours for libraries: loading the export's GPU binary, finding kernels, unloading.

When no image of the fatbin runs on the profile's devices the H200 still loads the library
(lazily: cudaLibraryLoadData answers 0, the kernel count is 0) and fails each kernel lookup with
cudaErrorNoKernelImageForDevice (209); the handle the loader then uses is unknown, so attribute
queries and setters answer 400 and launches 98 (tests/data/cubin/measured_h200_loading.jsonl).
"""
from __future__ import annotations

from stub_models.enums import CudaError as E

from ..runtime import CudaRuntime, Result

# as module names: see device.py
SUCCESS, INVALID_RESOURCE_HANDLE = E.SUCCESS, E.INVALID_RESOURCE_HANDLE


def library_load_data(rt: CudaRuntime, call) -> Result:
    if call.code == 0:
        return E.INVALID_VALUE, {}
    return E.SUCCESS, {"library": rt.load_library()}


def library_get_kernel(rt: CudaRuntime, call) -> Result:
    if call.library not in rt.libraries:
        return INVALID_RESOURCE_HANDLE, {}
    kernel = rt.kernel_in(call.library, call.name)
    if kernel is None:
        return (E.SYMBOL_NOT_FOUND if rt.load_error is None else E.NO_KERNEL_IMAGE_FOR_DEVICE), {}
    return SUCCESS, {"pKernel": kernel.handle}


def library_get_kernel_count(rt: CudaRuntime, call) -> Result:
    if call.lib not in rt.libraries:
        return E.INVALID_RESOURCE_HANDLE, {}
    return E.SUCCESS, {"count": len(rt.libraries[call.lib])}


def library_unload(rt: CudaRuntime, call) -> Result:
    return (E.SUCCESS if rt.unload_library(call.library) else E.INVALID_RESOURCE_HANDLE), {}
