"""`cudaOccupancyMaxActiveBlocksPerMultiprocessor` as the driver computes it.

Resident blocks per SM are the least of five limits (CUDA Occupancy Calculator; CUDA C++
Programming Guide, "Technical Specifications per Compute Capability"):
- warps: MAX_THREADS_PER_MULTIPROCESSOR / 32 over the block's warps;
- blocks: MAX_BLOCKS_PER_MULTIPROCESSOR;
- registers: each warp's registers rounded up to the allocation unit, taken from one of the
  SM's sub-partitions (as in kernel_attributes.max_threads_by_registers);
- shared memory: static + dynamic + the per-block reservation (RESERVED_SHARED_MEMORY_PER_BLOCK),
  rounded up to the allocation unit, out of the SM's shared memory configuration: the full
  MAX_SHARED_MEMORY_PER_MULTIPROCESSOR without a carveout preference, else the carveout's share
  of it rounded up to the next configuration the SM offers (and never below one block's need).
- named barriers: the SM's `barriers_per_multiprocessor` over the barriers each block uses (the
  cubin's count): measured on the H200, where 16-barrier kernels stop at 4 blocks.
`.maxntid` does not enter (the H200 answers 5 blocks of 384 threads for a kernel bounded to 256);
a block too large for the registers gets 0. Checked against every answer of
tests/data/cubin/measured_h200.jsonl and FIELD_NOTES section 7.
"""
from __future__ import annotations

from stub_models.enums import DeviceAttribute, FuncAttribute

from .kernel_attributes import WARP, registers_per_warp
from .profile import DeviceProfile

A = FuncAttribute
D = DeviceAttribute


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def shared_per_block(kernel: dict[int, int], dynamic_smem: int, profile: DeviceProfile, device: dict[int, int]) -> int:
    need = kernel[A.SHARED_SIZE_BYTES] + dynamic_smem + device.get(D.RESERVED_SHARED_MEMORY_PER_BLOCK, 0)
    return _round_up(need, profile.shared_allocation_unit)


def shared_capacity(per_block: int, carveout: int, profile: DeviceProfile, device: dict[int, int]) -> int:
    """The SM's shared memory configuration the driver picks for this kernel."""
    full = device[D.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR]
    if carveout < 0:
        return full
    wanted = max(full * carveout // 100, per_block)
    steps = [kib * 1024 for kib in profile.shared_carveout_kib if kib * 1024 <= full]
    return next((step for step in steps if step >= wanted), full)


# The limiting factors occupancy_limit names, in the order a tie is reported.
LIMITERS = ("warps", "blocks", "registers", "shared memory", "barriers")
OVER_ATTRIBUTE_8 = "dynamic shared memory over MAX_DYNAMIC_SHARED_SIZE_BYTES"


def max_active_blocks(kernel: dict[int, int], block_size: int, dynamic_smem: int, profile: DeviceProfile,
                      device: dict[int, int], carveout: int | None = None, barriers: int = 0) -> int:
    return occupancy_limit(kernel, block_size, dynamic_smem, profile, device, carveout, barriers)[0]


def occupancy_limit(kernel: dict[int, int], block_size: int, dynamic_smem: int, profile: DeviceProfile,
                    device: dict[int, int], carveout: int | None = None, barriers: int = 0) -> tuple[int, str]:
    """(resident blocks per SM, what limits them: one of LIMITERS, or OVER_ATTRIBUTE_8); a tie names the first."""
    if dynamic_smem > kernel[A.MAX_DYNAMIC_SHARED_SIZE_BYTES]:
        return 0, OVER_ATTRIBUTE_8                 # the H200 answers 0 blocks (tests/data/facts/h200 toys)
    warps = -(-block_size // WARP)
    by_warps = device[D.MAX_THREADS_PER_MULTIPROCESSOR] // WARP // warps
    by_blocks = device[D.MAX_BLOCKS_PER_MULTIPROCESSOR]
    registers = kernel[A.NUM_REGS]
    by_registers = by_blocks
    if registers:
        per_partition = device[D.MAX_REGISTERS_PER_MULTIPROCESSOR] // profile.sub_partitions
        by_registers = per_partition // registers_per_warp(registers, profile) * profile.sub_partitions // warps
    per_block = shared_per_block(kernel, dynamic_smem, profile, device)
    chosen = kernel[A.PREFERRED_SHARED_MEMORY_CARVEOUT] if carveout is None else carveout
    by_shared = shared_capacity(per_block, chosen, profile, device) // per_block if per_block else by_blocks
    by_barriers = by_blocks
    if barriers and profile.barriers_per_multiprocessor:
        by_barriers = profile.barriers_per_multiprocessor // barriers
    limits = (by_warps, by_blocks, by_registers, by_shared, by_barriers)
    least = min(limits)
    return max(0, least), LIMITERS[limits.index(least)]
