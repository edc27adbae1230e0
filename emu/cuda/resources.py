"""Behaviours for the wrappers that create and destroy things: devices, libraries,
streams, events, allocations, plain launches and occupancy queries.

Every created thing gets a distinct fake handle and is remembered, so destroying an
unknown handle fails the way the runtime does, and a scenario can see what leaked.
Device pointers are handles only: no memory is mapped behind them (host code in the
exports never dereferences them).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from stub_models.enums import CudaError

if TYPE_CHECKING:
    from .runtime import CudaRuntime, Result

E = CudaError


def set_device(rt: "CudaRuntime", call) -> "Result":
    if not rt.valid_device(call.device):
        return E.INVALID_DEVICE, {}
    rt.current_device = call.device
    return E.SUCCESS, {}


def driver_device_get(rt: "CudaRuntime", call) -> "Result":
    if not rt.valid_device(call.ordinal):
        return E.INVALID_DEVICE, {}
    return E.SUCCESS, {"device": call.ordinal}


def library_get_kernel_count(rt: "CudaRuntime", call) -> "Result":
    if call.lib not in rt.libraries:
        return E.INVALID_RESOURCE_HANDLE, {}
    return E.SUCCESS, {"count": len(rt.libraries[call.lib])}


def library_unload(rt: "CudaRuntime", call) -> "Result":
    if call.library not in rt.libraries:
        return E.INVALID_RESOURCE_HANDLE, {}
    del rt.libraries[call.library]
    for handle in [h for h, k in rt.kernels.items() if k.library == call.library]:
        del rt.kernels[handle]
    rt.used_libraries.discard(call.library)
    return E.SUCCESS, {}


def _creator(kind: str, out: str):
    def create(rt: "CudaRuntime", call) -> "Result":
        handle = rt.fresh_handle()
        rt.resources[kind][handle] = {name: value for name, value in call.arguments().items() if name != out}
        return E.SUCCESS, {out: handle}
    create.__name__ = f"create_{kind}"
    create.__doc__ = f"A fresh {kind} handle, written through `{out}` and remembered."
    return create


def _destroyer(kind: str, param: str, unknown: int):
    def destroy(rt: "CudaRuntime", call) -> "Result":
        handle = getattr(call, param)
        if handle == 0 and kind in ("device_memory", "host_memory"):
            return E.SUCCESS, {}                       # cudaFree(NULL) is a no-op
        if rt.resources[kind].pop(handle, None) is None:
            return unknown, {}
        return E.SUCCESS, {}
    destroy.__name__ = f"destroy_{kind}"
    destroy.__doc__ = f"Forget a {kind} handle; an unknown one fails with {unknown}."
    return destroy


def launch_kernel(rt: "CudaRuntime", call) -> "Result":
    """The wrapper's cudaLaunchKernel (grid and block as separate unsigned ints)."""
    kernel = rt.kernels.get(call.func)
    if kernel is None:
        return E.INVALID_DEVICE_FUNCTION, {}
    grid = [call.gridDimX, call.gridDimY, call.gridDimZ]
    block = [call.blockDimX, call.blockDimY, call.blockDimZ]
    if min(grid) < 1 or min(block) < 1 or block[0] * block[1] * block[2] > rt.device_attributes.get(1, 1024):
        return E.INVALID_CONFIGURATION, {}
    rt.launches.append({"kernel": kernel.name, "device": rt.current_device, "gridDim": grid, "blockDim": block,
                        "dynamicSmemBytes": call.sharedMem, "stream": call.stream, "attrs": []})
    return E.SUCCESS, {}


def occupancy_max_active_blocks(rt: "CudaRuntime", call) -> "Result":
    """A first-order occupancy model: threads, resident blocks and shared memory per SM.

    Registers are not modelled (the exports' kernels use few); the answer is an upper bound.
    """
    kernel = rt.kernels.get(call.func)
    if kernel is None:
        return E.INVALID_DEVICE_FUNCTION, {}
    if call.blockSize < 1:
        return E.INVALID_VALUE, {}
    attrs, device = kernel.attributes[rt.current_device], rt.device_attributes
    by_threads = device.get(39, 2048) // call.blockSize               # MAX_THREADS_PER_MULTIPROCESSOR
    by_blocks = device.get(106, 32)                                   # MAX_BLOCKS_PER_MULTIPROCESSOR
    shared = attrs[1] + call.dynamicSMemSize
    by_shared = device.get(81, 0) // shared if shared else by_blocks   # MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
    return E.SUCCESS, {"numBlocks": max(0, min(by_threads, by_blocks, by_shared))}


RESOURCE_BEHAVIOURS = {
    "_cudaSetDevice": set_device,
    "_cuDeviceGet": driver_device_get,
    "_cudaLibraryGetKernelCount": library_get_kernel_count,
    "_cuLibraryGetKernelCount": library_get_kernel_count,
    "_cudaLibraryUnload": library_unload,
    "_cuLibraryUnload": library_unload,
    "_cudaStreamCreate": _creator("stream", "pStream"),
    "_cudaStreamDestroy": _destroyer("stream", "stream", E.INVALID_RESOURCE_HANDLE),
    "_cudaEventCreate": _creator("event", "event"),
    "_cudaEventDestroy": _destroyer("event", "event", E.INVALID_RESOURCE_HANDLE),
    "_cudaMalloc": _creator("device_memory", "devPtr"),
    "_cudaMallocAsync": _creator("device_memory", "devPtr"),
    "_cudaMallocManaged": _creator("device_memory", "devPtr"),
    "_cudaFree": _destroyer("device_memory", "devPtr", E.INVALID_VALUE),
    "_cudaFreeAsync": _destroyer("device_memory", "devPtr", E.INVALID_VALUE),
    "_cudaMallocHost": _creator("host_memory", "ptr"),
    "_cudaFreeHost": _destroyer("host_memory", "ptr", E.INVALID_VALUE),
    "_cudaLaunchKernel": launch_kernel,
    "_cudaOccupancyMaxActiveBlocksPerMultiprocessor": occupancy_max_active_blocks,
}
