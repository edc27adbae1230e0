"""Decoders for the CUDA structs stubs receive by pointer (`cudaLaunchConfig_t`, `cudaLaunchAttribute`).

Layouts as CUDA 13.0's driver_types.h declares them, the same on x86-64 and AArch64:
`cudaLaunchConfig_t` is 56 bytes (gridDim @0, blockDim @12, dynamicSmemBytes @24, stream
@32, attrs @40, numAttrs @48), `cudaLaunchAttribute` 72 (id @0, a 64-byte value union @8).

Only the fields a launch attribute uses are read: the rest of its 64-byte value union is
uninitialised stack in real exports and must not reach a trace.
"""
from __future__ import annotations

import struct
from typing import Any, Callable

from stub_models.enums import LaunchAttributeID

L = LaunchAttributeID
MAX_LAUNCH_ATTRIBUTES = 64
LAUNCH_CONFIG_SIZE = 56
LAUNCH_ATTRIBUTE_SIZE = 72

# attribute id -> (struct format of the used fields at value offset 8, field names)
_ATTRIBUTE_FIELDS: dict[int, tuple[str, tuple[str, ...]]] = {
    L.ACCESS_POLICY_WINDOW: ("<QQfii", ("base_ptr", "num_bytes", "hitRatio", "hitProp", "missProp")),
    L.COOPERATIVE: ("<i", ("cooperative",)),
    L.SYNCHRONIZATION_POLICY: ("<i", ("syncPolicy",)),
    L.CLUSTER_DIMENSION: ("<III", ("x", "y", "z")),
    L.CLUSTER_SCHEDULING_POLICY_PREFERENCE: ("<i", ("clusterSchedulingPolicyPreference",)),
    L.PROGRAMMATIC_STREAM_SERIALIZATION: ("<i", ("programmaticStreamSerializationAllowed",)),
    L.PROGRAMMATIC_EVENT: ("<QIi", ("event", "flags", "triggerAtBlockStart")),
    L.PRIORITY: ("<i", ("priority",)),
    L.MEM_SYNC_DOMAIN_MAP: ("<BB", ("default_", "remote")),
    L.MEM_SYNC_DOMAIN: ("<i", ("memSyncDomain",)),
    L.PREFERRED_CLUSTER_DIMENSION: ("<III", ("x", "y", "z")),
    L.LAUNCH_COMPLETION_EVENT: ("<QI", ("event", "flags")),
    L.DEVICE_UPDATABLE_KERNEL_NODE: ("<i4xQ", ("deviceUpdatable", "devNode")),   # devNode is 8-aligned
    L.PREFERRED_SHARED_MEMORY_CARVEOUT: ("<I", ("sharedMemCarveout",)),
}


def decode_launch_attribute(raw: bytes) -> dict[str, Any]:
    attribute_id, = struct.unpack_from("<I", raw, 0)
    try:
        name = L(attribute_id).name
    except ValueError:
        return {"id": attribute_id, "name": None, "value": {}}
    fmt, names = _ATTRIBUTE_FIELDS.get(attribute_id, ("", ()))
    values = dict(zip(names, struct.unpack_from(fmt, raw, 8))) if fmt else {}
    return {"id": attribute_id, "name": name, "value": values}


def decode_launch_config(read: Callable[[int, int], bytes], address: int) -> dict[str, Any]:
    raw = read(address, LAUNCH_CONFIG_SIZE)
    grid = list(struct.unpack_from("<III", raw, 0))
    block = list(struct.unpack_from("<III", raw, 12))
    smem, stream, attrs, count = struct.unpack_from("<QQQI", raw, 24)
    if count > MAX_LAUNCH_ATTRIBUTES:
        raise ValueError(f"cudaLaunchConfig_t at {address:#x} claims {count} launch attributes (more than {MAX_LAUNCH_ATTRIBUTES})")
    table = read(attrs, LAUNCH_ATTRIBUTE_SIZE * count) if count else b""
    attributes = [decode_launch_attribute(table[i * LAUNCH_ATTRIBUTE_SIZE:(i + 1) * LAUNCH_ATTRIBUTE_SIZE]) for i in range(count)]
    return {"gridDim": grid, "blockDim": block, "dynamicSmemBytes": smem, "stream": stream,
            "numAttrs": count, "attrs": attributes}


DECODERS: dict[str, Callable[[Callable[[int, int], bytes], int], Any]] = {
    "cudaLaunchConfig_t": decode_launch_config,
}
