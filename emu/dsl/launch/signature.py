"""What the launch wrapper takes: one description from the header or from `args_spec`.

The header (parsed in emu.dsl.header.parse) says everything: each parameter's C type, each tensor
struct's fields with their widths, and how `void *args[]` is filled.  `args_spec` says
only names, kinds and defaults, so without the header a tensor's dynamic fields come from
the arguments the user gives (`dynamic_shapes`/`dynamic_strides` lists) and their widths
from the DSL's rule (32-bit extents unless declared 64-bit, 64-bit strides unless
`use_32bit_stride`), refined by the `i64` markers of the mangled launch-function name.
When both are there they are compared, and a disagreement is an error.
"""
from __future__ import annotations

import re
from typing import Callable, NamedTuple

from ..args_spec.model import ArgSpec
from ...errors import ObjectFormatError
from ..header.types import SCALAR_TYPES, HeaderSignature
from .discovery import SlotReads, slots_fit
from .tensor_struct import POINTER_SIZE, TensorLayout
from .mangled import tensor_tokens
from .optionals import omitted_options


# The DSL's numeric annotations and the C type its header writes for each (CHeaderGenerator.numeric_to_c_type).
ANNOTATION_C_TYPES = {"Int8": "int8_t", "Int16": "int16_t", "Int32": "int32_t", "Int64": "int64_t",
                      "Uint8": "uint8_t", "Uint16": "uint16_t", "Uint32": "uint32_t", "Uint64": "uint64_t",
                      "Boolean": "uint8_t", "Float32": "float", "TFloat32": "float", "Float64": "double",
                      "Float16": "__half_raw", "BFloat16": "__nv_bfloat16"}
_ALGEBRA = {"Shape", "Stride", "IntTuple", "Coord", "Tile", "Layout"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class LaunchSignatureError(ObjectFormatError):
    """The launch arguments cannot be described, or the header and args_spec disagree."""


class LaunchParam(NamedTuple):
    name: str
    kind: str                   # "tensor", "tensor_list", "scalar", "stream", "pointer", "array"; "unknown": to be read
    ctype: str | None = None    # scalar / array element C type
    tensor: TensorLayout | None = None      # None for a tensor: its struct is to be read from the launch code
    count: int | None = None    # elements of a tensor list or array
    list_size: int | None = None        # bytes of a tensor-list struct
    default: str | None = None  # args_spec's rendering of a default value


class LaunchSignature(NamedTuple):
    source: str                                  # "header" or "args_spec"
    params: tuple[LaunchParam, ...]
    slots: tuple[tuple[str, str, int], ...]      # (parameter, how, index) for each args[] entry, ret last

    def param(self, name: str) -> LaunchParam:
        return next(p for p in self.params if p.name == name)

    def unread(self) -> list[str]:
        """Parameters whose kind, tensor struct or length only the launch code can tell (emu.dsl.launch.discovery)."""
        return [p.name for p in self.params if p.kind == "unknown" or (p.kind in ("tensor", "tensor_list") and p.tensor is None)
                or (p.kind in ("array", "tensor_list") and p.count is None)]

    def replaced(self, params: dict[str, LaunchParam], source: str) -> "LaunchSignature":
        return LaunchSignature(source, tuple(params.get(p.name, p) for p in self.params), self.slots)


# -- from the header ------------------------------------------------------------------------------
def from_header(header: HeaderSignature, path: str) -> LaunchSignature:
    params = []
    for p in header.params:
        if p.kind == "tensor":
            params.append(LaunchParam(p.name, "tensor", tensor=_tensor_layout(p.struct, p.name, path)))
        elif p.kind == "tensor_list":
            elements = p.struct.field("elements")
            params.append(LaunchParam(p.name, "tensor_list", tensor=_tensor_layout(elements.struct, p.name, path),
                                      count=elements.count or 1, list_size=p.struct.size))
        elif p.kind == "array":
            count = sum(1 for s in header.slots if s.param == p.name)
            params.append(LaunchParam(p.name, "array", ctype=p.element, count=count))
        else:
            params.append(LaunchParam(p.name, p.kind, ctype=p.element))
    slots = tuple((s.param, s.how, s.index) for s in header.slots)
    if not slots or slots[-1][1] != "ret" or any(how == "ret" for _, how, _ in slots[:-1]):
        raise LaunchSignatureError(f"the wrapper's args[] does not end with the return slot (&ret) alone: {slots}", path=path)
    return LaunchSignature("header", tuple(params), slots)


def _tensor_layout(struct, name: str, path: str) -> TensorLayout:
    fields = {f.name: f for f in struct.fields}
    unknown = set(fields) - {"data", "dynamic_shapes", "dynamic_strides"}
    data = fields.get("data")
    if unknown or data is None or data.offset != 0 or data.size != POINTER_SIZE or data.ctype != "void *":
        raise LaunchSignatureError(f"tensor {name}'s struct has fields {[f.name for f in struct.fields]}; "
                                   "emu knows {void *data; dynamic_shapes[]; dynamic_strides[]}", path=path)
    shapes, strides = fields.get("dynamic_shapes"), fields.get("dynamic_strides")
    for field in (shapes, strides):
        if field is not None and (field.ctype not in ("int32_t", "int64_t") or field.count is None):
            raise LaunchSignatureError(f"tensor {name}'s {field.name} is {field.ctype}, not an int32_t/int64_t array", path=path)
    return TensorLayout(shape_count=shapes.count if shapes else 0, shape_width=shapes.element_size if shapes else 4,
                        stride_count=strides.count if strides else 0, stride_width=strides.element_size if strides else 8,
                        shapes_offset=shapes.offset if shapes else POINTER_SIZE,
                        strides_offset=strides.offset if strides else None, size=struct.size)


# -- from args_spec -------------------------------------------------------------------------------
def annotation_kind(annotation: str | None) -> tuple[str | None, str | None]:
    """(kind, C type) an args_spec annotation implies; (None, None) when it says nothing emu can use."""
    if not annotation:
        return None, None
    words = set(_WORD.findall(annotation.replace(".", " ")))
    if ("Tensor" in words or "FakeTensor" in words) and words & {"List", "list", "Sequence", "Tuple", "tuple"}:
        return "tensor_list", None          # `List[cute.Tensor]`: the header passes each element in a slot
    if "Tensor" in words or "FakeTensor" in words:
        return "tensor", None
    if words & {"CUstream", "cudaStream_t", "Stream", "FakeStream"}:
        return "stream", None
    if "Pointer" in words:
        return "pointer", None
    numeric = [ANNOTATION_C_TYPES[w] for w in words if w in ANNOTATION_C_TYPES]
    if len(numeric) == 1:
        return "scalar", numeric[0]
    if words & _ALGEBRA:
        return "array", None
    return None, None


def is_optional(param) -> bool:
    """`Optional[X]` (pickled as `getitem(typing.Union, (X, type(None)))`) or a None default."""
    annotation = param.annotation or ""
    return param.default == "None" or "type(None)" in annotation or "NoneType" in annotation or "Optional" in annotation


def omitted_optionals(spec: ArgSpec, launch_function: str | None, given: dict, path: str | None = None,
                      probe: Callable[[], SlotReads | None] | None = None) -> tuple[set[str], dict[str, str]]:
    """Parameters the wrapper leaves out: those compiled with None (emu.dsl.launch.optionals); and, when
    choices remain that launch alike, the name the trace gives each parameter whose name is undecided.

    A stream whose default is None counts as passed (exports are compiled with one).
    `probe`, asked only when the name and the given arguments leave a choice, runs the launch
    code to see how many args[] slots it reads and how it reads each one.
    """
    forced = frozenset(name for name, value in given.items() if value is None)
    optional = [p.name for p in spec.parameters if is_optional(p) and p.kind != "VAR_KEYWORD" and p.name not in given
                and annotation_kind(p.annotation)[0] != "stream"]     # a stream defaulting to None is still passed
    required_tensors = [p.name for p in spec.parameters if not is_optional(p) and annotation_kind(p.annotation)[0] == "tensor"]
    if not optional:
        return set(forced), {}
    if given and all(name in given for name in required_tensors):
        return set(optional) | forced, {}
    params = [p for p in spec.parameters if p.kind not in ("VAR_POSITIONAL", "VAR_KEYWORD")]
    kinds = [(p.name, "T" if p.annotation is None or annotation_kind(p.annotation)[0] == "tensor" else None) for p in params]
    options = omitted_options(kinds, optional, launch_function, forced)
    if len(options) > 1 and probe is not None:
        result = probe()
        if result is not None and result.passed is not None:
            slots = {p.name: len(given[p.name]) if isinstance(given.get(p.name), list) else 1 for p in params}

            def fits_code(omitted: frozenset[str]) -> bool:
                return slots_fit([(*annotation_kind(p.annotation), slots[p.name]) for p in params if p.name not in omitted],
                                 result)
            options = omitted_options(kinds, optional, launch_function, forced, fits_code)
    if len(options) == 1:
        return set(options[0]), {}
    labels = _interchangeable(params, options) if options else None
    if labels is not None:
        return set(options[0]), labels
    listed = " or ".join("{" + ", ".join(sorted(o - forced)) + "}" for o in options[:4]) if options else "no choice"
    raise LaunchSignatureError(
        f"without the header emu cannot tell which of the optional parameters {', '.join(optional)} the export was "
        f"compiled without (the mangled launch-function name and the launch code allow {listed}); put the header "
        "beside the object, or give each one (null for one compiled without)", path=path)


def _interchangeable(params: list, options: list[frozenset[str]]) -> dict[str, str] | None:
    """When every choice passes the same args[] (parameters of the same kind, C type and default in the same
    order, so the launch is the same whichever was None), the name the trace gives each parameter of the
    first choice that another choice replaces ("a|b"); None when the choices launch differently."""
    def passed(omitted: frozenset[str]) -> list:
        return [p for p in params if p.name not in omitted]
    first = passed(options[0])
    others = [passed(option) for option in options[1:]]
    if any([(annotation_kind(p.annotation), p.default) for p in other] !=
           [(annotation_kind(p.annotation), p.default) for p in first] for other in others):
        return None
    labels = {}
    for index, param in enumerate(first):
        names = sorted({param.name} | {other[index].name for other in others}, key=[p.name for p in params].index)
        if len(names) > 1:
            labels[param.name] = "|".join(names)
    return labels


def from_args_spec(spec: ArgSpec, given: dict, launch_function: str | None, path: str,
                   probe: Callable[[], SlotReads | None] | None = None) -> LaunchSignature:
    """The signature without a header: kinds from annotations, tensor fields from the given arguments;
    a tensor whose fields are not given has `tensor=None`, a list or Shape whose length is not given
    `count=None`, and one with no annotation kind "unknown", for emu.dsl.launch.plan to read from the launch code."""
    omitted, labels = omitted_optionals(spec, launch_function, given, path, probe)
    static = _static_tensors(spec, omitted, launch_function)
    params = []
    for p in spec.parameters:
        if p.kind in ("VAR_POSITIONAL", "VAR_KEYWORD") or p.name in omitted:
            continue
        if p.name in labels:           # which of these was passed is unknown: the trace says so by the name
            p = p.model_copy(update={"name": labels[p.name]})
        kind, ctype = annotation_kind(p.annotation)
        value = given.get(p.name)
        if kind is None:
            kind, ctype = _kind_from_value(value)
        if kind is None and value is not None:
            raise LaunchSignatureError(f"args_spec parameter {p.name} has annotation {p.annotation!r}, which does not say "
                                       f"how it is passed, so {value!r} cannot be written for it; put the header beside "
                                       "the object", path=path)
        if kind is None:
            params.append(LaunchParam(p.name, "unknown"))          # the launch code's loads tell (discovery)
        elif kind == "tensor":
            layout = TensorLayout(0, 4, 0, 8) if value is None and p.name in static else _layout_from_value(value)
            params.append(LaunchParam(p.name, "tensor", tensor=layout))
        elif kind == "tensor_list":           # annotated List[Tensor], or a list of tensors given for it
            if isinstance(value, list) and value:
                params.append(LaunchParam(p.name, "tensor_list", tensor=_layout_from_value(value[0]), count=len(value)))
            else:                             # how many: the slots the launch code reads (emu.dsl.launch.plan)
                params.append(LaunchParam(p.name, "tensor_list"))
        elif kind == "array":
            params.append(LaunchParam(p.name, "array", ctype="int32_t", count=len(value) if isinstance(value, list) else None))
        else:
            params.append(LaunchParam(p.name, kind, ctype=ctype, default=p.default))
    slots = []
    for param in params:
        if param.kind == "array":           # of unknown length: one slot until the launch code's reads tell
            slots.extend((param.name, "element", i) for i in range(param.count or 1))
        elif param.kind == "tensor_list":
            slots.extend((param.name, "list_element", i) for i in range(param.count or 1))
        else:
            slots.append((param.name, "address" if param.kind in ("scalar", "stream", "pointer") else "value", 0))
    slots.append(("ret", "ret", 0))
    return LaunchSignature("args_spec", tuple(params), tuple(slots))


def _static_tensors(spec: ArgSpec, omitted: set[str], launch_function: str | None) -> set[str]:
    """Tensors compiled with no dynamic mode: a fake tensor's name part spells each dynamic element `div<N>`
    (`FakeTensorFloat321281` is shape 128, stride 1), so one with no `div` is passed as `{void *data}`."""
    names = [p.name for p in spec.parameters if p.name not in omitted and p.kind not in ("VAR_POSITIONAL", "VAR_KEYWORD")
             and annotation_kind(p.annotation)[0] == "tensor"]
    tokens = tensor_tokens(launch_function, len(names)) or []
    return {name for name, token in zip(names, tokens) if token.startswith("FakeTensor") and "div" not in token}


def _kind_from_value(value) -> tuple[str | None, str | None]:
    if isinstance(value, dict):
        return "tensor", None
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return "tensor_list", None
    if isinstance(value, list):
        return "array", None
    return None, None


def _layout_from_value(value) -> TensorLayout | None:
    """A tensor's struct from the raw form the user (or `<prefix>.args.json`) gives; None when the value
    does not list the struct's fields (the launch code's loads then tell, emu.dsl.launch.discovery)."""
    if not isinstance(value, dict) or ("dynamic_shapes" not in value and "dynamic_strides" not in value):
        return None
    shapes, strides = value.get("dynamic_shapes") or [], value.get("dynamic_strides") or []
    return TensorLayout(shape_count=len(shapes), shape_width=4, stride_count=len(strides), stride_width=8)


def apply_width_markers(signature: LaunchSignature, launch_function: str | None) -> LaunchSignature:
    """Each tensor's field widths, read from its token of the mangled launch-function name.

    The DSL names a tensor argument by its layout (`FakeTensorFloat32div16div8i64div81`) and
    writes `i64` for each 64-bit dynamic element; the widths follow from that count and the
    numbers of dynamic extents and strides: 0 -> 32-bit both, the stride count -> 32-bit
    extents and 64-bit strides (the DSL's default), all -> 64-bit both.  A tensor whose token
    is missing (the DSL cuts names at 180 characters) or does not fit keeps the default.
    """
    tokens = tensor_tokens(launch_function, sum(1 for p in signature.params if p.kind == "tensor"))
    if tokens is None:
        return signature                                 # no reliable reading
    params, index = [], 0
    for param in signature.params:
        if param.kind == "tensor":
            if param.tensor is not None and index < len(tokens):
                param = _widths_from_token(param, tokens[index].count("i64"))
            index += 1
        params.append(param)
    return LaunchSignature(signature.source, tuple(params), signature.slots)


def _widths_from_token(param: LaunchParam, markers: int) -> LaunchParam:
    t = param.tensor
    # later entries win a tie: the DSL's default reading (32-bit extents, 64-bit strides) last
    readings = {t.shape_count: (8, 4), t.shape_count + t.stride_count: (8, 8), 0: (4, 4), t.stride_count: (4, 8)}
    widths = readings.get(markers) if t.shape_count + t.stride_count else None
    if widths is None or widths == (t.shape_width, t.stride_width):
        return param
    return LaunchParam(param.name, "tensor", tensor=TensorLayout(t.shape_count, widths[0], t.stride_count, widths[1]))


# -- cross-check ----------------------------------------------------------------------------------
def with_spec_defaults(signature: LaunchSignature, spec: ArgSpec) -> LaunchSignature:
    """The header's parameters with the Python defaults args_spec records (a scalar's default value)."""
    defaults = {p.name: p.default for p in spec.parameters if p.default is not None}
    params = tuple(LaunchParam(p.name, p.kind, p.ctype, p.tensor, p.count, p.list_size, defaults.get(p.name, p.default))
                   for p in signature.params)
    return LaunchSignature(signature.source, params, signature.slots)


def cross_check(header: LaunchSignature, spec: ArgSpec, path: str, header_name: str) -> None:
    """Refuse a header whose wrapper does not take what the object's args_spec says."""
    runtime = [p for p in spec.parameters if p.kind not in ("VAR_POSITIONAL", "VAR_KEYWORD")]
    names = [p.name for p in header.params]
    by_name = {p.name: p for p in runtime}
    extra = [n for n in names if n not in by_name]
    if extra:
        raise LaunchSignatureError(f"{header_name} passes {', '.join(extra)}, which the object's args_spec does not "
                                   f"declare (it declares {', '.join(by_name) or 'nothing'}): the header is not this object's", path=path)
    missing = [p.name for p in runtime if p.name not in names and not is_optional(p)]
    if missing:
        raise LaunchSignatureError(f"{header_name} does not pass {', '.join(missing)}, which the object's args_spec "
                                   "declares as neither Optional nor None by default: the header is not this object's", path=path)
    order = [p.name for p in runtime if p.name in names]
    if order != names:
        raise LaunchSignatureError(f"{header_name} passes its parameters in the order {', '.join(names)}; args_spec "
                                   f"declares {', '.join(order)}", path=path)
    for param in header.params:
        kind, ctype = annotation_kind(by_name[param.name].annotation)
        if kind is None:
            continue
        header_kind = "tensor" if param.kind == "tensor_list" else param.kind
        kind = "tensor" if kind == "tensor_list" else kind       # List[Tensor]: a list in the header, or one tensor
        if kind != header_kind and not (kind == "array" and header_kind == "scalar"):
            raise LaunchSignatureError(f"parameter {param.name} is a {header_kind} in {header_name} ({param.ctype or ''}) "
                                       f"but args_spec annotates it {by_name[param.name].annotation}", path=path)
        if kind == "scalar" and ctype != param.ctype and SCALAR_TYPES.get(ctype) != SCALAR_TYPES.get(param.ctype):
            raise LaunchSignatureError(f"parameter {param.name} is {param.ctype} in {header_name} but args_spec annotates "
                                       f"it {by_name[param.name].annotation} ({ctype})", path=path)
