"""The CUDA runtime model's state as a trace records it: kernels and their attributes per device, the
launches accepted, the live handles.

Part of the trace contract (emu.run.trace's `ObjectRun.state`): plain records that the runtime model
(emu.cuda.runtime) fills in and scenarios and `check` read, kept apart from the model so that the
contract depends on nothing that computes it.
"""
from __future__ import annotations

from pydantic import Field

from stub_models.enums import FuncAttribute

from ..support.model import Model, empty_list

_ATTRIBUTE_NAMES = {int(a): a.name for a in FuncAttribute}


class KernelState(Model):
    name: str = Field(description="kernel name")
    handle: int = Field(description="its cudaKernel_t handle")
    library: int = Field(description="the library handle it belongs to")
    devices: dict[str, dict[str, int]] = Field(description="device ordinal -> CUfunction_attribute name -> value")
    unknown: list[str] = Field(default_factory=empty_list, description="attributes emu cannot know for this kernel (no cubin "
                               "for the device: PTX to be JIT-compiled, or no GPU binary); their values are the "
                               "profile's defaults, not the device's answer")

    def attribute(self, device: int, attribute: int) -> int | None:
        """The attribute's value on `device`, or None where the kernel has none there."""
        return self.devices.get(str(device), {}).get(_ATTRIBUTE_NAMES.get(int(attribute), ""))


class LaunchRecord(Model):
    kernel: str = Field(description="the launched kernel's name")
    device: int = Field(description="the device it was launched on")
    gridDim: list[int] = Field(description="grid x, y, z")
    blockDim: list[int] = Field(description="block x, y, z")
    dynamicSmemBytes: int = Field(description="dynamic shared memory bytes")
    stream: int = Field(description="the stream handle")
    attrs: list[dict] = Field(default_factory=empty_list, description="launch attributes as decoded from cudaLaunchConfig_t")
    numAttrs: int = Field(default=0, description="how many launch attributes the config held")


class RuntimeSnapshot(Model):
    """The CUDA runtime model's state after a run: what scenarios and `check` assert on."""

    profile: str = Field(default="h200", description="the device profile the run used")
    device_count: int = Field(default=0, description="devices cudaGetDeviceCount reported")
    current_device: int = Field(default=0, description="the current device at the end")
    libraries: dict[str, list[str]] = Field(default_factory=dict, description="library handle -> its kernel names")
    load_error: str | None = Field(default=None, description="why the GPU binary does not load on the profile's "
                                   "devices, as the driver would refuse it; null when it loads")
    kernels: list[KernelState] = Field(default_factory=empty_list, description="kernels of the libraries the loaders used")
    launches: list[LaunchRecord] = Field(default_factory=empty_list, description="launches the runtime accepted")
    live: dict[str, list[str]] = Field(default_factory=dict, description="handles created and not destroyed, by kind")

    def kernels_matching(self, name: str) -> list[KernelState]:
        """The kernels called `name` ('*': every kernel)."""
        return [k for k in self.kernels if name in ("*", k.name)]

    def kernel_with_handle(self, handles: set[int]) -> KernelState | None:
        return next((k for k in self.kernels if k.handle in handles), None)
