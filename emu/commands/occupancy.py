"""`python -m emu occupancy OBJECT`: resident blocks per SM for each kernel of an export, without a GPU.

For every kernel of every export of the object, `cudaOccupancyMaxActiveBlocksPerMultiprocessor` for a
grid of block sizes x dynamic shared memory (by default the H200 probe's: emu/probe/probe_runtime.h),
as the runtime model answers it (emu.cuda.occupancy, checked against the H200's answers), with the
limiting factor of each answer.  The kernel's attributes are those the export's own loaders
(cuda_init, cuda_load) leave on device 0, the state the probe measured in: attribute 8
(MAX_DYNAMIC_SHARED_SIZE_BYTES) is what they set, or the cubin's default where they set nothing.
Each export runs on the profile whose device runs its GPU binary (`--profile` forces one); a kernel
that profile's device cannot load gets the driver's reason and no numbers.
With a cluster (`--cluster`, else the kernel's compile-time one, else the one the export's own launch asks for:
its launch run as `trace` runs it) every answer also carries
`cudaOccupancyMaxActiveClusters` (emu.cuda.cluster_occupancy: the profile's measured table; unknown where the
profile has none, the cluster is beyond it or the cell was not measured).
"""
from __future__ import annotations

import os
from typing import Literal

from pydantic import Field

from ..cache.loaded import load_image
from ..cuda.cluster_occupancy import NO_CLUSTER, cluster_verdict, clusters_for, compiled_cluster, unmeasured
from ..cuda.config import RuntimeConfig
from ..cuda.kernel_attributes import CLUSTER_DERIVED, kernel_attributes
from ..cuda.launch_checks import NO_LIMITS, launch_attributes, launch_limits
from ..cuda.loading import library_image, load_verdict
from ..cuda.object_profile import pick_profile
from ..cuda.occupancy import LIMITERS, OVER_ATTRIBUTE_8, occupancy_limit
from ..cuda.profile import PROFILES, DeviceProfile, load_profile
from ..dsl.entries import TVM_FFI_ENTRIES, EntrySpec, loaders_for_devices
from ..errors import BadInput, EmuError
from ..run.session import run_object
from ..support.model import Model, empty_list
from .check_findings import cuda_error_label
from .occupancy_map import legend, map_lines, wants_map
from stub_models.enums import DeviceAttribute, FuncAttribute, LaunchAttributeID

DEFAULT_BLOCKS = tuple(range(32, 1025, 32))
DEFAULT_SMEM = (0, 1024, 16384, 49152, 100000, 232448)
MAX_BLOCK = 1024                  # threads in a block on every profile (MAX_THREADS_PER_BLOCK)
CODES = {"warps": "W", "blocks": "B", "registers": "R", "shared memory": "S", "barriers": "N", OVER_ATTRIBUTE_8: "X"}
LOADERS = ("cuda_init", "cuda_load")
A = FuncAttribute


class OccupancyAnswer(Model):
    block_size: int = Field(description="threads per block asked")
    dynamic_smem: int = Field(description="dynamic shared memory per block asked, in bytes")
    blocks: int = Field(description="cudaOccupancyMaxActiveBlocksPerMultiprocessor: resident blocks per SM")
    limiter: str = Field(description=f"what limits them: one of {', '.join(LIMITERS)}, or '{OVER_ATTRIBUTE_8}' "
                         "(the answer is then 0)")
    active_warps: int = Field(description="blocks x warps per block")
    occupancy_percent: float = Field(description="active warps over the SM's maximum, in percent (one decimal)")
    clusters: int | None = Field(default=None, description="cudaOccupancyMaxActiveClusters for the kernel's `cluster`: "
                                 "the most clusters resident on the device at once; null where not answered (no "
                                 "cluster, the driver's error in cluster_error, or unknown: cluster_unknown)")


class KernelOccupancy(Model):
    kernel: str = Field(description="kernel name")
    load_error: str | None = Field(default=None, description="why the profile's device cannot load this kernel "
                                   "(then no numbers); null when it loads")
    registers: int | None = Field(default=None, description="NUM_REGS (attribute 4) per thread")
    static_shared: int | None = Field(default=None, description="SHARED_SIZE_BYTES (attribute 1), in bytes")
    barriers: int | None = Field(default=None, description="named barriers a block uses (the cubin's count)")
    max_dynamic_shared: int | None = Field(default=None, description="MAX_DYNAMIC_SHARED_SIZE_BYTES (attribute 8) assumed")
    max_dynamic_shared_source: Literal["loaders", "as loaded"] | None = Field(
        default=None, description="loaders: the value the export's loaders set; as loaded: the cubin's default, "
        "which they left unchanged")
    carveout: int | None = Field(default=None, description="PREFERRED_SHARED_MEMORY_CARVEOUT (attribute 9) the answers "
                                 "assume: the one asked, else as the loaders left it")
    unknown: list[str] = Field(default_factory=empty_list, description="attributes emu cannot know for this kernel "
                               "(no cubin for the device); the answers then rest on the profile's defaults")
    cluster: tuple[int, int, int] | None = Field(default=None, description="the cluster (x, y, z) the answers' "
                                                 "`clusters` are for; null: none asked, compiled in or launched")
    cluster_source: Literal["given", "compiled in", "launch"] | None = Field(
        default=None, description="given: --cluster; compiled in: the kernel's compile-time cluster (attributes 11-13); "
        "launch: the cluster the export's own launch asks for (its launch run as `trace` runs it, default arguments)")
    cluster_error: str | None = Field(default=None, description="the driver's error for this cluster on this kernel "
                                      "(number, name and why); the answers' clusters are then null")
    cluster_unknown: str | None = Field(default=None, description="why emu cannot answer cluster occupancy here (a "
                                        "profile without a measured table, a cluster beyond the measured sizes), or "
                                        "for some answers (the blocks per SM the table was not measured at)")
    answers: list[OccupancyAnswer] = Field(default_factory=empty_list, description="one per block size x dynamic "
                                           "shared memory, block sizes first")


class ExportOccupancy(Model):
    object: str = Field(description="the object's path")
    export: str = Field(description="the export's prefix")
    profile: str = Field(description="the device profile answered for")
    profile_source: Literal["given", "chosen", "default"] = Field(
        description="given: --profile; chosen: the first profile whose device runs the GPU binary; default: none does")
    measured: bool = Field(description="true when the profile was measured on the device (h200); false: the answers "
                           "rest on published figures")
    basis: str = Field(description="what the answers rest on, in words")
    kernels: list[KernelOccupancy] = Field(default_factory=empty_list, description="its kernels, in kernel_info order")


class OccupancyResult(Model):
    exports: list[ExportOccupancy] = Field(default_factory=empty_list, description="every export of the object")


def occupancy_object(path: str, kernel: str | None = None, block_sizes=None, dynamic_smem=None,
                     carveout: int | None = None, profile: str | None = None, cluster=None) -> OccupancyResult:
    """The occupancy of every kernel (or the one named `kernel`) of every export of the object at `path`;
    `cluster` (x[, y[, z]]) asks cudaOccupancyMaxActiveClusters for that cluster (default: the compile-time one, else
    the one the export's launch asks for)."""
    blocks = _checked(DEFAULT_BLOCKS if block_sizes is None else block_sizes, "block size", 1, MAX_BLOCK)
    smem = _checked(DEFAULT_SMEM if dynamic_smem is None else dynamic_smem, "dynamic shared memory", 0, 1 << 31)
    if cluster is not None:
        cluster = _checked(cluster, "cluster dimension", 1, MAX_BLOCK)
        if len(cluster) > 3:
            raise BadInput(f"cluster: {len(cluster)} dimensions given, at most 3 (x,y,z)")
        cluster = cluster + (1,) * (3 - len(cluster))
    if carveout is not None and not -1 <= carveout <= 100:
        raise BadInput(f"carveout: {carveout} is not a PREFERRED_SHARED_MEMORY_CARVEOUT the driver accepts (-1 to 100)")
    if profile is not None and profile not in PROFILES:
        raise BadInput(f"profile: {profile!r} is not one of {', '.join(PROFILES)}")
    image, exports = load_image(os.fspath(path))
    if kernel is not None:
        names = [name for export in exports for name in export.kernels]
        if kernel not in names:
            from ..scenario.names import nearest
            raise BadInput(f"no kernel {kernel!r} in the object{nearest(kernel, names, 'its kernels')}", path=os.fspath(path))
    return OccupancyResult(exports=[
        _export(os.fspath(path), image, export, len(exports) > 1, kernel, (blocks, smem, carveout, cluster), profile)
        for export in exports if kernel is None or kernel in export.kernels])


def _checked(values, what: str, low: int, high: int) -> tuple[int, ...]:
    values = tuple(values)
    if not values:
        raise BadInput(f"{what}: give at least one")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise BadInput(f"{what}: {value!r} is not a whole number from {low} to {high}")
    return values


def _export(path: str, image, export, several: bool, kernel: str | None, asked: tuple, given) -> ExportOccupancy:
    used, source = pick_profile(image, export, given)
    profile = load_profile(used)
    error, facts = load_verdict(library_image(image, export.binary), profile)
    wanted = [name for name in export.kernels if kernel in (None, name)]
    if error is not None:
        kernels = [KernelOccupancy(kernel=name, load_error=error) for name in wanted]
    else:
        run = run_object(path, RuntimeConfig(profile=used, device_count=1), [EntrySpec(name=n) for n in LOADERS],
                         export=export.name if several else None)
        states = {state.name: state for state in run.state.kernels}
        why = run.state.load_error or _loaders_failed(run)
        launched = launched_clusters(path, used, export, several) if asked[3] is None else {}
        kernels = [_kernel(name, states.get(name), facts, profile, asked, why, launched.get(name)) for name in wanted]
    return ExportOccupancy(object=path, export=export.prefix, profile=used, profile_source=source,
                           measured=profile.measured, basis=basis(profile), kernels=kernels)


def launched_clusters(path: str, profile: str, export, several: bool) -> dict[str, tuple[int, int, int]]:
    """Kernel name -> the cluster the export's own launch asks for, run as `trace` runs it (default arguments);
    nothing where that run stops before a launch the runtime accepts."""
    entries = TVM_FFI_ENTRIES if export.ffi_name else loaders_for_devices(1) + [EntrySpec(name="launch")]
    try:
        run = run_object(path, RuntimeConfig(profile=profile, device_count=1), entries,
                         export=export.name if several else None)
    except EmuError:
        return {}
    found: dict[str, tuple[int, int, int]] = {}
    for launch in run.state.launches:
        cluster = launch_attributes(launch.attrs).get(LaunchAttributeID.CLUSTER_DIMENSION)
        if cluster is not None:
            found.setdefault(launch.kernel, tuple(cluster))
    return found


def basis(profile: DeviceProfile) -> str:
    if profile.measured:
        return f"the {profile.name} profile, measured on an {profile.device_name}; the occupancy rules are checked " \
               "against its answers"
    return f"the {profile.name} profile ({profile.device_name}), measured: false: published figures, not measured " \
           "on the device"


def _loaders_failed(run) -> str:
    if run.fault is not None:
        return f"the loaders stopped: {run.fault}"
    failed = [f"{entry.entry} returned {entry.returned}" for entry in run.entries if entry.returned]
    return f"the loaders did not load it ({', '.join(failed) or 'no cudaLibraryGetKernel for it'})"


def _kernel(name: str, state, facts: dict, profile: DeviceProfile, asked: tuple, why: str,
            launched: tuple[int, int, int] | None) -> KernelOccupancy:
    blocks, smem, carveout, cluster = asked
    attributes = state.devices.get("0") if state is not None else None
    if not attributes:
        return KernelOccupancy(kernel=name, load_error=why)
    values = {int(A[attribute]): value for attribute, value in attributes.items()}
    fact = facts.get(name, facts.get("*"))
    limits = launch_limits(fact.cubin) if fact is not None and fact.cubin is not None else NO_LIMITS
    barriers = limits.barriers
    clustering = _cluster_fields(values, cluster, profile, limits, launched,
                                 frozenset(int(A[attribute]) for attribute in state.unknown))
    size = clustering.pop("size")
    loaded = kernel_attributes(fact, profile, profile.device_attributes, {}).values if fact is not None else {}
    device = profile.device_attributes
    sm_warps = device[DeviceAttribute.MAX_THREADS_PER_MULTIPROCESSOR] // 32
    answers = []
    for block in blocks:
        for dynamic in smem:
            count, limiter = occupancy_limit(values, block, dynamic, profile, device, carveout, barriers)
            warps = count * -(-block // 32)
            answers.append(OccupancyAnswer(block_size=block, dynamic_smem=dynamic, blocks=count, limiter=limiter,
                                           active_warps=warps, occupancy_percent=round(100 * warps / sm_warps, 1),
                                           clusters=None if size is None else clusters_for(size, count, profile)))
    gaps = sorted({a.blocks for a in answers if size is not None and a.clusters is None})
    if gaps:
        clustering["cluster_unknown"] = unmeasured(size, gaps) + " (those answers' clusters null)"
    attribute_8 = values[A.MAX_DYNAMIC_SHARED_SIZE_BYTES]
    return KernelOccupancy(
        kernel=name, registers=values[A.NUM_REGS], static_shared=values[A.SHARED_SIZE_BYTES], barriers=barriers,
        max_dynamic_shared=attribute_8,
        max_dynamic_shared_source="as loaded" if loaded.get(A.MAX_DYNAMIC_SHARED_SIZE_BYTES) == attribute_8 else "loaders",
        carveout=values[A.PREFERRED_SHARED_MEMORY_CARVEOUT] if carveout is None else carveout,
        unknown=list(state.unknown), answers=answers, **clustering)


def _cluster_fields(values: dict[int, int], cluster, profile: DeviceProfile, limits, launched=None,
                    unknown: frozenset[int] = frozenset()) -> dict:
    """KernelOccupancy's cluster fields, and `size`: the cluster size the table answers for (None: no answers).
    The cluster: the one asked, else the compile-time one, else the one the export's launch asks for (`unknown`:
    the kernel's attributes emu does not know; an unknown compile-time cluster leaves the answer unknown)."""
    compiled = compiled_cluster(values)
    source = "given" if cluster else "compiled in" if compiled else "launch" if launched else None
    if source is None:
        if unknown & CLUSTER_DERIVED:        # a compile-time cluster emu cannot see may be there
            return {"size": None, "cluster_unknown": cluster_verdict(values, None, profile, limits, unknown=unknown)[2]}
        return {"size": None}
    cluster = cluster or (None if compiled else launched)
    result, size, why = cluster_verdict(values, cluster, profile, limits, unknown=unknown)
    fields = {"size": size, "cluster": cluster or compiled, "cluster_source": source}
    if result is None:
        fields["cluster_unknown"] = why
    elif why is not None and why != NO_CLUSTER:
        fields["cluster_error"] = f"{cuda_error_label(result)}: {why}"
    return fields


def show_occupancy(result: OccupancyResult) -> list[str]:
    """The readable table: per kernel, block sizes down, dynamic shared memory across, blocks and limiter code."""
    lines = []
    for export in result.exports:
        how = {"given": "given", "chosen": "its device runs the GPU binary", "default": "no profile runs the GPU binary"}
        lines.append(f"{export.object}: export {export.export}, profile {export.profile} ({how[export.profile_source]})")
        lines.append(f"  answers rest on {export.basis}" if export.measured else f"  NOT MEASURED: answers rest on {export.basis}")
        for kernel in export.kernels:
            lines += [""] + _kernel_lines(kernel)
        lines.append("")
    letters = ", ".join(f"{code} {name}" for name, code in CODES.items())
    grids = [len({a.block_size for a in k.answers}) for e in result.exports for k in e.kernels if k.answers]
    if grids and all(wants_map(count) for count in grids):
        return lines + [legend(f"({letters})")]
    return lines + [f"cells: resident blocks per SM and what limits them ({letters})"]


def _cluster_line(kernel: KernelOccupancy) -> str:
    """The kernel's cudaOccupancyMaxActiveClusters: one number per blocks-per-SM count its cells show."""
    head = f"    cluster {'x'.join(map(str, kernel.cluster))} ({kernel.cluster_source}): max active clusters"
    if kernel.cluster_error is not None:
        return f"{head}: error {kernel.cluster_error}"
    if kernel.cluster_unknown is not None and all(a.clusters is None for a in kernel.answers):
        return f"{head} unknown: {kernel.cluster_unknown}"
    runs: list[tuple[int | None, list[int]]] = []           # neighbouring counts that answer alike (past the cap)
    for blocks, clusters in sorted({(a.blocks, a.clusters) for a in kernel.answers}):
        if runs and runs[-1][0] == clusters:
            runs[-1][1].append(blocks)
        else:
            runs.append((clusters, [blocks]))
    cells = [f"{b[0]}{'' if len(b) == 1 else f' to {b[-1]}'} -> {'unknown' if clusters is None else clusters}"
             for clusters, b in runs]
    return f"{head} (cudaOccupancyMaxActiveClusters) for the cells' blocks per SM: " + ", ".join(cells)


def _kernel_lines(kernel: KernelOccupancy) -> list[str]:
    if kernel.load_error is not None:
        return [f"  kernel {kernel.kernel}", f"    cannot load: {kernel.load_error}"]
    source = "as the loaders set it" if kernel.max_dynamic_shared_source == "loaders" else "as loaded, the loaders left it"
    lines = [f"  kernel {kernel.kernel}",
             f"    {kernel.registers} registers/thread, {kernel.static_shared} B static shared memory, "
             f"{kernel.barriers} named barriers, attribute 8 (MAX_DYNAMIC_SHARED_SIZE_BYTES) {kernel.max_dynamic_shared} "
             f"({source}), carveout {kernel.carveout}"]
    if kernel.unknown:
        lines.append(f"    unknown (profile defaults used): {', '.join(kernel.unknown)}")
    if kernel.cluster is not None:
        lines.append(_cluster_line(kernel))
    elif kernel.cluster_unknown is not None:
        lines.append(f"    cluster: max active clusters unknown: {kernel.cluster_unknown}")
    if wants_map(len({a.block_size for a in kernel.answers})):
        return lines + map_lines(kernel.answers, CODES)
    smem = sorted({a.dynamic_smem for a in kernel.answers})
    cells = {(a.block_size, a.dynamic_smem): a for a in kernel.answers}
    lines.append("    block \\ dynamic smem " + "".join(f"{s:>8}" for s in smem))
    for block in sorted({a.block_size for a in kernel.answers}):
        row = "".join(f"{cells[block, s].blocks:>7}{CODES[cells[block, s].limiter]}" for s in smem)
        best = max(cells[block, s].occupancy_percent for s in smem)
        lines.append(f"    {block:>21} {row}   (up to {best:g}% occupancy)")
    return lines
