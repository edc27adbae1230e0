"""The driver's checks of a kernel launch: one path for every launch wrapper.

Each check returns the error a real H200 gave for it (driver 580.159.04: FIELD_NOTES section 7
and tests/data/cubin/measured_h200.jsonl, cudaLaunchKernelEx and cudaLaunchKernel on nvcc- and ptxas-built kernels), in the
order the H200 applied them:
- a zero or over-limit grid or block dimension: cudaErrorInvalidValue (cudaLaunchKernelEx and
  cudaLaunchKernel alike, although the runtime API reference names cudaErrorInvalidConfiguration);
- a block other than the cubin's `.reqntid` (every CuTe DSL kernel has one): cudaErrorInvalidValue;
- launch attribute values (before the cluster): a synchronization policy outside 1-4, a cluster
  scheduling policy outside 0-2, a carveout outside 0-100 or an unassigned id: cudaErrorInvalidValue;
  DEVICE_UPDATABLE_KERNEL_NODE outside a graph: cudaErrorNotSupported; a programmatic or completion
  event that is null: cudaErrorInvalidResourceHandle, with flags over 1: cudaErrorInvalidValue,
  with flag 1: cudaErrorIllegalState (as the probe's launches met it);
- a preferred cluster without a cluster, or not a multiple of it: cudaErrorInvalidClusterSize;
- no cluster for a kernel whose CLUSTER_SIZE_MUST_BE_SET (`.explicitcluster`), a grid that is not a
  multiple of the cluster, a cluster other than the kernel's compile-time cluster, a cluster over
  the portable 8 without NON_PORTABLE_CLUSTER_SIZE_ALLOWED, over 16 with it, or over the cubin's
  `.maxclusterrank`: cudaErrorInvalidClusterSize (checked before threads and shared memory);
- more threads than `.maxntid` allows: cudaErrorInvalidValue (before the launch attributes);
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
    max_block_threads: int | None = None                  # .maxntid: the most threads in a block
    fixed_cluster: bool = False                           # .reqnctapercluster: the cluster shape is compiled in
    barriers: int = 0                                     # named barriers each block uses (occupancy)


NO_LIMITS = LaunchLimits()
# Blocks of a cluster launch resident on one SM at most: the H200's largest cooperative grids for a
# kernel with clusters of 2 were min(occupancy, 8) x 132 blocks (tests/data/facts/h200 toy_cluster_2).
CLUSTER_BLOCKS_PER_SM = 8


def launch_limits(cubin) -> LaunchLimits:
    if cubin is None:
        return NO_LIMITS
    bound = prod(cubin.max_threads) if cubin.max_threads else None
    return LaunchLimits(cubin.required_threads, cubin.max_cluster_rank, bound, cubin.cluster_dims is not None,
                        cubin.barriers)


@dataclass(frozen=True)
class LaunchRequest:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_smem: int
    attrs: dict[int, object] = field(default_factory=dict)     # launch attribute id -> value (int or (x, y, z))


def launch_attributes(decoded: list[dict]) -> dict[int, object]:
    """Launch attribute id -> value from the decoded cudaLaunchAttribute list, in the probe's facts' shapes:
    clusters as (x, y, z), events as (has an event, flags, trigger at block start), scalars as signed ints."""
    values: dict[int, object] = {}
    for attribute in decoded:
        value = attribute.get("value") or {}
        if attribute["id"] in (L.CLUSTER_DIMENSION, L.PREFERRED_CLUSTER_DIMENSION):
            values[attribute["id"]] = (value.get("x", 0), value.get("y", 0), value.get("z", 0))
        elif attribute["id"] in (L.PROGRAMMATIC_EVENT, L.LAUNCH_COMPLETION_EVENT):
            values[attribute["id"]] = (int(bool(value.get("event"))), value.get("flags", 0),
                                       value.get("triggerAtBlockStart", 0))
        else:
            scalar = next(iter(value.values()), 0) if isinstance(value, dict) else value
            values[attribute["id"]] = scalar - (1 << 32) if isinstance(scalar, int) and scalar >= 1 << 31 else scalar
    return values


def check_launch(request: LaunchRequest, kernel: dict[int, int], profile: DeviceProfile,
                 device: dict[int, int], limits: LaunchLimits = NO_LIMITS) -> CudaError:
    """SUCCESS, or the error the driver answers for this launch of a kernel with these attributes."""
    return explain_launch(request, kernel, profile, device, limits)[0]


def explain_launch(request: LaunchRequest, kernel: dict[int, int], profile: DeviceProfile,
                   device: dict[int, int], limits: LaunchLimits = NO_LIMITS) -> tuple[CudaError, str | None]:
    """(SUCCESS, None), or the error the driver answers for this launch and why, from the same checks."""
    for check in (_dimensions, _required_block, _launch_bounds, _attribute_values, _cluster, _shared_memory,
                  _cooperative, _registers):
        refusal = check(request, kernel, profile, device, limits)
        if refusal is not None:
            return refusal
    return E.SUCCESS, None


Refusal = tuple[CudaError, str] | None


def _dimensions(request, kernel, profile, device, limits) -> Refusal:
    block_limits = (device[D.MAX_BLOCK_DIM_X], device[D.MAX_BLOCK_DIM_Y], device[D.MAX_BLOCK_DIM_Z])
    grid_limits = (device[D.MAX_GRID_DIM_X], device[D.MAX_GRID_DIM_Y], device[D.MAX_GRID_DIM_Z])
    if min(request.grid) < 1 or min(request.block) < 1:
        return E.INVALID_VALUE, f"a zero grid {_dims(request.grid)} or block {_dims(request.block)} dimension"
    if any(b > limit for b, limit in zip(request.block, block_limits)):
        return E.INVALID_VALUE, f"block {_dims(request.block)} over the device's block dimensions {_dims(block_limits)}"
    if any(g > limit for g, limit in zip(request.grid, grid_limits)):
        return E.INVALID_VALUE, f"grid {_dims(request.grid)} over the device's grid dimensions {_dims(grid_limits)}"
    if prod(request.block) > device[D.MAX_THREADS_PER_BLOCK]:
        return E.INVALID_VALUE, (f"a block of {prod(request.block)} threads over the device's "
                                 f"{device[D.MAX_THREADS_PER_BLOCK]}")
    return None


def _dims(values) -> str:
    return "(" + ",".join(str(v) for v in values) + ")"


def _required_block(request, kernel, profile, device, limits) -> Refusal:
    """The block must be the `.reqntid` one; the H200 accepted a 1-thread block too (why is not known)."""
    required = limits.required_block
    if required is None or tuple(request.block) in (tuple(required), (1, 1, 1)):
        return None
    return E.INVALID_VALUE, f"block {_dims(request.block)} is not the cubin's required block (.reqntid) {_dims(required)}"


def _attribute_values(request, kernel, profile, device, limits) -> Refusal:
    """Each launch attribute's value as the H200 judged it (tests/data/facts/h200: the probe's sweep)."""
    attrs = request.attrs
    if L.SYNCHRONIZATION_POLICY in attrs and not 1 <= int(attrs[L.SYNCHRONIZATION_POLICY]) <= 4:
        return E.INVALID_VALUE, f"launch attribute SYNCHRONIZATION_POLICY {attrs[L.SYNCHRONIZATION_POLICY]} outside 1-4"
    if not 0 <= int(attrs.get(L.CLUSTER_SCHEDULING_POLICY_PREFERENCE, 0)) <= 2:
        return E.INVALID_VALUE, "launch attribute CLUSTER_SCHEDULING_POLICY_PREFERENCE outside 0-2"
    if not 0 <= int(attrs.get(L.PREFERRED_SHARED_MEMORY_CARVEOUT, 0)) <= 100:
        return E.INVALID_VALUE, "launch attribute PREFERRED_SHARED_MEMORY_CARVEOUT outside 0-100"
    unknown = [i for i in attrs if i not in _KNOWN_ATTRIBUTES]
    if unknown:
        return E.INVALID_VALUE, f"launch attribute id {unknown[0]} is not assigned"
    if L.DEVICE_UPDATABLE_KERNEL_NODE in attrs:
        return E.NOT_SUPPORTED, "launch attribute DEVICE_UPDATABLE_KERNEL_NODE outside a graph"
    for event in (L.PROGRAMMATIC_EVENT, L.LAUNCH_COMPLETION_EVENT):
        if event in attrs:
            has_event, flags, *_ = attrs[event]
            name = L(event).name
            if not has_event:
                return E.INVALID_RESOURCE_HANDLE, f"launch attribute {name} without an event"
            if flags & ~1:
                return E.INVALID_VALUE, f"launch attribute {name} with flags {flags} (over 1)"
            if flags:
                return E.ILLEGAL_STATE, f"launch attribute {name} with flag 1 (as the H200 answered on the probe's stream)"
    return None


_KNOWN_ATTRIBUTES = frozenset(int(a) for a in LaunchAttributeID) - {15}


def _launch_bounds(request, kernel, profile, device, limits) -> Refusal:
    """More threads than `.maxntid` allows (whatever the registers allow)."""
    bound = limits.max_block_threads
    if bound is not None and prod(request.block) > bound:
        return E.INVALID_VALUE, f"a block of {prod(request.block)} threads over the cubin's .maxntid {bound}"
    return None


def _registers(request, kernel, profile, device, limits) -> Refusal:
    if prod(request.block) > kernel[A.MAX_THREADS_PER_BLOCK]:
        return E.LAUNCH_OUT_OF_RESOURCES, (f"a block of {prod(request.block)} threads over the register limit: "
                                           f"{kernel.get(A.NUM_REGS, 0)} registers a thread allow "
                                           f"{kernel[A.MAX_THREADS_PER_BLOCK]} (MAX_THREADS_PER_BLOCK)")
    return None


def _shared_memory(request, kernel, profile, device, limits) -> Refusal:
    if request.dynamic_smem > kernel[A.MAX_DYNAMIC_SHARED_SIZE_BYTES]:
        return E.INVALID_VALUE, (f"dynamic shared memory {request.dynamic_smem} bytes over the kernel's "
                                 f"MAX_DYNAMIC_SHARED_SIZE_BYTES (attribute 8) {kernel[A.MAX_DYNAMIC_SHARED_SIZE_BYTES]}")
    return None


def _cluster(request, kernel, profile, device, limits) -> Refusal:
    cluster = request.attrs.get(L.CLUSTER_DIMENSION)
    required = (kernel.get(A.REQUIRED_CLUSTER_WIDTH, 0), kernel.get(A.REQUIRED_CLUSTER_HEIGHT, 0),
                kernel.get(A.REQUIRED_CLUSTER_DEPTH, 0))
    if all(required):
        if cluster is not None and tuple(cluster) != required:
            return E.INVALID_CLUSTER_SIZE, f"cluster {_dims(cluster)} is not the kernel's compiled-in cluster {_dims(required)}"
        cluster = required
    preferred = request.attrs.get(L.PREFERRED_CLUSTER_DIMENSION)
    if preferred is not None and (cluster is None or min(cluster) < 1
                                  or any(p % c for p, c in zip(preferred, cluster))):
        return E.INVALID_CLUSTER_SIZE, f"preferred cluster {_dims(preferred)} is not a multiple of a cluster"
    if cluster is None:
        if kernel.get(A.CLUSTER_SIZE_MUST_BE_SET):
            return E.INVALID_CLUSTER_SIZE, "no cluster for a kernel whose CLUSTER_SIZE_MUST_BE_SET (.explicitcluster)"
        return None
    if min(cluster) < 1:
        return E.INVALID_CLUSTER_SIZE, f"a zero cluster dimension {_dims(cluster)}"
    if any(g % c for g, c in zip(request.grid, cluster)):
        return E.INVALID_CLUSTER_SIZE, f"cluster {_dims(cluster)} does not divide grid {_dims(request.grid)}"
    size = prod(cluster)
    non_portable = kernel.get(A.NON_PORTABLE_CLUSTER_SIZE_ALLOWED)
    limit = profile.max_cluster_size if non_portable else profile.portable_cluster_size
    bound = "the device's largest cluster" if non_portable else "the portable cluster size"
    if limits.max_cluster_size is not None and limits.max_cluster_size < limit:
        limit, bound = limits.max_cluster_size, "the cubin's .maxclusterrank"
    if size > limit:
        why = " (the device has no clusters)" if profile.max_cluster_size == 0 else ""
        return E.INVALID_CLUSTER_SIZE, f"a cluster of {size} blocks over {bound} {limit}{why}"
    return None


def _cooperative(request, kernel, profile, device, limits) -> Refusal:
    if not request.attrs.get(L.COOPERATIVE):
        return None
    per_sm = max_active_blocks(kernel, prod(request.block), request.dynamic_smem, profile, device,
                               barriers=limits.barriers)
    if L.CLUSTER_DIMENSION in request.attrs or limits.fixed_cluster:
        per_sm = min(per_sm, CLUSTER_BLOCKS_PER_SM)
    resident = per_sm * device[D.MULTIPROCESSOR_COUNT]
    if prod(request.grid) > resident:
        return E.COOPERATIVE_LAUNCH_TOO_LARGE, (f"a cooperative grid of {prod(request.grid)} blocks over the "
                                                f"{resident} that can be resident ({per_sm} a SM x "
                                                f"{device[D.MULTIPROCESSOR_COUNT]} SMs)")
    return None
