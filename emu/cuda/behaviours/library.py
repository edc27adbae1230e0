"""Behaviours for libraries: loading the export's GPU binary, finding kernels, unloading.

The load fails as the driver's does when no image of the fatbin runs on the profile's devices
(cudaErrorNoKernelImageForDevice, measured on the H200); no library is created then, so later
lookups and launches through the loader's handles fail too.
"""
from __future__ import annotations

from stub_models.enums import CudaError as E

from ..runtime import CudaRuntime, Result


def library_load_data(rt: CudaRuntime, call) -> Result:
    if call.code == 0:
        return E.INVALID_VALUE, {}
    handle = rt.load_library()
    if handle is None:
        return E.NO_KERNEL_IMAGE_FOR_DEVICE, {}
    return E.SUCCESS, {"library": handle}


def library_get_kernel(rt: CudaRuntime, call) -> Result:
    if call.library not in rt.libraries:
        return E.INVALID_RESOURCE_HANDLE, {}
    kernel = rt.kernel_in(call.library, call.name)
    if kernel is None:
        return E.SYMBOL_NOT_FOUND, {}
    return E.SUCCESS, {"pKernel": kernel.handle}


def library_get_kernel_count(rt: CudaRuntime, call) -> Result:
    if call.lib not in rt.libraries:
        return E.INVALID_RESOURCE_HANDLE, {}
    return E.SUCCESS, {"count": len(rt.libraries[call.lib])}


def library_unload(rt: CudaRuntime, call) -> Result:
    return (E.SUCCESS if rt.unload_library(call.library) else E.INVALID_RESOURCE_HANDLE), {}
