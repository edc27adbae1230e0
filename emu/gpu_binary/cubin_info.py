"""The `.nv.info` attribute records of a CUDA cubin: their numbers and how to walk them.

A `.nv.info` section (the global one, keyed by symbol index, or `.nv.info.<kernel>`) is a run
of records, each a format byte, an attribute byte and a 16-bit field; for format EIFMT_SVAL the
field is the size of the bytes that follow, for the other formats it is the value itself.
The attribute numbers are NVIDIA's `EIATTR_*` names as `cuobjdump -elf` prints them; the table
follows the order public readers of the format list them (CuAssembler's `CuNVInfo`, the nvdisasm
attribute strings), checked against the records of the committed nvidia-cutlass-dsl cubins.
Only the attributes the CUDA model reads are named; the others stay visible as comments.
"""
from __future__ import annotations

import struct
from enum import IntEnum

EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4


class EIATTR(IntEnum):
    MAX_THREADS = 0x05            # .maxntid x, y, z (u32 each, after the symbol index)
    PARAM_CBANK = 0x0A            # constant bank 0 offset/size of the parameters
    REQNTID = 0x10                # .reqntid x, y, z
    FRAME_SIZE = 0x11             # global: symbol index, per-thread frame bytes
    MIN_STACK_SIZE = 0x12         # global: symbol index, per-thread stack bytes without recursion
    KPARAM_INFO = 0x17
    CBANK_PARAM_SIZE = 0x19       # HVAL: parameter bytes
    MAXREG_COUNT = 0x1B           # HVAL: .maxnreg / launch-bounds register cap (255 = none)
    EXIT_INSTR_OFFSETS = 0x1C
    CRS_STACK_SIZE = 0x1E
    EXPLICIT_CACHING = 0x21       # NVAL: the kernel was compiled with an explicit cache mode
    MAX_STACK_SIZE = 0x23         # global: symbol index, stack bytes with recursion
    LOAD_CACHE_REQUEST = 0x26
    REGCOUNT = 0x2F               # global: symbol index, registers per thread
    CUDA_API_VERSION = 0x37       # the PTX ISA version the cubin was compiled from (0x81 = 12.9 ... )
    NUM_MBARRIERS = 0x38
    CTA_PER_CLUSTER = 0x3D        # .reqnctapercluster x, y, z
    EXPLICIT_CLUSTER = 0x3E       # NVAL: .explicitcluster (a cluster size must be given at launch)
    MAX_CLUSTER_RANK = 0x3F       # .maxclusterrank
    RESERVED_SMEM_USED = 0x41
    RESERVED_SMEM_0_SIZE = 0x42
    NUM_BARRIERS = 0x4C
    SPARSE_MMA_MASK = 0x50
    # 0x01 PAD, 0x04 CTAIDZ_USED, 0x0F EXTERNS, 0x1D S2RCTAID_INSTR_OFFSETS, 0x28 COOP_GROUP_INSTR_OFFSETS,
    # 0x2A SW1850030_WAR, 0x30 SW2393858_WAR, 0x34 INDIRECT_BRANCH_TARGETS, 0x35 SW2861232_WAR,
    # 0x36 SW_WAR, 0x39 MBARRIER_INSTR_OFFSETS, 0x45 KPARAM_INFO_V2, 0x4A VRC_CTA_INIT_COUNT,
    # 0x51 TCGEN05_1CTA_USED, 0x52 TCGEN05_2CTA_USED, 0x54 REG_RECONFIG


class NvInfoError(ValueError):
    """A `.nv.info` record runs past the end of its section."""


def nv_info_records(data: bytes) -> list[tuple[int, int, int | bytes | None]]:
    """(format, attribute, value) for each record: an int for BVAL/HVAL, bytes for SVAL, None for NVAL."""
    records, offset = [], 0
    while offset + 4 <= len(data):
        fmt, attribute, field = data[offset], data[offset + 1], struct.unpack_from("<H", data, offset + 2)[0]
        offset += 4
        if fmt == EIFMT_SVAL:
            if offset + field > len(data):
                raise NvInfoError(f"record {attribute:#x} of {field} bytes at offset {offset - 4} runs past the "
                                  f"{len(data)}-byte section")
            records.append((fmt, attribute, data[offset:offset + field]))
            offset += field
        else:
            records.append((fmt, attribute, None if fmt == EIFMT_NVAL else field))
    return records


def u32s(value: bytes) -> tuple[int, ...]:
    return struct.unpack_from(f"<{len(value) // 4}I", value)
