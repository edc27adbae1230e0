"""The driver's checks of a kernel launch: one path for every launch wrapper.

Each check returns the error a real H200 gave for it (driver 580.159.04: FIELD_NOTES section 7
and tests/data/cubin/measured_h200.jsonl, cudaLaunchKernelEx and cudaLaunchKernel on nvcc- and ptxas-built kernels), in the
order the H200 applied them:
- a zero or over-limit grid or block dimension: cudaErrorInvalidValue (cudaLaunchKernelEx and
  cudaLaunchKernel alike, although the runtime API reference names cudaErrorInvalidConfiguration);
- a block other than the cubin's `.reqntid` (every CuTe DSL kernel has one): cudaErrorInvalidValue;
- a cluster scheduling policy outside 0-2: cudaErrorInvalidValue (checked before the cluster);
- no cluster for a kernel whose CLUSTER_SIZE_MUST_BE_SET (`.explicitcluster`), a grid that is not a
  multiple of the cluster, a cluster other than the kernel's compile-time cluster, a cluster over
  the portable 8 without NON_PORTABLE_CLUSTER_SIZE_ALLOWED, over 16 with it, or over the cubin's
  `.maxclusterrank`: cudaErrorInvalidClusterSize (checked before threads and shared memory);
- more threads than `.maxntid` allows: cudaErrorInvalidValue;
- dynamic shared memory over the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES: cudaErrorInvalidValue;
- a cooperative grid with more blocks than can be resident at once (occupancy x SMs):
  cudaErrorCooperativeLaunchTooLarge (before the register check: a block too large for the
  registers makes the occupancy 0);
- more threads than the registers allow (registers x threads over the SM's register file):
  cudaErrorLaunchOutOfResources. For kernels with a compile-time cluster the H200 refused
  cooperative grids below that count (2112 blocks of 128 threads of a 10-register kernel); the
  rule for clusters is not modelled.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from stub_models.enums import CudaError, DeviceAttribute, FuncAttribute, LaunchAttributeID

from .kernel_attributes import max_threads_by_registers
from .occupancy import max_active_blocks
from .profile import DeviceProfile

A = FuncAttribute
D = DeviceAttribute
E = CudaError
L = LaunchAttributeID


@dataclass(frozen=True)
class LaunchLimits:
    """What the cubin fixes about a launch beyond the kernel's attributes."""

    required_block: tuple[int, int, int] | None = None    # .reqntid: the block must be exactly this
    max_cluster_size: int | None = None                   # .maxclusterrank: the most blocks in a cluster


NO_LIMITS = LaunchLimits()


def launch_limits(cubin) -> LaunchLimits:
    return LaunchLimits(cubin.required_threads, cubin.max_cluster_rank) if cubin is not None else NO_LIMITS


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
                 device: dict[int, int], limits: LaunchLimits = NO_LIMITS) -> CudaError:
    """SUCCESS, or the error the driver answers for this launch of a kernel with these attributes."""
    for check in (_dimensions, _required_block, _policy, _cluster, _launch_bounds, _shared_memory, _cooperative,
                  _registers):
        error = check(request, kernel, profile, device, limits)
        if error is not E.SUCCESS:
            return error
    return E.SUCCESS


def _dimensions(request, kernel, profile, device, limits) -> CudaError:
    block_limits = (device[D.MAX_BLOCK_DIM_X], device[D.MAX_BLOCK_DIM_Y], device[D.MAX_BLOCK_DIM_Z])
    grid_limits = (device[D.MAX_GRID_DIM_X], device[D.MAX_GRID_DIM_Y], device[D.MAX_GRID_DIM_Z])
    if min(request.grid) < 1 or min(request.block) < 1:
        return E.INVALID_VALUE
    if any(b > limit for b, limit in zip(request.block, block_limits)) or any(g > limit for g, limit in zip(request.grid, grid_limits)):
        return E.INVALID_VALUE
    if prod(request.block) > device[D.MAX_THREADS_PER_BLOCK]:
        return E.INVALID_VALUE
    return E.SUCCESS


def _required_block(request, kernel, profile, device, limits) -> CudaError:
    required = limits.required_block
    return E.INVALID_VALUE if required is not None and tuple(request.block) != tuple(required) else E.SUCCESS


def _launch_bounds(request, kernel, profile, device, limits) -> CudaError:
    """More threads than MAX_THREADS_PER_BLOCK allows where registers do not explain the limit (.maxntid)."""
    threads = prod(request.block)
    if threads <= kernel[A.MAX_THREADS_PER_BLOCK]:
        return E.SUCCESS
    return E.SUCCESS if threads > max_threads_by_registers(kernel[A.NUM_REGS], profile, device) else E.INVALID_VALUE


def _registers(request, kernel, profile, device, limits) -> CudaError:
    return E.LAUNCH_OUT_OF_RESOURCES if prod(request.block) > kernel[A.MAX_THREADS_PER_BLOCK] else E.SUCCESS


def _shared_memory(request, kernel, profile, device, limits) -> CudaError:
    return E.INVALID_VALUE if request.dynamic_smem > kernel[A.MAX_DYNAMIC_SHARED_SIZE_BYTES] else E.SUCCESS


def _cluster(request, kernel, profile, device, limits) -> CudaError:
    cluster = request.attrs.get(L.CLUSTER_DIMENSION)
    required = (kernel.get(A.REQUIRED_CLUSTER_WIDTH, 0), kernel.get(A.REQUIRED_CLUSTER_HEIGHT, 0),
                kernel.get(A.REQUIRED_CLUSTER_DEPTH, 0))
    if all(required):
        if cluster is not None and tuple(cluster) != required:
            return E.INVALID_CLUSTER_SIZE
        cluster = required
    if cluster is None:
        return E.INVALID_CLUSTER_SIZE if kernel.get(A.CLUSTER_SIZE_MUST_BE_SET) else E.SUCCESS
    if min(cluster) < 1:
        return E.INVALID_CLUSTER_SIZE
    if any(g % c for g, c in zip(request.grid, cluster)):
        return E.INVALID_CLUSTER_SIZE
    size = prod(cluster)
    limit = profile.max_cluster_size if kernel.get(A.NON_PORTABLE_CLUSTER_SIZE_ALLOWED) else profile.portable_cluster_size
    if limits.max_cluster_size is not None:
        limit = min(limit, limits.max_cluster_size)
    return E.INVALID_CLUSTER_SIZE if size > limit else E.SUCCESS


def _cooperative(request, kernel, profile, device, limits) -> CudaError:
    if not request.attrs.get(L.COOPERATIVE):
        return E.SUCCESS
    per_sm = max_active_blocks(kernel, prod(request.block), request.dynamic_smem, profile, device)
    resident = per_sm * device[D.MULTIPROCESSOR_COUNT]
    return E.COOPERATIVE_LAUNCH_TOO_LARGE if prod(request.grid) > resident else E.SUCCESS


def _policy(request, kernel, profile, device, limits) -> CudaError:
    policy = request.attrs.get(L.CLUSTER_SCHEDULING_POLICY_PREFERENCE, 0)
    return E.INVALID_VALUE if not 0 <= int(policy) <= 2 else E.SUCCESS
