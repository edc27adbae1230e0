"""Behaviours for the device wrappers: which devices exist, which is current, their attributes."""
from __future__ import annotations

from stub_models.enums import CudaError as E

from ..runtime import CudaRuntime, Result


def get_device(rt: CudaRuntime, call) -> Result:
    return E.SUCCESS, {"device": rt.current_device}


def get_device_count(rt: CudaRuntime, call) -> Result:
    return E.SUCCESS, {"count": rt.config.device_count}


def set_device(rt: CudaRuntime, call) -> Result:
    if not rt.valid_device(call.device):
        return E.INVALID_DEVICE, {}
    rt.current_device = call.device
    return E.SUCCESS, {}


def driver_device_get(rt: CudaRuntime, call) -> Result:
    if not rt.valid_device(call.ordinal):
        return E.INVALID_DEVICE, {}
    return E.SUCCESS, {"device": call.ordinal}


def device_get_attribute(rt: CudaRuntime, call) -> Result:
    if not rt.valid_device(call.device):
        return E.INVALID_DEVICE, {}
    if call.attr not in rt.device_attributes:
        return E.INVALID_VALUE, {}
    return E.SUCCESS, {"value": rt.device_attributes[call.attr]}
