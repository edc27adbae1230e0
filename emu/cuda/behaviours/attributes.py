"""Behaviours for kernel attributes: the getter and both setters (rules in CudaRuntime.set_attribute)."""
from __future__ import annotations

from stub_models.enums import CudaError as E

from ..runtime import CudaRuntime, Result

# as module names: see device.py
SUCCESS, INVALID_DEVICE, INVALID_VALUE = E.SUCCESS, E.INVALID_DEVICE, E.INVALID_VALUE
INVALID_RESOURCE_HANDLE, INVALID_DEVICE_FUNCTION = E.INVALID_RESOURCE_HANDLE, E.INVALID_DEVICE_FUNCTION


def kernel_get_attribute(rt: CudaRuntime, call) -> Result:
    kernel = rt.kernel(call.kernel)
    if kernel is None:
        return INVALID_RESOURCE_HANDLE, {}
    if not rt.valid_device(call.dev):
        return INVALID_DEVICE, {}
    value = kernel.attributes[call.dev].get(call.attrib)
    if value is None:
        return INVALID_VALUE, {}
    return SUCCESS, {"pi": value}


def func_set_attribute(rt: CudaRuntime, call) -> Result:
    kernel = rt.kernel(call.func)
    if kernel is None:
        return INVALID_DEVICE_FUNCTION, {}
    if not rt.valid_device(rt.current_device):
        return INVALID_DEVICE, {}
    return rt.set_attribute(kernel, call.attr, call.value, rt.current_device), {}


def kernel_set_attribute_for_device(rt: CudaRuntime, call) -> Result:
    if not rt.valid_device(call.device):
        return INVALID_DEVICE, {}
    kernel = rt.kernel(call.kernel)
    if kernel is None:
        return INVALID_RESOURCE_HANDLE, {}
    return rt.set_attribute(kernel, call.attr, call.value, call.device), {}
