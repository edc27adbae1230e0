"""The driver's checks of a kernel launch: one path for every launch wrapper.

Each check returns the error the H200 gave where it was measured (FIELD_NOTES section 7) or
the one the CUDA Runtime API reference documents for that failure:
- a zero or over-limit grid or block dimension: cudaErrorInvalidConfiguration (documented);
- more threads than the kernel's MAX_THREADS_PER_BLOCK (registers x threads over the SM's
  register file, or launch bounds): cudaErrorLaunchOutOfResources (documented: "the kernel
  launch specifies too many threads for the kernel's register count");
- dynamic shared memory over the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES: cudaErrorInvalidValue
  (the model's answer so far; not yet measured);
- a grid that is not a multiple of the cluster, or a cluster over the portable size without
  NON_PORTABLE_CLUSTER_SIZE_ALLOWED or over the device's largest: cudaErrorInvalidClusterSize
  (grid (1,1,1) with cluster (2,1,1) measured: 912);
- a cooperative grid with more blocks than can be resident at once:
  cudaErrorCooperativeLaunchTooLarge (10000 x 1024 threads measured: 720);
- a cluster scheduling policy outside 0-2: cudaErrorInvalidValue (as the setter of attribute 15).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from stub_models.enums import CudaError, DeviceAttribute, FuncAttribute, LaunchAttributeID

from .occupancy import max_active_blocks
from .profile import DeviceProfile

A = FuncAttribute
D = DeviceAttribute
E = CudaError
L = LaunchAttributeID


@dataclass(frozen=True)
class LaunchRequest:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_smem: int
    attrs: dict[int, object] = field(default_factory=dict)     # launch attribute id -> value (int or (x, y, z))


def launch_attributes(decoded: list[dict]) -> dict[int, object]:
    """Launch attribute id -> value from the decoded cudaLaunchAttribute list (clusters as (x, y, z))."""
    values: dict[int, object] = {}
    for attribute in decoded:
        value = attribute.get("value") or {}
        if attribute["id"] in (L.CLUSTER_DIMENSION, L.PREFERRED_CLUSTER_DIMENSION):
            values[attribute["id"]] = (value.get("x", 0), value.get("y", 0), value.get("z", 0))
        else:
            values[attribute["id"]] = next(iter(value.values()), 0) if isinstance(value, dict) else value
    return values


def check_launch(request: LaunchRequest, kernel: dict[int, int], profile: DeviceProfile,
                 device: dict[int, int]) -> CudaError:
    """SUCCESS, or the error the driver answers for this launch of a kernel with these attributes."""
    for check in (_dimensions, _threads, _shared_memory, _cluster, _cooperative, _policy):
        error = check(request, kernel, profile, device)
        if error is not E.SUCCESS:
            return error
    return E.SUCCESS


def _dimensions(request, kernel, profile, device) -> CudaError:
    block_limits = (device[D.MAX_BLOCK_DIM_X], device[D.MAX_BLOCK_DIM_Y], device[D.MAX_BLOCK_DIM_Z])
    grid_limits = (device[D.MAX_GRID_DIM_X], device[D.MAX_GRID_DIM_Y], device[D.MAX_GRID_DIM_Z])
    if min(request.grid) < 1 or min(request.block) < 1:
        return E.INVALID_CONFIGURATION
    if any(b > limit for b, limit in zip(request.block, block_limits)) or any(g > limit for g, limit in zip(request.grid, grid_limits)):
        return E.INVALID_CONFIGURATION
    if prod(request.block) > device[D.MAX_THREADS_PER_BLOCK]:
        return E.INVALID_CONFIGURATION
    return E.SUCCESS


def _threads(request, kernel, profile, device) -> CudaError:
    return E.LAUNCH_OUT_OF_RESOURCES if prod(request.block) > kernel[A.MAX_THREADS_PER_BLOCK] else E.SUCCESS


def _shared_memory(request, kernel, profile, device) -> CudaError:
    return E.INVALID_VALUE if request.dynamic_smem > kernel[A.MAX_DYNAMIC_SHARED_SIZE_BYTES] else E.SUCCESS


def _cluster(request, kernel, profile, device) -> CudaError:
    cluster = request.attrs.get(L.CLUSTER_DIMENSION)
    if cluster is None:
        required = (kernel.get(A.REQUIRED_CLUSTER_WIDTH, 0), kernel.get(A.REQUIRED_CLUSTER_HEIGHT, 0),
                    kernel.get(A.REQUIRED_CLUSTER_DEPTH, 0))
        if not all(required):
            return E.SUCCESS
        cluster = required
    if min(cluster) < 1:
        return E.INVALID_CLUSTER_SIZE
    if any(g % c for g, c in zip(request.grid, cluster)):
        return E.INVALID_CLUSTER_SIZE
    size = prod(cluster)
    limit = profile.max_cluster_size if kernel.get(A.NON_PORTABLE_CLUSTER_SIZE_ALLOWED) else profile.portable_cluster_size
    return E.INVALID_CLUSTER_SIZE if size > limit else E.SUCCESS


def _cooperative(request, kernel, profile, device) -> CudaError:
    if not request.attrs.get(L.COOPERATIVE):
        return E.SUCCESS
    per_sm = max_active_blocks(kernel, prod(request.block), request.dynamic_smem, profile, device)
    resident = per_sm * device[D.MULTIPROCESSOR_COUNT]
    return E.COOPERATIVE_LAUNCH_TOO_LARGE if prod(request.grid) > resident else E.SUCCESS


def _policy(request, kernel, profile, device) -> CudaError:
    policy = request.attrs.get(L.CLUSTER_SCHEDULING_POLICY_PREFERENCE, 0)
    return E.INVALID_VALUE if not 0 <= int(policy) <= 2 else E.SUCCESS
