"""Behaviours for the device wrappers: which devices exist, which is current, their attributes."""
from __future__ import annotations

from stub_models.enums import CudaError as E

from ..runtime import CudaRuntime, Result

# Enum members as module names: a stub call reaches them on every call, and a class attribute of an enum costs
# several dict look-ups (emu.stubs.dispatch: each tenth of a microsecond of a stub call counts).
SUCCESS, INVALID_DEVICE, INVALID_VALUE = E.SUCCESS, E.INVALID_DEVICE, E.INVALID_VALUE


def get_device(rt: CudaRuntime, call) -> Result:
    return SUCCESS, {"device": rt.current_device}


def get_device_count(rt: CudaRuntime, call) -> Result:
    return SUCCESS, {"count": rt.config.device_count}


def set_device(rt: CudaRuntime, call) -> Result:
    if not rt.valid_device(call.device):
        return INVALID_DEVICE, {}
    rt.current_device = call.device
    return SUCCESS, {}


def driver_device_get(rt: CudaRuntime, call) -> Result:
    if not rt.valid_device(call.ordinal):
        return INVALID_DEVICE, {}
    return SUCCESS, {"device": call.ordinal}


def device_get_attribute(rt: CudaRuntime, call) -> Result:
    if not rt.valid_device(call.device):
        return INVALID_DEVICE, {}
    value = rt.device_attributes.get(call.attr)
    if value is None:
        return INVALID_VALUE, {}
    return SUCCESS, {"value": value}
