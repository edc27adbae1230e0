"""The CuTe DSL's launch ABI: `_mlir_<prefix>__mlir_ciface_<fn>(void **args, int32_t num_args)`.

The header's wrapper passes `void *args[] = {a, &n, &stream, ..., &ret}`: a pointer to each
value, written with the header's layout (a list's or Shape's elements each in a slot of their
own), and last the int32 the wrapper returns, which the entry stores.  What the signature is
and which values fill it is the DSL's to say (emu.dsl.launch.plan).
"""
from __future__ import annotations

import struct
from typing import Any

from ..dsl.launch.arguments import scalar_bytes, tensor_bytes
from ..dsl.launch.plan import launch_plan
from ..dsl.launch.signature import LaunchSignature
from ..errors import ObjectFormatError
from .base import EntryArguments, GuestMemory, LaunchAbi, LaunchPlan, LaunchSite


class CifaceAbi(LaunchAbi):
    name = "ciface"

    def plan(self, site: LaunchSite, given: dict[str, Any] | None) -> LaunchPlan:
        if site.export.launch_function is None:
            raise ObjectFormatError(f"the export has no launch wrapper (_mlir_{site.export.prefix}__mlir_ciface_*)",
                                    path=site.path)
        return launch_plan(site, given)

    def marshal(self, plan: LaunchPlan, memory: GuestMemory, outcome_slot: int) -> EntryArguments:
        """`void *args[]` in memory, its last slot `outcome_slot` (-1 until the entry stores its result)."""
        pointers = pack_arguments(plan.signature, plan.values, memory, outcome_slot)
        array = memory.alloc(struct.pack(f"<{len(pointers)}Q", *pointers))
        memory.write(outcome_slot, struct.pack("<i", -1))
        return EntryArguments([array, len(pointers)], {"num_args": len(pointers)}, outcome_slot)

    def outcome(self, memory: GuestMemory, arguments: EntryArguments, returned: int | None) -> int | None:
        """The int32 the entry stored through the ret slot (the entry itself returns nothing)."""
        return struct.unpack("<i", memory.read(arguments.outcome_at, 4))[0]


def pack_arguments(signature: LaunchSignature, values: dict[str, Any], host: GuestMemory, ret_slot: int) -> list[int]:
    """Write each value with the header's layout; the pointers `void *args[]` holds, in order."""
    written: dict[str, Any] = {}
    for param in signature.params:
        value = values[param.name]
        if param.kind == "tensor":
            written[param.name] = host.alloc(tensor_bytes(param.tensor, value))
        elif param.kind == "tensor_list":
            size = param.tensor.size
            body = b"".join(tensor_bytes(param.tensor, item) for item in value)
            body += struct.pack("<i", len(value))
            written[param.name] = host.alloc(body.ljust(param.list_size or len(body), b"\0"))
            written[param.name + "#stride"] = size
        elif param.kind == "array":
            width = len(scalar_bytes(param.ctype, 0))
            written[param.name] = host.alloc(b"".join(scalar_bytes(param.ctype, v) for v in value))
            written[param.name + "#stride"] = width
        elif param.kind in ("stream", "pointer"):
            written[param.name] = host.alloc(struct.pack("<Q", value))
        else:
            written[param.name] = host.alloc(scalar_bytes(param.ctype, value).ljust(8, b"\0"))
    pointers = []
    for name, how, index in signature.slots:
        if how == "ret":
            pointers.append(ret_slot)
        elif how in ("element", "list_element"):
            pointers.append(written[name] + index * written[name + "#stride"])
        else:
            pointers.append(written[name])
    return pointers


CIFACE = CifaceAbi()
