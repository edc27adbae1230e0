"""The compiled signature of a TVM-FFI export, as the object itself states it.

The DSL's generated entry quotes its signature in every argument error it raises ("... when calling:
`vec_scale(x: Tensor([n0], float32), s: float32, stream: Stream)`"), written by
`cutlass.base_dsl.tvm_ffi_builder.spec.signature`: `name: type` per parameter, where a type is a scalar
data type (`int32`, `float32`, `bool`), `Tensor([extents], dtype)` (an extent a number or a symbol shared
by every tensor that names it), `Shape([...])`, `Stream`, `DataPointer`, `None`, `Int(v)`, `Bool(v)`,
`Float(v)` or `Tuple[...]` (its elements any of these, nested: a dataclass, NamedTuple, `Tuple[X, Y]` or nested
`cute.Shape` argument).  A stream the entry asks `TVMFFIEnvGetStream` for is not a parameter.  The
string is the entry's own description, so emu reads it rather than probing; the tensors' stride order,
which it does not state, comes from the internal launch function's mangled name (`stride_order`).
"""
from __future__ import annotations

import re
from functools import lru_cache
from itertools import permutations
from typing import NamedTuple

from ..launch.mangled import MANGLED_NAME_LIMIT, layout_words

CALLING = " when calling: `"
MAX_RANK = 6                  # stride orders tried: every permutation of up to 6 modes (720)


class TvmFfiParam(NamedTuple):
    """One parameter of the compiled signature."""
    name: str
    kind: str                         # tensor, int, float, bool, stream, pointer, none, const_int, const_bool,
                                      # const_float, shape, tuple, unknown
    type_text: str                    # as the signature writes it
    dtype: str | None = None          # a tensor's or a scalar's data type
    shape: tuple[int | str, ...] = ()  # a tensor's or a Shape's extents: a number, or the symbol it shares
    value: object = None              # a constant's value
    elements: tuple["TvmFfiParam", ...] = ()   # a Tuple's elements, named `<name>[i]`


def signature_text(sections, name: str) -> str | None:
    """The signature the entry quotes, searched in the object's sections' bytes: the one of `name(...)`, else the
    only one the object holds (the DSL quotes the Python function's name: `__call__` for a class's kernel, not
    the export's); None when there is none, or several and none of `name`."""
    quoted: list[str] = []
    needle = CALLING.encode()
    for data in sections:
        at = data.find(needle)
        while at >= 0:
            end = data.find(b"`", at + len(needle))
            if end < 0:
                break
            text = data[at + len(needle):end].decode("utf-8", "replace")
            if "(" in text and text.endswith(")") and text not in quoted:
                quoted.append(text)
            at = data.find(needle, end)
    own = [text for text in quoted if text.startswith(f"{name}(")]
    return own[0] if own else quoted[0] if len(quoted) == 1 else None


_DEVICE_CHECK = re.compile(rb", expected device_type=(\w+)\0")


def expected_device_type(sections) -> str | None:
    """The device type the entry's tensor checks expect (", expected device_type=cpu"), when they expect one
    only: a tensor made from a CPU torch tensor is compiled for the CPU; None when none or several."""
    found = {m.group(1).decode() for data in sections for m in _DEVICE_CHECK.finditer(data)}
    return found.pop() if len(found) == 1 else None


def parse_signature(text: str) -> list[TvmFfiParam]:
    """The parameters of `name(a: T, ...)`; a type emu does not know is kind `unknown`, never guessed."""
    return list(_parsed(text))


@lru_cache(maxsize=256)
def _parsed(text: str) -> tuple[TvmFfiParam, ...]:
    """Read once per signature: a run calls its export as often as a scenario says."""
    body = text[text.index("(") + 1:text.rindex(")")]
    return tuple(_param(part) for part in _split(body) if part.strip())


def _split(body: str) -> list[str]:
    """`body` cut at its top-level commas (brackets and parentheses nest)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return parts


_TENSOR = re.compile(r"Tensor\(\[(?P<shape>[^\]]*)\], (?P<dtype>\w+)\)")
_CONST = re.compile(r"(?P<kind>Int|Bool|Float)\((?P<value>[^)]*)\)")
_INT = re.compile(r"u?int(8|16|32|64)")
_FLOAT = re.compile(r"(b?float(16|32|64))")


def _param(part: str) -> TvmFfiParam:
    name, _, type_text = part.strip().partition(": ")
    return _typed(name, type_text)


_SHAPE = re.compile(r"Shape\(\[(?P<shape>[^\]]*)\]\)")
_EXTENT = re.compile(r"-?\d+|[A-Za-z_][\w.\[\]]*")


def _extents(text: str) -> tuple[int | str, ...] | None:
    """`a, 4, n0` as (symbol, number, symbol); None when an extent is neither."""
    parts = [e.strip() for e in text.split(",")] if text.strip() else []
    if not all(_EXTENT.fullmatch(e) for e in parts):
        return None
    return tuple(int(e) if e.lstrip("-").isdigit() else e for e in parts)


MAX_TUPLE_DEPTH = 32          # tuples nested deeper than any compiled signature would be (the text is the object's)


def _typed(name: str, type_text: str, depth: int = 0) -> TvmFfiParam:
    """The parameter `name` of the type the signature writes `type_text` (a Tuple's elements recursively, down to
    MAX_TUPLE_DEPTH: a deeper one is `unknown`, so a hostile object's signature cannot exhaust the stack)."""
    if m := _TENSOR.fullmatch(type_text):
        extents = tuple(int(e) if e.strip().lstrip("-").isdigit() else e.strip()
                        for e in m["shape"].split(",") if e.strip())
        return TvmFfiParam(name, "tensor", type_text, m["dtype"], extents)
    if (m := _SHAPE.fullmatch(type_text)) and (extents := _extents(m["shape"])) is not None:
        return TvmFfiParam(name, "shape", type_text, shape=extents)
    if type_text.startswith("Tuple[") and type_text.endswith("]") and depth < MAX_TUPLE_DEPTH:
        inner = type_text[len("Tuple["):-1]
        parts = [part.strip() for part in _split(inner)] if inner.strip() else []
        if all(parts):
            return TvmFfiParam(name, "tuple", type_text,
                               elements=tuple(_typed(f"{name}[{i}]", part, depth + 1) for i, part in enumerate(parts)))
    if m := _CONST.fullmatch(type_text):
        raw = m["value"]
        value = {"Int": int, "Float": float}.get(m["kind"], lambda v: v == "True")(raw)
        return TvmFfiParam(name, f"const_{m['kind'].lower()}", type_text, value=value)
    simple = {"Stream": "stream", "DataPointer": "pointer", "None": "none", "bool": "bool", "handle": "pointer"}
    if type_text in simple:
        return TvmFfiParam(name, simple[type_text], type_text, type_text if type_text == "bool" else None)
    if _INT.fullmatch(type_text):
        return TvmFfiParam(name, "int", type_text, type_text)
    if _FLOAT.fullmatch(type_text):
        return TvmFfiParam(name, "float", type_text, type_text)
    return TvmFfiParam(name, "unknown", type_text)


def flat_params(params) -> list[TvmFfiParam]:
    """Every parameter with each Tuple replaced by its elements, recursively: the order the mangled name and the
    fake data addresses count tensors in."""
    return [leaf for p in params for leaf in (flat_params(p.elements) if p.kind == "tuple" else [p])]


def stride_order(internal_function: str | None, tensor_index: int, param: TvmFfiParam) -> tuple[int, ...] | None:
    """The order of the tensor's modes from fastest to slowest that its part of the mangled name allows
    (`FakeTensorFloat16div1641i64div1`: extents (div1, 64), strides (1, i64 div1): column-major, (0, 1); a tensor
    inside a dataclass argument is spelled after its field name, the next field's name run into it),
    row-major first when several do (dynamic strides are not checked, so any of them passes); None when the
    name does not say (a tensor not made fake, a name cut at 180 characters, or no order fits)."""
    rank = len(param.shape)
    if internal_function is None or rank < 2 or rank > MAX_RANK:
        return None
    tokens = re.split(r"(?=FakeTensor)", internal_function)[1:]      # a dataclass field's too: `auxFakeTensor...`
    # the DSL's mangled name `cutlass_<fn>_<args>` is what is cut (after `__cute_internal_<name>_`; an export name
    # holding `_cutlass_` makes it look longer: cut when it may be)
    mangled = "cutlass_" + internal_function.partition("_cutlass_")[2] if "_cutlass_" in internal_function \
        else internal_function
    if tensor_index >= len(tokens) or (tensor_index == len(tokens) - 1 and len(mangled) >= MANGLED_NAME_LIMIT):
        return None
    found = layout_words(tokens[tensor_index])
    if found is None:
        return None
    words, count = found
    orders = [tuple(range(rank - 1, -1, -1)), tuple(range(rank))]
    orders += [order for order in permutations(range(rank)) if order not in orders]
    texts = ["".join(words[:end]) for end in range(count, 0, -1)]    # a constexpr (`_128`) may follow its words
    if count < len(words):       # a dataclass's next field name glued to the layout: `div181i64div1alphaFloat32`
        glued = _LAYOUT_PREFIX.match(words[count])[0]
        texts += ["".join(words[:count]) + glued[:end] for end in range(len(glued), 0, -1)]
    for text in texts:
        fitting = [order for order in orders if _reads_as(text, _modes(param, order))]
        if fitting:
            return fitting[0]
    return None


_LAYOUT_PREFIX = re.compile(r"(?:i64|div\d+|\d+)*")


def tensor_orders(params: list[TvmFfiParam], internal_function: str | None) -> list[tuple[int, ...] | None]:
    """Each tensor parameter's `stride_order`, in order (tensors inside Tuples in their flattened place); a tensor
    whose part of the name is cut off or missing takes the order of the last tensor of its rank that has one (a
    GEMM's operands share their layout), else None."""
    tensors = [p for p in flat_params(params) if p.kind == "tensor"]
    orders = [stride_order(internal_function, index, param) for index, param in enumerate(tensors)]
    last: dict[int, tuple[int, ...]] = {}
    for index, param in enumerate(tensors):
        if orders[index] is None:
            orders[index] = last.get(len(param.shape))
        elif orders[index] is not None:
            last[len(param.shape)] = orders[index]
    return orders


def compact_strides(extents: list[int], order: tuple[int, ...] | None) -> list[int]:
    """The compact strides of `extents` with modes laid out fastest first in `order` (None: row-major, the
    last extent contiguous)."""
    order = tuple(range(len(extents) - 1, -1, -1)) if order is None else order
    strides, running = [0] * len(extents), 1
    for d in order:
        strides[d], running = running, running * extents[d]
    return strides


def _modes(param: TvmFfiParam, order: tuple[int, ...]) -> list[tuple[str, int | None]]:
    """What the name spells for this tensor laid out in `order`: each extent, then each stride, static
    ("s", value) or dynamic ("d", None); a stride is static when every extent inside it is."""
    static = [e if isinstance(e, int) else None for e in param.shape]
    strides: list[int | None] = [None] * len(static)
    running: int | None = 1
    for d in order:
        strides[d] = running
        running = running * static[d] if (running is not None and static[d] is not None) else None
    return [("s", v) if v is not None else ("d", None) for v in static + strides]


def _reads_as(text: str, wanted: list) -> bool:
    """Whether `text` (layout words run together) spells `wanted` exactly: a dynamic mode is `div<N>` or
    `i64div<N>` (its digits may run into the next word), a static one its number."""
    if not wanted:
        return text == ""
    kind, value = wanted[0]
    if kind == "d":
        m = re.match(r"(?:i64)?div(\d+)", text)
        return bool(m) and any(_reads_as(text[m.start(1) + n:], wanted[1:]) for n in range(1, len(m[1]) + 1))
    literal = str(value)
    return text.startswith(literal) and _reads_as(text[len(literal):], wanted[1:])
