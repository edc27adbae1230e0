"""Device profiles: what `cudaDeviceGetAttribute` and fresh kernels report.

Profiles come only from measurements or cited public figures; `h200` is built from
facts/h200-probe.jsonl by `build_h200.py` and is the default.
"""
from __future__ import annotations

import json
from functools import cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from stub_models.enums import FuncAttribute

PROFILES = ("h200",)
_KERNEL_DEFAULTS: dict[tuple[str, int | None], dict[int, int]] = {}


class DeviceProfile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="profile name used in scenarios")
    device_name: str = Field(description="the device's marketing name")
    source: str = Field(description="where the numbers come from")
    device_count: int = Field(description="devices in the measured machine")
    device_attributes: dict[int, int] = Field(description="cudaDeviceAttr number -> value")
    kernel_read_only: dict[int, int] = Field(description="read-only kernel attributes of the measured kernel (defaults for others)")
    kernel_settable_defaults: dict[int, int] = Field(description="settable kernel attributes before any set call")

    def kernel_defaults(self, static_shared: int | None = None) -> dict[int, int]:
        """Every function attribute of a freshly loaded kernel (a fresh dict each call)."""
        cached = _KERNEL_DEFAULTS.get((self.name, static_shared))
        if cached is None:
            cached = _KERNEL_DEFAULTS[(self.name, static_shared)] = self._kernel_defaults(static_shared)
        return dict(cached)

    def _kernel_defaults(self, static_shared: int | None) -> dict[int, int]:
        values = {int(a): 0 for a in FuncAttribute}
        values.update(self.kernel_read_only)
        if static_shared is not None:
            values[FuncAttribute.SHARED_SIZE_BYTES] = static_shared
        values.update(self.kernel_settable_defaults)
        # CUDA's documented default for the dynamic shared memory limit: 48 KiB minus static shared memory.
        values[FuncAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES] = max(0, 48 * 1024 - values[FuncAttribute.SHARED_SIZE_BYTES])
        return values


@cache
def load_profile(name: str) -> DeviceProfile:
    if name not in PROFILES:
        raise KeyError(name)
    text = resources.files("emu.cuda.profiles").joinpath(f"{name}.json").read_text()
    return DeviceProfile.model_validate(json.loads(text))
