"""What each CUDA wrapper does to the runtime model: one table, by symbol.

A behaviour takes the runtime state and the call's typed parameters and returns the error
code and the values to write through out-parameters. The functions live in one module per
area (device, library, attributes, launch, resources); this table is the only place that
says which symbol runs which (a helper that calls back into the object is a generator taking the
guest as well: emu.emulator.guest_calls). A catalogued wrapper without an entry succeeds and writes fresh
handles (or zero) through its out-parameters (`default_behaviour`).
"""
from __future__ import annotations

from typing import Callable

from stub_models import CudaCall
from stub_models.enums import CudaError as E

from ..runtime import CudaRuntime, Result
from . import attributes, device, helpers, launch, library, resources

BEHAVIOURS: dict[str, Callable[[CudaRuntime, CudaCall], Result]] = {
    # device
    "_cudaGetDevice": device.get_device,
    "_cudaGetDeviceCount": device.get_device_count,
    "_cudaSetDevice": device.set_device,
    "_cuDeviceGet": device.driver_device_get,
    "_cudaDeviceGetAttribute": device.device_get_attribute,
    # library
    "_cudaLibraryLoadData": library.library_load_data,
    "_cudaLibraryGetKernel": library.library_get_kernel,
    "_cudaLibraryGetKernelCount": library.library_get_kernel_count,
    "_cuLibraryGetKernelCount": library.library_get_kernel_count,
    "_cudaLibraryUnload": library.library_unload,
    "_cuLibraryUnload": library.library_unload,
    # attributes
    "_cuKernelGetAttribute": attributes.kernel_get_attribute,
    "_cudaFuncSetAttribute": attributes.func_set_attribute,
    "_cudaKernelSetAttributeForDevice": attributes.kernel_set_attribute_for_device,
    # launch
    "_cudaLaunchKernelEx": launch.launch_kernel_ex,
    "_cudaLaunchKernel": launch.launch_kernel,
    "_cudaOccupancyMaxActiveBlocksPerMultiprocessor": launch.occupancy_max_active_blocks,
    # resources
    "_cudaStreamCreate": resources.creator("stream", "pStream"),
    "_cudaStreamDestroy": resources.destroyer("stream", "stream", E.INVALID_RESOURCE_HANDLE),
    "_cudaEventCreate": resources.creator("event", "event"),
    "_cudaEventDestroy": resources.destroyer("event", "event", E.INVALID_RESOURCE_HANDLE),
    "_cudaMalloc": resources.creator("device_memory", "devPtr"),
    "_cudaMallocAsync": resources.creator("device_memory", "devPtr"),
    "_cudaMallocManaged": resources.creator("device_memory", "devPtr"),
    "_cudaFree": resources.destroyer("device_memory", "devPtr", E.INVALID_VALUE),
    "_cudaFreeAsync": resources.destroyer("device_memory", "devPtr", E.INVALID_VALUE),
    "_cudaMallocHost": resources.creator("host_memory", "ptr"),
    "_cudaFreeHost": resources.destroyer("host_memory", "ptr", E.INVALID_VALUE),
    # the DSL runtime's helpers: generators that take the guest too and call its code (their models' calls_back)
    "cuda_dialect_init_library_once": helpers.init_library_once,
    "cuda_dialect_unload_library_once": helpers.unload_library_once,
}


def default_behaviour(rt: CudaRuntime, call: CudaCall) -> Result:
    """Succeed, handing out a fresh handle (or zero) through every out-parameter."""
    outputs = {}
    for param in call.params():
        if param.c.kind == "out":
            outputs[param.name] = rt.fresh_handle() if param.c.pointee == "handle" else 0
    return E.SUCCESS, outputs
