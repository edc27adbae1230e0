"""The CUDA runtime as the stubs see it: devices, libraries, kernels and their attributes.

One `CudaRuntime` lives for one object run.  Setters validate their values the way a
real H200 answered them (FIELD_NOTES.md section 5, facts/h200-probe.jsonl) and store
them per kernel and device; getters return what is stored.  Behaviours are plain
functions registered by symbol in `BEHAVIOURS`; a catalogued wrapper without one
succeeds and writes fresh handles (or zero) through its out-parameters.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from stub_models import CudaCall
from stub_models.enums import SETTABLE_FUNC_ATTRIBUTES, CudaError, FuncAttribute

from .config import RuntimeConfig
from .profile import load_profile
from .resources import RESOURCE_BEHAVIOURS

A = FuncAttribute
E = CudaError
_ATTRIBUTE_NAMES = {int(a): a.name for a in FuncAttribute}

Result = tuple[int, dict[str, int]]      # (return code, values to write through out-parameters)


@dataclass
class Kernel:
    name: str
    handle: int
    library: int
    attributes: dict[int, dict[int, int]]   # device -> attribute -> value


@dataclass
class CudaRuntime:
    config: RuntimeConfig
    kernel_names: list[str]
    current_device: int = 0
    libraries: dict[int, list[str]] = field(default_factory=dict)
    kernels: dict[int, Kernel] = field(default_factory=dict)
    launches: list[dict[str, Any]] = field(default_factory=list)
    next_handle: int = 0x10000
    used_libraries: set[int] = field(default_factory=set)   # loaded by cudaLibraryLoadData or asked for a kernel
    resources: dict[str, dict[int, dict]] = field(default_factory=lambda: {
        "stream": {}, "event": {}, "device_memory": {}, "host_memory": {}})   # live handles by kind

    def __post_init__(self) -> None:
        self.profile = load_profile(self.config.profile)
        self.device_attributes = {**self.profile.device_attributes, **self.config.device_attributes}
        self.current_device = self.config.current_device
        self._kernel_by_name: dict[tuple[int, str], Kernel] = {}
        self._register_library(self.config.library_handle, first_kernel=self.config.first_kernel_handle)

    # -- state ------------------------------------------------------------------
    def _register_library(self, handle: int, first_kernel: int | None = None) -> None:
        self.libraries[handle] = list(self.kernel_names)
        for offset, name in enumerate(self.kernel_names):
            kernel_handle = first_kernel + offset if first_kernel is not None else self.fresh_handle()
            attributes = self._initial_attributes(name)
            kernel = Kernel(name, kernel_handle, handle, {d: dict(attributes) for d in range(self.config.device_count)})
            self.kernels[kernel_handle] = kernel
            self._kernel_by_name[(handle, name)] = kernel

    def _initial_attributes(self, name: str) -> dict[int, int]:
        overrides = {**self.config.kernel_attributes.get("*", {}), **self.config.kernel_attributes.get(name, {})}
        values = self.profile.kernel_defaults(overrides.get(A.SHARED_SIZE_BYTES))
        values.update(overrides)
        return values

    def fresh_handle(self) -> int:
        self.next_handle += 0x10
        return self.next_handle

    def valid_device(self, device: int) -> bool:
        return 0 <= device < self.config.device_count

    def snapshot(self) -> dict[str, Any]:
        """The state a scenario can assert on, JSON-ready."""
        return {
            "device_count": self.config.device_count,
            "current_device": self.current_device,
            "libraries": {str(h): names for h, names in self.libraries.items()},
            "kernels": [{"name": k.name, "handle": k.handle, "library": k.library,
                         "devices": {str(d): {_ATTRIBUTE_NAMES[a]: v for a, v in attrs.items()} for d, attrs in k.attributes.items()}}
                        for k in self.kernels.values() if k.library in self.used_libraries],
            "launches": self.launches,
            "live": {kind: [f"{h:#x}" for h in handles] for kind, handles in self.resources.items() if handles},
        }

    # -- the attribute rules, as the H200 answered ---------------------------------
    def set_attribute(self, kernel: Kernel, attr: int, value: int, device: int) -> int:
        if attr not in SETTABLE_FUNC_ATTRIBUTES:
            return E.INVALID_VALUE
        attributes = kernel.attributes[device]
        if attr == A.MAX_DYNAMIC_SHARED_SIZE_BYTES:
            limit = self.device_attributes.get(97, 0) - attributes[A.SHARED_SIZE_BYTES]
            if not 0 <= value <= limit:
                return E.INVALID_VALUE
        elif attr == A.PREFERRED_SHARED_MEMORY_CARVEOUT and not -1 <= value <= 100:
            return E.INVALID_VALUE
        elif attr == A.CLUSTER_SCHEDULING_POLICY_PREFERENCE and not 0 <= value <= 2:
            return E.INVALID_VALUE
        elif attr in (A.CLUSTER_SIZE_MUST_BE_SET, A.REQUIRED_CLUSTER_WIDTH, A.REQUIRED_CLUSTER_HEIGHT,
                      A.REQUIRED_CLUSTER_DEPTH, A.NON_PORTABLE_CLUSTER_SIZE_ALLOWED) and value < 0:
            return E.INVALID_VALUE
        attributes[attr] = value
        return E.SUCCESS


# -- behaviours ---------------------------------------------------------------------
def get_device(rt: CudaRuntime, call) -> Result:
    return E.SUCCESS, {"device": rt.current_device}


def get_device_count(rt: CudaRuntime, call) -> Result:
    return E.SUCCESS, {"count": rt.config.device_count}


def device_get_attribute(rt: CudaRuntime, call) -> Result:
    if not rt.valid_device(call.device):
        return E.INVALID_DEVICE, {}
    if call.attr not in rt.device_attributes:
        return E.INVALID_VALUE, {}
    return E.SUCCESS, {"value": rt.device_attributes[call.attr]}


def library_load_data(rt: CudaRuntime, call) -> Result:
    if call.code == 0:
        return E.INVALID_VALUE, {}
    handle = rt.fresh_handle()
    rt._register_library(handle)
    rt.used_libraries.add(handle)
    return E.SUCCESS, {"library": handle}


def library_get_kernel(rt: CudaRuntime, call) -> Result:
    if call.library not in rt.libraries:
        return E.INVALID_RESOURCE_HANDLE, {}
    rt.used_libraries.add(call.library)
    kernel = rt._kernel_by_name.get((call.library, call.name))
    if kernel is None:
        return E.SYMBOL_NOT_FOUND, {}
    return E.SUCCESS, {"pKernel": kernel.handle}


def kernel_get_attribute(rt: CudaRuntime, call) -> Result:
    kernel = rt.kernels.get(call.kernel)
    if kernel is None:
        return E.INVALID_RESOURCE_HANDLE, {}
    if not rt.valid_device(call.dev):
        return E.INVALID_DEVICE, {}
    if call.attrib not in kernel.attributes[call.dev]:
        return E.INVALID_VALUE, {}
    return E.SUCCESS, {"pi": kernel.attributes[call.dev][call.attrib]}


def func_set_attribute(rt: CudaRuntime, call) -> Result:
    kernel = rt.kernels.get(call.func)
    if kernel is None:
        return E.INVALID_DEVICE_FUNCTION, {}
    if not rt.valid_device(rt.current_device):
        return E.INVALID_DEVICE, {}
    return rt.set_attribute(kernel, call.attr, call.value, rt.current_device), {}


def kernel_set_attribute_for_device(rt: CudaRuntime, call) -> Result:
    if not rt.valid_device(call.device):
        return E.INVALID_DEVICE, {}
    kernel = rt.kernels.get(call.kernel)
    if kernel is None:
        return E.INVALID_RESOURCE_HANDLE, {}
    return rt.set_attribute(kernel, call.attr, call.value, call.device), {}


def launch_kernel_ex(rt: CudaRuntime, call) -> Result:
    config = call.config if isinstance(call.config, dict) else None
    kernel = rt.kernels.get(call.func)
    if kernel is None:
        return E.INVALID_DEVICE_FUNCTION, {}
    if config is None:
        return E.INVALID_VALUE, {}
    grid, block = config["gridDim"], config["blockDim"]
    if min(grid) < 1 or min(block) < 1 or block[0] * block[1] * block[2] > rt.device_attributes.get(1, 1024):
        return E.INVALID_CONFIGURATION, {}
    if config["dynamicSmemBytes"] > kernel.attributes[rt.current_device][A.MAX_DYNAMIC_SHARED_SIZE_BYTES]:
        return E.INVALID_VALUE, {}
    rt.launches.append({"kernel": kernel.name, "device": rt.current_device, **config})
    return E.SUCCESS, {}


BEHAVIOURS: dict[str, Callable[[CudaRuntime, CudaCall], Result]] = {
    "_cudaGetDevice": get_device,
    "_cudaGetDeviceCount": get_device_count,
    "_cudaDeviceGetAttribute": device_get_attribute,
    "_cudaLibraryLoadData": library_load_data,
    "_cudaLibraryGetKernel": library_get_kernel,
    "_cuKernelGetAttribute": kernel_get_attribute,
    "_cudaFuncSetAttribute": func_set_attribute,
    "_cudaKernelSetAttributeForDevice": kernel_set_attribute_for_device,
    "_cudaLaunchKernelEx": launch_kernel_ex,
    **RESOURCE_BEHAVIOURS,
}


def default_behaviour(rt: CudaRuntime, call: CudaCall) -> Result:
    """Succeed, handing out a fresh handle (or zero) through every out-parameter."""
    outputs = {}
    for param in call.params():
        if param.c.kind == "out":
            outputs[param.name] = rt.fresh_handle() if param.c.pointee == "handle" else 0
    return E.SUCCESS, outputs
