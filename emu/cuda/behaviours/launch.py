"""Behaviours for launches and occupancy queries: every launch wrapper goes through `launch`."""
from __future__ import annotations

from stub_models.enums import CudaError as E

from ..launch_checks import LaunchRequest, check_launch, launch_attributes
from ..occupancy import max_active_blocks
from ...run.state import LaunchRecord
from ..runtime import CudaRuntime, Result


def launch(rt: CudaRuntime, func: int, request: LaunchRequest, record: dict) -> Result:
    """Validate a launch as the driver does and record it when accepted."""
    kernel = rt.kernel(func)
    if kernel is None:
        return E.INVALID_DEVICE_FUNCTION, {}
    attributes = kernel.attributes[rt.current_device]
    error = check_launch(request, attributes, rt.profile, rt.device_attributes, kernel.limits)
    if error is E.SUCCESS:
        rt.record_launch(LaunchRecord(kernel=kernel.name, device=rt.current_device, **record))
    return error, {}


def launch_kernel_ex(rt: CudaRuntime, call) -> Result:
    """cudaLaunchKernelEx: grid, block, shared memory and attributes in a cudaLaunchConfig_t."""
    config = call.config if isinstance(call.config, dict) else None
    if rt.kernel(call.func) is None:
        return E.INVALID_DEVICE_FUNCTION, {}
    if config is None:
        return E.INVALID_VALUE, {}
    request = LaunchRequest(tuple(config["gridDim"]), tuple(config["blockDim"]), config["dynamicSmemBytes"],
                            launch_attributes(config.get("attrs", [])))
    return launch(rt, call.func, request, config)


def launch_kernel(rt: CudaRuntime, call) -> Result:
    """cudaLaunchKernel: grid and block as separate unsigned ints, no attributes."""
    grid = [call.gridDimX, call.gridDimY, call.gridDimZ]
    block = [call.blockDimX, call.blockDimY, call.blockDimZ]
    record = {"gridDim": grid, "blockDim": block, "dynamicSmemBytes": call.sharedMem, "stream": call.stream,
              "attrs": [], "numAttrs": 0}
    return launch(rt, call.func, LaunchRequest(tuple(grid), tuple(block), call.sharedMem), record)


def occupancy_max_active_blocks(rt: CudaRuntime, call) -> Result:
    kernel = rt.kernel(call.func)
    if kernel is None:
        return E.INVALID_DEVICE_FUNCTION, {}
    if call.blockSize < 1:
        return E.INVALID_VALUE, {}
    attributes = kernel.attributes[rt.current_device]
    blocks = max_active_blocks(attributes, call.blockSize, call.dynamicSMemSize, rt.profile, rt.device_attributes,
                               barriers=kernel.limits.barriers)
    return E.SUCCESS, {"numBlocks": blocks}
