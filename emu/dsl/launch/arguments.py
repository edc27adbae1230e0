"""Launch argument values: what the user gives, the defaults for the rest, and their bytes.

A value is given by parameter name (the brief's contract 1): a number for a scalar, an
integer for the stream or a pointer, a list for a shape-like parameter, and for a tensor
either the header struct's own fields `{data, dynamic_shapes, dynamic_strides}` or the
friendly `{shape, stride, data}` with every mode.  Defaults are what a user would accept:
extents positive and divisible by every divisibility the export declares, compact
strides, scalars 1 (or the Python default args_spec records), distinct aligned fake data
pointers, and emu's fake stream.
"""
from __future__ import annotations

import math
import re
import struct
from typing import Any

from ..header.types import SCALAR_TYPES
from .signature import LaunchParam, LaunchSignature, LaunchSignatureError, TensorLayout

TENSOR_DATA_BASE = 0xD000_0000
TENSOR_DATA_STRIDE = 0x100_0000          # 16 MiB apart: every assumed alignment holds
STREAM_HANDLE = 0x5000
POINTER_BASE = 0xE000_0000
BASE_EXTENT = 128
MAX_DIVISIBILITY = 1 << 16
_DIVISIBILITY = re.compile(r"div(\d+)")
_INT_FORMATS = {"b": 8, "h": 16, "i": 32, "q": 64}


class LaunchArgumentError(LaunchSignatureError):
    """A given launch argument does not fit the parameter it names."""


def default_extent(launch_function: str | None) -> int:
    """An extent every declared divisibility divides: lcm(128, each `div<N>` of the mangled launch name).

    The mangled name joins numbers without separators (`div16641` is divisibility 16, then 64
    and 1), so each one is read as its longest power-of-two prefix: divisibilities the DSL's
    kernels declare are powers of two.
    """
    extent = BASE_EXTENT
    for digits in _DIVISIBILITY.findall(launch_function or ""):
        best = 1
        for end in range(1, len(digits) + 1):
            value = int(digits[:end])
            if value and value & (value - 1) == 0 and value <= MAX_DIVISIBILITY:
                best = value
        extent = math.lcm(extent, best)
    return extent


def resolve(signature: LaunchSignature, given: dict[str, Any], extent: int) -> dict[str, Any]:
    """Every parameter's value in the raw form (what is written), the given ones checked."""
    names = [p.name for p in signature.params]
    unknown = [name for name, value in given.items() if name not in names and value is not None]   # null: left out
    if unknown:
        raise LaunchArgumentError(f"launch argument(s) {', '.join(unknown)} name no parameter of the wrapper "
                                  f"(it takes {', '.join(names) or 'nothing'})")
    values: dict[str, Any] = {}
    tensors = 0
    for param in signature.params:
        value = given.get(param.name)
        if param.kind == "tensor":
            values[param.name] = _tensor(param.name, param.tensor, value, tensors, extent)
            tensors += 1
        elif param.kind == "tensor_list":
            items = value if value is not None else [None] * param.count
            if not isinstance(items, list) or len(items) != param.count:
                raise LaunchArgumentError(f"{param.name} is a list of {param.count} tensors; give a list of {param.count}")
            values[param.name] = []
            for i, item in enumerate(items):
                values[param.name].append(_tensor(f"{param.name}[{i}]", param.tensor, item, tensors, extent))
                tensors += 1
        elif param.kind == "array":
            items = value if value is not None else [extent] * param.count
            if not isinstance(items, list) or len(items) != param.count or not all(_is_number(v) for v in items):
                raise LaunchArgumentError(f"{param.name} takes {param.count} number(s), not {value!r}")
            values[param.name] = [_check_scalar(f"{param.name}[{i}]", param.ctype, v) for i, v in enumerate(items)]
        elif param.kind == "stream":
            values[param.name] = _integer(param.name, STREAM_HANDLE if value is None else value, 64, unsigned=True)
        elif param.kind == "pointer":
            values[param.name] = _integer(param.name, POINTER_BASE if value is None else value, 64, unsigned=True)
        else:
            values[param.name] = _check_scalar(param.name, param.ctype, _scalar_default(param) if value is None else value)
    return values


def _scalar_default(param: LaunchParam) -> int | float:
    """1, or the plain number the Python signature gives as the default."""
    try:
        value = float(param.default) if param.default not in (None, "None") else 1.0
    except ValueError:
        return 1
    return int(value) if value.is_integer() and (param.ctype or "int").find("int") >= 0 else value


def _tensor(name: str, layout: TensorLayout, value: Any, index: int, extent: int) -> dict[str, Any]:
    value = {} if value is None else value
    if not isinstance(value, dict):
        raise LaunchArgumentError(f"{name} is a tensor: give a mapping {{data, dynamic_shapes, dynamic_strides}} "
                                  f"or {{shape, stride, data}}, not {value!r}")
    raw_keys, friendly_keys = {"dynamic_shapes", "dynamic_strides"}, {"shape", "stride"}
    extra = set(value) - raw_keys - friendly_keys - {"data"}
    if extra or (set(value) & raw_keys and set(value) & friendly_keys):
        raise LaunchArgumentError(f"{name}: give either dynamic_shapes/dynamic_strides (the header struct's fields) or "
                                  f"shape/stride (every mode), plus data; got keys {sorted(value)}")
    shapes = _pick(name, "shape", value.get("shape"), layout.shape_count) if "shape" in value else value.get("dynamic_shapes")
    strides = _pick(name, "stride", value.get("stride"), layout.stride_count) if "stride" in value else value.get("dynamic_strides")
    if shapes is None:
        shapes = [extent] * layout.shape_count
    if strides is None:
        strides = [extent ** (i + 1) for i in range(layout.stride_count)]     # compact, fastest dynamic mode first
    for field, items, count, width in (("dynamic_shapes", shapes, layout.shape_count, layout.shape_width),
                                       ("dynamic_strides", strides, layout.stride_count, layout.stride_width)):
        if not isinstance(items, list) or len(items) != count:
            raise LaunchArgumentError(f"{name}.{field} has {count} element(s) in this export, not {items!r}")
        for i, item in enumerate(items):
            _integer(f"{name}.{field}[{i}]", item, 8 * width)
    out: dict[str, Any] = {"data": _integer(f"{name}.data", value.get("data", TENSOR_DATA_BASE + index * TENSOR_DATA_STRIDE),
                                            64, unsigned=True)}
    if layout.shape_count:
        out["dynamic_shapes"] = list(shapes)
    if layout.stride_count:
        out["dynamic_strides"] = list(strides)
    return out


def _pick(name: str, what: str, modes: Any, count: int) -> list[int]:
    """The dynamic entries of a friendly shape/stride that lists every mode."""
    if not isinstance(modes, list):
        raise LaunchArgumentError(f"{name}.{what} must be a list of every mode's {what}")
    if len(modes) == count:
        return modes
    if what == "stride":
        non_unit = [m for m in modes if m != 1]
        if len(non_unit) == count:
            return non_unit
    raise LaunchArgumentError(
        f"{name}.{what} lists {len(modes)} modes but the export passes {count} dynamic one(s), and which ones are "
        f"dynamic is not recorded in the object: give dynamic_shapes/dynamic_strides (the header struct's fields) instead")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(name: str, value: Any, bits: int, unsigned: bool = False) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise LaunchArgumentError(f"{name} must be an integer, not {value!r}")
    low = 0 if unsigned else -(1 << (bits - 1))
    high = (1 << bits) - 1 if unsigned else (1 << (bits - 1)) - 1
    if not low <= value <= high and not (not unsigned and 0 <= value < 1 << bits):
        raise LaunchArgumentError(f"{name} = {value} does not fit in {bits} bits")
    return value


def _check_scalar(name: str, ctype: str | None, value: Any) -> int | float:
    fmt = _format(ctype)
    if not _is_number(value):
        raise LaunchArgumentError(f"{name} ({ctype}) must be a number, not {value!r}")
    if fmt.lower() in _INT_FORMATS:
        if not isinstance(value, int):
            raise LaunchArgumentError(f"{name} is {ctype}: give an integer, not {value!r}")
        return _integer(name, value, _INT_FORMATS[fmt.lower()], unsigned=fmt.isupper())
    return value


def _format(ctype: str | None) -> str:
    return SCALAR_TYPES.get(ctype or "int32_t", ("i", "int"))[0]


def scalar_bytes(ctype: str | None, value: int | float) -> bytes:
    fmt = _format(ctype)
    if fmt == "bf16":
        return struct.pack("<f", value)[2:]            # bfloat16: the top half of a float32 (truncated)
    if fmt.lower() in _INT_FORMATS:
        bits = _INT_FORMATS[fmt.lower()]
        return (value & ((1 << bits) - 1)).to_bytes(bits // 8, "little")
    return struct.pack("<" + fmt, value)


def tensor_bytes(layout: TensorLayout, value: dict[str, Any]) -> bytes:
    out = bytearray(layout.size)
    out[0:8] = value["data"].to_bytes(8, "little")
    for field, offset, width in (("dynamic_shapes", layout.shapes_offset, layout.shape_width),
                                 ("dynamic_strides", layout.strides_offset, layout.stride_width)):
        for i, item in enumerate(value.get(field, ())):
            start = offset + i * width
            out[start:start + width] = (item & ((1 << 8 * width) - 1)).to_bytes(width, "little")
    return bytes(out)


def shown(signature: LaunchSignature, values: dict[str, Any]) -> dict[str, Any]:
    """The values as the trace records them (the raw form, by parameter name)."""
    return {p.name: values[p.name] for p in signature.params}
