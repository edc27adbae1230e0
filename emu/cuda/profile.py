"""Device profiles: what `cudaDeviceGetAttribute` reports and the per-SM rules the driver applies.

Profiles come only from measurements or cited public figures: `h200` is built from H200 facts
by `profiles/build.py`; `a100` and `b200` from the CUDA C++ Programming Guide and the devices'
published specifications, marked `measured: false` until someone runs the probe on one.
"""
from __future__ import annotations

import json
import os
from functools import cache

from pydantic import BaseModel, ConfigDict, Field

from stub_models.enums import DeviceAttribute

from ..support.model import empty_list


class ClusterOccupancyTable(BaseModel):
    """cudaOccupancyMaxActiveClusters as measured over cluster sizes x the kernel's resident blocks per SM."""
    model_config = ConfigDict(extra="forbid", frozen=True)

    blocks_per_sm_cap: int = Field(description="resident blocks per SM from which the answers no longer grow: a "
                                   "kernel with more answers as one with this many")
    clusters: dict[int, list[int | None]] = Field(description="cluster size (blocks in a cluster) -> the answer for a "
                                                  "kernel of 1, 2, ... blocks_per_sm_cap resident blocks per SM (null: "
                                                  "not measured)")
    source: str = Field(description="the measurement the table was read from")

PROFILES = ("h200", "a100", "b200")


class DeviceProfile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="profile name used in scenarios and --profile")
    device_name: str = Field(description="the device's marketing name")
    source: str = Field(description="where the numbers come from (facts file, or the cited documents)")
    measured: bool = Field(description="true when every number was read from the device by the probe")
    device_count: int = Field(description="devices in the measured machine")
    device_attributes: dict[int, int] = Field(description="cudaDeviceAttr number -> value")
    kernel_read_only: dict[int, int] = Field(description="read-only attributes of a kernel whose cubin emu cannot "
                                             "read (the measured kernel's; marked unknown where used)")
    kernel_settable_defaults: dict[int, int] = Field(description="settable kernel attributes before any set call")
    kernel_unsupported: list[int] = Field(default_factory=empty_list, description="CUfunction_attribute numbers that "
                                          "cuKernelGetAttribute answers with CUDA_ERROR_INVALID_VALUE")
    register_allocation_unit: int = Field(description="registers are given to a warp in multiples of this")
    sub_partitions: int = Field(description="SM sub-partitions the register file is split over (a warp's "
                                "registers come from one)")
    shared_allocation_unit: int = Field(description="shared memory is given to a block in multiples of this")
    shared_carveout_kib: list[int] = Field(description="the shared memory capacities an SM can be configured to (KiB)")
    portable_cluster_size: int = Field(description="largest cluster launchable without NON_PORTABLE_CLUSTER_SIZE_ALLOWED")
    barriers_per_multiprocessor: int | None = Field(default=None, description="named barriers an SM holds for its "
                                                    "resident blocks (occupancy); null where not measured, and then not modelled")
    max_cluster_size: int = Field(description="largest cluster with NON_PORTABLE_CLUSTER_SIZE_ALLOWED (0: no clusters)")
    cluster_occupancy: ClusterOccupancyTable | None = Field(
        default=None, description="cudaOccupancyMaxActiveClusters, measured; null where not measured, and then not "
        "modelled (emu answers unknown)")

    @property
    def compute_capability(self) -> int:
        """90 for compute capability 9.0."""
        attrs = self.device_attributes
        return attrs[DeviceAttribute.COMPUTE_CAPABILITY_MAJOR] * 10 + attrs[DeviceAttribute.COMPUTE_CAPABILITY_MINOR]


@cache
def load_profile(name: str) -> DeviceProfile:
    if name not in PROFILES:
        raise KeyError(name)
    # the file beside this module, read directly: importlib.resources costs a cold run its import (about 3 ms)
    with open(os.path.join(os.path.dirname(__file__), "profiles", f"{name}.json"), encoding="utf-8") as handle:
        text = handle.read()
    return DeviceProfile.model_validate(json.loads(text))
