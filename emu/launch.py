"""Build the launch wrapper's arguments and run it, as the generated header does.

The header's `cute_dsl_<prefix>_wrapper` passes `void *args[] = {x, &stream, ..., &ret}`
to `_mlir_<prefix>__mlir_ciface_<fn>(args, n)`.  emu reads the argument list from the
header beside the object when there is one, and otherwise from the decoded `args_spec`
(never unpickled).  Tensors get a struct whose `data` is a fake device pointer (host
code never dereferences it), streams a fake stream handle, scalars zero.
"""
from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass

from .errors import ObjectFormatError

TENSOR_DATA_BASE = 0xD000_0000
TENSOR_DATA_STRIDE = 0x100_0000
STREAM_HANDLE = 0x5000
DEFAULT_EXTENT = 128


@dataclass(frozen=True)
class LaunchArg:
    name: str
    kind: str            # "tensor", "stream", "scalar"
    fields: tuple[tuple[str, str], ...] = ()   # (C type, field name) of a tensor struct


_WRAPPER = re.compile(r"cute_dsl_\w+_wrapper\(([^)]*)\)\s*\{(.*?)\n\}", re.S)
_TYPEDEF = re.compile(r"typedef struct \{([^}]*)\}\s*(\w+);", re.S)


def args_from_header(text: str, wrapper: str | None = None) -> list[LaunchArg] | None:
    """`wrapper`: the wrapper's name as the export's generation writes it (Export.header_wrapper)."""
    pattern = _WRAPPER if wrapper is None else re.compile(rf"\b{re.escape(wrapper)}\(([^)]*)\)\s*\{{(.*?)\n\}}", re.S)
    match = pattern.search(text)
    if match is None:
        return None
    structs = {name: tuple(_fields(body)) for body, name in _TYPEDEF.findall(text)}
    params = [p.strip() for p in match.group(1).split(",")][1:]          # drop the module
    types = {}
    for param in params:
        ctype, name = param.rsplit(None, 1) if " " in param else (param, param)
        types[name.lstrip("*")] = (ctype + ("*" if name.startswith("*") else "")).replace(" ", "")
    init = re.search(r"void \*args\[\d+\]\s*=\s*\{(.*?)\};", match.group(2), re.S)
    if init is None:
        return None
    out = []
    for item in (i.strip() for i in init.group(1).split(",")):
        name = item.lstrip("&")
        if name == "ret" or not item:
            continue
        ctype = types.get(name, "")
        if ctype.endswith("*") and ctype.rstrip("*") in structs:
            out.append(LaunchArg(name, "tensor", structs[ctype.rstrip("*")]))
        elif "Stream" in ctype or "stream" in ctype:
            out.append(LaunchArg(name, "stream"))
        else:
            out.append(LaunchArg(name, "scalar"))
    return out


def _fields(body: str):
    for line in body.split(";"):
        line = line.strip()
        if line:
            ctype, _, name = line.rpartition(" ")
            yield ctype.strip(), name.strip()


def args_from_spec(args_spec_text: str) -> list[LaunchArg]:
    from .args_spec import decode_args_spec
    spec = decode_args_spec(args_spec_text)
    out = []
    for param in spec.parameters:
        annotation = param.annotation or ""
        if "Constexpr" in annotation:
            continue
        kind = "tensor" if "Tensor" in annotation else "stream" if "Stream" in annotation or "CUstream" in annotation else "scalar"
        out.append(LaunchArg(param.name, kind, (("void*", "data"),) if kind == "tensor" else ()))
    return out


def launch_args(object_path: str, export, obj) -> list[LaunchArg]:
    header = os.path.splitext(object_path)[0] + ".h"
    if os.path.isfile(header):
        with open(header, encoding="utf-8", errors="replace") as handle:
            parsed = args_from_header(handle.read(), export.header_wrapper)
        if parsed is not None:
            return parsed
    spec = obj.c_string(f"{export.prefix}_args_spec")
    if spec is None:
        raise ObjectFormatError(f"cannot build launch arguments: no header {os.path.basename(header)} beside the object and no {export.prefix}_args_spec symbol", path=object_path)
    try:
        return args_from_spec(spec)
    except ValueError as error:
        raise ObjectFormatError(f"cannot build launch arguments from {export.prefix}_args_spec: {error}", path=object_path) from None


def _tensor_struct(fields, index: int) -> bytes:
    out = b""
    for ctype, name in fields:
        count = 1
        array = re.match(r"(\w+)\[(\d+)\]", name)
        if array:
            name, count = array.group(1), int(array.group(2))
        size = 8 if "*" in ctype or "64" in ctype else 4
        if "*" in ctype:
            value = TENSOR_DATA_BASE + index * TENSOR_DATA_STRIDE
        else:
            value = 1 if "stride" in name else DEFAULT_EXTENT
        out = out.ljust((len(out) + size - 1) // size * size, b"\0")
        out += struct.pack("<q" if size == 8 else "<i", value) * count
    return out.ljust(64, b"\0")


def run_launch(call, session, export, path: str) -> bool:
    """Run the launch wrapper once with fake tensors and stream; True when it returned."""
    if export.launch_function is None:
        raise ObjectFormatError(f"the export has no launch wrapper (_mlir_{export.prefix}__mlir_ciface_*)", path=path)
    from .images import load_image
    image, _ = load_image(path)
    host = session.machine.host
    pointers = []
    for index, arg in enumerate(launch_args(path, export, image.obj)):
        if arg.kind == "tensor":
            pointers.append(host.alloc(_tensor_struct(arg.fields, index)))
        elif arg.kind == "stream":
            pointers.append(host.alloc(struct.pack("<Q", STREAM_HANDLE)))
        else:
            pointers.append(host.alloc(bytes(16)))
    pointers.append(session.ret_slot)
    array = host.alloc(struct.pack(f"<{len(pointers)}Q", *pointers))
    return call("launch", [array, len(pointers)], {"num_args": len(pointers)}, packed_ret=True)
