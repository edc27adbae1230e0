"""`cudaOccupancyMaxActiveClusters` as the H200 answers it: a measured table, not a formula.

The answer depends on the cluster's size c (blocks in it, whatever its shape) and on b, the kernel's resident
blocks per SM (`occupancy_limit`, the same inputs as cudaOccupancyMaxActiveBlocksPerMultiprocessor), and stops
growing at the profile's cap (8 on the H200: a kernel with more answers as one with 8).  The numbers follow no
per-GPC rounding we could find (the chip's GPC layout is not something CUDA reports), so the profile carries the
measured table (`DeviceProfile.cluster_occupancy`, emu/probe/cluster_grid.cu's 8,779 answers in two runs) and emu
answers unknown outside it: another profile, a cluster larger than the largest measured, a cell not measured.
The rules around the table, each measured on the H200 (tests/data/facts/h200: cluster_grid/ and the probe's
`cluster_occupancy` lines):
- a kernel with a compile-time cluster (attributes 11-13) answers for its own cluster when the configuration has
  none, and cudaErrorInvalidClusterSize for any other cluster;
- a kernel without one answers 0 clusters (success) when the configuration has no cluster attribute;
- a grid the cluster does not divide: cudaErrorInvalidClusterSize (the command asks no grid, so never there);
- a cluster over the portable size without NON_PORTABLE_CLUSTER_SIZE_ALLOWED (attribute 14):
  cudaErrorInvalidClusterSize; with it every measured size answers, 17 and 18 (over the launchable 16) clusters,
  19 to 33 none (the table's zeros: measured at 1, 2, 4 and 8 blocks per SM only, as 18; other cells unknown);
- no block fitting (b = 0, dynamic shared memory over attribute 8 among the reasons): 0 clusters (success).
"""
from __future__ import annotations

from math import prod

from stub_models.enums import CudaError, FuncAttribute

from .kernel_attributes import CLUSTER_DERIVED, NO_CUBIN
from .launch_checks import NO_LIMITS, LaunchLimits
from .occupancy import occupancy_limit
from .profile import DeviceProfile

A = FuncAttribute
E = CudaError

# (result, clusters, why): result None with clusters None is unknown (why says what was not measured)
ClusterAnswer = tuple[CudaError | None, int | None, str | None]
NO_CLUSTER = "no cluster asked and none compiled in: the driver answers 0 clusters"


def compiled_cluster(kernel: dict[int, int]) -> tuple[int, int, int] | None:
    """The kernel's compile-time cluster (attributes 11-13), or None."""
    required = (kernel.get(A.REQUIRED_CLUSTER_WIDTH, 0), kernel.get(A.REQUIRED_CLUSTER_HEIGHT, 0),
                kernel.get(A.REQUIRED_CLUSTER_DEPTH, 0))
    return required if all(required) else None


def _dims(values) -> str:
    return "(" + ",".join(str(v) for v in values) + ")"


def cluster_verdict(kernel: dict[int, int], cluster: tuple[int, int, int] | None, profile: DeviceProfile,
                    limits: LaunchLimits = NO_LIMITS, grid: tuple[int, int, int] | None = None,
                    unknown: frozenset[int] = frozenset()) -> tuple[CudaError | None, int | None, str | None]:
    """What does not depend on the block size or shared memory: (SUCCESS, cluster size, None) when the table
    answers; (SUCCESS, None, NO_CLUSTER) for no cluster; (error, None, why); (None, None, why) where unknown
    (`unknown`: the kernel's attributes emu does not know, kernel_attributes)."""
    table = profile.cluster_occupancy
    if table is None:
        return None, None, f"the {profile.name} profile has no measured cluster occupancy (not modelled)"
    if unknown & CLUSTER_DERIVED:
        return None, None, f"the kernel's compile-time cluster (attributes 10-13) is not known ({NO_CUBIN})"
    required = compiled_cluster(kernel)
    if required is not None:
        if cluster is not None and tuple(cluster) != required:
            return E.INVALID_CLUSTER_SIZE, None, (f"cluster {_dims(cluster)} is not the kernel's compiled-in "
                                                  f"cluster {_dims(required)}")
        cluster = required
    if cluster is None:
        if kernel.get(A.CLUSTER_SIZE_MUST_BE_SET):
            return None, None, "no cluster for a kernel whose CLUSTER_SIZE_MUST_BE_SET: not measured"
        return E.SUCCESS, None, NO_CLUSTER
    if min(cluster) < 1:
        return None, None, f"a zero cluster dimension {_dims(cluster)}: not measured"
    if grid is not None and any(g % c for g, c in zip(grid, cluster)):
        return E.INVALID_CLUSTER_SIZE, None, f"cluster {_dims(cluster)} does not divide grid {_dims(grid)}"
    size = prod(cluster)
    if not kernel.get(A.NON_PORTABLE_CLUSTER_SIZE_ALLOWED) and size > profile.portable_cluster_size:
        return E.INVALID_CLUSTER_SIZE, None, (f"a cluster of {size} blocks over the portable cluster size "
                                              f"{profile.portable_cluster_size} without NON_PORTABLE_CLUSTER_SIZE_ALLOWED")
    largest = max(table.clusters)
    if size > largest:
        return None, None, f"a cluster of {size} blocks: measured only up to {largest}"
    if limits.max_cluster_size is not None and size > limits.max_cluster_size:
        return None, None, f"a cluster of {size} blocks over the cubin's .maxclusterrank {limits.max_cluster_size}: not measured"
    return E.SUCCESS, size, None


def clusters_for(size: int, blocks_per_sm: int, profile: DeviceProfile) -> int | None:
    """The table's answer for a cluster of `size` blocks and a kernel of `blocks_per_sm` resident blocks per SM
    (None: that cell was not measured)."""
    table = profile.cluster_occupancy
    if blocks_per_sm <= 0:
        return 0
    return table.clusters[size][min(blocks_per_sm, table.blocks_per_sm_cap) - 1]


def max_active_clusters(kernel: dict[int, int], block_size: int, dynamic_smem: int,
                        cluster: tuple[int, int, int] | None, profile: DeviceProfile, device: dict[int, int],
                        carveout: int | None = None, barriers: int = 0, limits: LaunchLimits = NO_LIMITS,
                        grid: tuple[int, int, int] | None = None, unknown: frozenset[int] = frozenset()) -> ClusterAnswer:
    """cudaOccupancyMaxActiveClusters for a 1D block of `block_size` threads (and the config's grid, where given):
    (result, clusters, why)."""
    result, size, why = cluster_verdict(kernel, cluster, profile, limits, grid, unknown)
    if size is None:
        return result, (0 if why == NO_CLUSTER else None), why
    blocks, _limiter = occupancy_limit(kernel, block_size, dynamic_smem, profile, device, carveout, barriers)
    clusters = clusters_for(size, blocks, profile)
    if clusters is None:
        return None, None, unmeasured(size, [blocks])
    return E.SUCCESS, clusters, None


def unmeasured(size: int, blocks_per_sm: list[int]) -> str:
    return f"a cluster of {size} blocks at {', '.join(map(str, blocks_per_sm))} blocks per SM: not measured"
