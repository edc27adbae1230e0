"""A loaded kernel's CUfunction_attribute values on a device, derived the way the driver does.

From the cubin (emu/gpu_binary/cubin.py) and the device profile:
- NUM_REGS: the cubin's register count.
- MAX_THREADS_PER_BLOCK: the device's limit, lowered by `.maxntid` and by registers: a warp's
  registers are allocated in units of `register_allocation_unit` (256 = 8 per thread) from one
  of the SM's `sub_partitions` (4) quarters of the register file, so a block may hold
  4 * floor(65536 / 4 / (32 * regs rounded up to 8)) warps. This gives every H200 answer in
  FIELD_NOTES section 7 (1024 at <= 64 registers, 768 at 80, 640 at 89-96, 512 at 128,
  384 at 154-168, 256 at 232). `.reqntid` does not lower it (the H200 answered 1024 for the
  DSL kernels, whose cubins carry reqntid 128).
- SHARED_SIZE_BYTES: `.nv.shared.<kernel>` less the block's reserved window where the cubin
  lays it out there (sm_90 on; the H200 answered 0 for DSL kernels whose section is 1024 bytes,
  its RESERVED_SHARED_MEMORY_PER_BLOCK).
- CONST_SIZE_BYTES: the kernel's own constant banks; LOCAL_SIZE_BYTES: its per-thread stack.
- PTX_VERSION / BINARY_VERSION: the virtual and real architecture numbers (90 for sm_90a).
- REQUIRED_CLUSTER_*, CLUSTER_SIZE_MUST_BE_SET: `.reqnctapercluster` and `.explicitcluster`.
- MAX_DYNAMIC_SHARED_SIZE_BYTES: CUDA's documented default, 48 KiB less static shared memory.
A scenario's `kernel_attributes` overrides any of them.  Without a cubin emu can read (NO_CUBIN) those from the
cubin, the compile-time cluster among them, are the profile's defaults and marked unknown.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from stub_models.enums import DeviceAttribute, FuncAttribute, enum_label

from .profile import DeviceProfile

if TYPE_CHECKING:
    from .loading import KernelFacts

A = FuncAttribute
D = DeviceAttribute
WARP = 32
DEFAULT_DYNAMIC_SHARED_LIMIT = 48 * 1024
# Why a kernel's cubin-derived attributes are unknown (the words every answer resting on them gives).
NO_CUBIN = "no cubin emu can read: PTX the driver compiles, or a cubin compressed or laid out in a form emu cannot read"
# The compile-time cluster (`.reqnctapercluster`, `.explicitcluster` in the cubin): known only from a cubin.
CLUSTER_DERIVED = frozenset({A.CLUSTER_SIZE_MUST_BE_SET, A.REQUIRED_CLUSTER_WIDTH, A.REQUIRED_CLUSTER_HEIGHT,
                             A.REQUIRED_CLUSTER_DEPTH})
CUBIN_DERIVED = frozenset({A.MAX_THREADS_PER_BLOCK, A.SHARED_SIZE_BYTES, A.CONST_SIZE_BYTES, A.LOCAL_SIZE_BYTES,
                           A.NUM_REGS, A.PTX_VERSION, A.BINARY_VERSION, A.CACHE_MODE_CA}) | CLUSTER_DERIVED


@dataclass(frozen=True)
class KernelAttributes:
    values: dict[int, int]
    unknown: frozenset[int]


def attribute_name(attribute: int) -> str | None:
    """The cudaFuncAttribute's name without its prefix (MAX_DYNAMIC_SHARED_SIZE_BYTES), None for an unknown number."""
    return enum_label(FuncAttribute, attribute).partition(" ")[2] or None


def registers_per_warp(registers: int, profile: DeviceProfile) -> int:
    unit = profile.register_allocation_unit
    return -(-registers * WARP // unit) * unit


def max_threads_by_registers(registers: int, profile: DeviceProfile, device_attributes: dict[int, int]) -> int:
    limit = device_attributes[D.MAX_THREADS_PER_BLOCK]
    if registers <= 0:
        return limit
    per_partition = device_attributes[D.MAX_REGISTERS_PER_MULTIPROCESSOR] // profile.sub_partitions
    warps = per_partition // registers_per_warp(registers, profile) * profile.sub_partitions
    return min(limit, warps * WARP)


def kernel_attributes(facts: "KernelFacts | None", profile: DeviceProfile, device_attributes: dict[int, int],
                      overrides: dict[int, int]) -> KernelAttributes:
    values = {int(a): 0 for a in FuncAttribute if int(a) not in profile.kernel_unsupported}
    values.update(profile.kernel_read_only)
    unknown: set[int] = set()
    cubin = facts.cubin if facts is not None else None
    if cubin is not None:
        values.update(_from_cubin(cubin, profile, device_attributes))
        values[A.BINARY_VERSION] = facts.binary_version or 0
    else:
        unknown |= CUBIN_DERIVED
        if facts is not None and facts.binary_version is not None:
            values[A.BINARY_VERSION] = facts.binary_version
            unknown.discard(A.BINARY_VERSION)
    if facts is not None and facts.ptx_version is not None:
        values[A.PTX_VERSION] = facts.ptx_version
        unknown.discard(A.PTX_VERSION)
    elif facts is not None:
        unknown.add(A.PTX_VERSION)
    values.update(profile.kernel_settable_defaults)
    if cubin is not None:
        values.update(_cluster_defaults(cubin))
    static = overrides.get(A.SHARED_SIZE_BYTES, values[A.SHARED_SIZE_BYTES])
    values[A.MAX_DYNAMIC_SHARED_SIZE_BYTES] = max(0, DEFAULT_DYNAMIC_SHARED_LIMIT - static)
    values.update(overrides)
    return KernelAttributes(values, frozenset(unknown - set(overrides)))


def _from_cubin(cubin, profile: DeviceProfile, device_attributes: dict[int, int]) -> dict[int, int]:
    max_threads = max_threads_by_registers(cubin.registers, profile, device_attributes)
    if cubin.max_threads is not None:
        x, y, z = cubin.max_threads
        max_threads = min(max_threads, x * y * z)
    shared = cubin.shared_section_bytes
    reserved = device_attributes.get(D.RESERVED_SHARED_MEMORY_PER_BLOCK, 0)
    if cubin.reserved_window and shared >= reserved:
        shared -= reserved
    return {A.MAX_THREADS_PER_BLOCK: max_threads, A.SHARED_SIZE_BYTES: shared, A.CONST_SIZE_BYTES: cubin.const_bytes,
            A.LOCAL_SIZE_BYTES: max(cubin.min_stack_bytes, cubin.frame_bytes), A.NUM_REGS: cubin.registers,
            A.CACHE_MODE_CA: 0}


def _cluster_defaults(cubin) -> dict[int, int]:
    x, y, z = cubin.cluster_dims or (0, 0, 0)
    return {A.REQUIRED_CLUSTER_WIDTH: x, A.REQUIRED_CLUSTER_HEIGHT: y, A.REQUIRED_CLUSTER_DEPTH: z,
            A.CLUSTER_SIZE_MUST_BE_SET: int(cubin.explicit_cluster)}
