"""The one argument form of a TVM-FFI call: scenarios (`tvm_ffi: {args: [...]}`), `trace --args FILE` and the
API (`entries=[{"tvm_ffi": {"args": [...]}}]`) all validate it with `parse_arguments`.

A positional list, one item per argument as the framework passes it:
    {tensor: {dtype: float16, shape: [8, 4096], strides: [4096, 1], data: 0x7f0000000000, byte_offset: 0,
              device: "cuda:0"}}
    {int: N}   {float: X}   {bool: B}   {stream: HANDLE} (an opaque pointer)   null (None)
    {shape: [4, 128]}      an ffi.Shape object (what Python passes for a `cute.Shape` / stride / coord)
    {tuple: [ITEM, ...]}   an ffi.Array of items, each any item of this form or null, nested as deep as wanted
                           (what Python passes for a tuple, list, NamedTuple or dataclass argument); a tensor
                           inside is an ffi.Tensor object, as a torch tensor in a tuple becomes one
A tensor's `strides` left out are compact (in the order the export was compiled for, when its mangled
name says, else row-major); `strides: null` is DLPack's compact tensor without strides, passed as a NULL
pointer (inside a tuple the library fills row-major strides in, as its Tensor::FromDLPack does).  `data` left
out is a distinct fake address, 16 MiB apart (tensors counted in their flattened order, tuples included).
An item inside a tuple is named by its path in errors: `#2.tuple[1]`.  When `args` is left out altogether,
`default_arguments` fills every parameter of the compiled signature: each dynamic extent 128 or the declared
divisibility (one value per shared symbol, in tensors and Shapes alike), compact strides, device cuda:0 (or the
one device type the entry checks for: `cpu` for tensors compiled from CPU torch tensors), a Shape its extents, a
Tuple each element's default.
"""
# No `from __future__ import annotations`: pydantic reads these annotations as objects.

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, ValidationError, \
    field_validator, model_validator

from ...errors import BadInput
from ..launch.arguments import STREAM_HANDLE, TENSOR_DATA_BASE, TENSOR_DATA_STRIDE, default_extent
from .dlpack import DEVICE_TYPES, DTYPES, parse_device
from .signature import MAX_TUPLE_DEPTH, TvmFfiParam, compact_strides, tensor_orders


def _address(value: Any) -> Any:
    """An address as YAML writes it (0x7f00...: an int) or as JSON can (a "0x..." string)."""
    if isinstance(value, str) and value.lower().startswith("0x"):
        try:
            return int(value, 16)
        except ValueError:
            pass
    return value


Address = Annotated[StrictInt, BeforeValidator(_address), Field(ge=0, lt=1 << 64)]


class TensorArgument(BaseModel):
    """A DLTensor, field for field."""

    model_config = ConfigDict(extra="forbid")

    dtype: str = Field(description="data type as TVM-FFI names it: float16, bfloat16, float32, int32, bool, float8_e4m3fn, ...")
    shape: list[Annotated[StrictInt, Field(ge=0)]] = Field(description="extents, outermost first")
    strides: list[StrictInt] | None = Field(default=None, description="strides in elements; null: a NULL strides "
                                            "pointer (DLPack's compact tensor); left out: compact")
    data: Address | None = Field(default=None, description="the data pointer (left out: a distinct fake address)")
    byte_offset: Annotated[StrictInt, Field(ge=0)] = Field(default=0, description="DLTensor.byte_offset")
    device: str = Field(default="cuda:0", description="device as type:index: cuda:0, cpu, cuda_host, ...")

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, value: str) -> str:
        if value not in DTYPES:
            raise ValueError(f"unknown dtype {value!r} (one of {', '.join(DTYPES)})")
        return value

    @field_validator("device")
    @classmethod
    def _known_device(cls, value: str) -> str:
        parse_device(value)
        return value

    @model_validator(mode="after")
    def _strides_match_shape(self):
        if self.strides is not None and len(self.strides) != len(self.shape):
            raise ValueError(f"{len(self.strides)} strides for {len(self.shape)} extents")
        return self

    @property
    def strides_given(self) -> bool:
        """Whether `strides` was written (null included), not left out."""
        return "strides" in self.model_fields_set


KINDS = ("tensor", "int", "float", "bool", "stream", "shape", "tuple")
Int64 = Annotated[StrictInt, Field(ge=-(1 << 63), lt=1 << 63)]


class TvmFfiArgument(BaseModel):
    """One item of the list: exactly one of tensor, int, float, bool, stream, shape, tuple."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    tensor: TensorArgument | None = None
    int_: StrictInt | None = Field(default=None, alias="int", ge=-(1 << 63), lt=1 << 63)
    float_: StrictFloat | StrictInt | None = Field(default=None, alias="float")
    bool_: StrictBool | None = Field(default=None, alias="bool")
    stream: Address | None = Field(default=None, description="an opaque pointer (a stream handle)")
    shape: list[Int64] | None = Field(default=None, description="an ffi.Shape of these extents")
    tuple_: list[Any] | None = Field(default=None, alias="tuple", description="an ffi.Array of these items "
                                     "(each validated by parse_arguments, with its path)")

    @model_validator(mode="after")
    def _one_kind(self):
        given = [name for name in KINDS if self.value_of(name) is not None]
        if len(given) != 1:
            raise ValueError("an argument is one of {tensor: {...}}, {int: N}, {float: X}, {bool: B}, {stream: HANDLE}, "
                             "{shape: [N, ...]}, {tuple: [...]} or null"
                             + (f", not {' and '.join(given)} together" if given else ""))
        return self

    def value_of(self, kind: str):
        return getattr(self, {"int": "int_", "float": "float_", "bool": "bool_", "tuple": "tuple_"}.get(kind, kind))

    @property
    def kind(self) -> str:
        return next(k for k in KINDS if self.value_of(k) is not None)

    def shown(self) -> Any:
        """The item as the argument form writes it (what the trace records)."""
        if self.tensor is not None:
            return {"tensor": self.tensor.model_dump(exclude_none=False)}
        if self.tuple_ is not None:
            return {"tuple": [None if item is None else item.shown() for item in self.tuple_]}
        return {self.kind: self.value_of(self.kind)}


def parse_arguments(raw: Any, source: str | None = None) -> list[TvmFfiArgument | None]:
    """The argument list `raw` (a list of items, None for null), validated; BadInput naming the item otherwise
    (`#2`, or `#2.tuple[1]` inside a tuple)."""
    if not isinstance(raw, list):
        raise BadInput(f"TVM-FFI arguments are a list (one item per argument), not {type(raw).__name__}", path=source)
    return [_parse_item(item, f"#{index}", source) for index, item in enumerate(raw)]


MAX_DEPTH = MAX_TUPLE_DEPTH    # tuples nested deeper than any compiled signature would be


def _parse_item(item: Any, where: str, source: str | None, depth: int = 0) -> TvmFfiArgument | None:
    if item is None:
        return None
    if depth > MAX_DEPTH:
        raise BadInput(f"TVM-FFI argument {where.split('.')[0]} nests tuples deeper than {MAX_DEPTH}", path=source)
    try:
        parsed = TvmFfiArgument.model_validate(item)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'item'}: {e['msg']}" for e in error.errors())
        raise BadInput(f"TVM-FFI argument {where} ({item!r}) is not valid: {problems}", path=source) from None
    if parsed.tuple_ is not None:
        parsed.tuple_ = [_parse_item(inner, f"{where}.tuple[{i}]", source, depth + 1)
                         for i, inner in enumerate(parsed.tuple_)]
    return parsed


_SCALAR_DEFAULTS = {"int": ("int", 1), "float": ("float", 1.0), "bool": ("bool", True), "stream": ("stream", STREAM_HANDLE),
                    "pointer": ("stream", TENSOR_DATA_BASE - TENSOR_DATA_STRIDE)}


def default_arguments(params: list[TvmFfiParam], mangled_function: str | None, path: str | None = None,
                      device_type: str | None = None) -> list[TvmFfiArgument | None]:
    """A well-formed argument for every parameter of the compiled signature (see the module's docstring);
    tensors on `device_type`:0 when the entry checks for that one device type, else cuda:0."""
    device = f"{device_type}:0" if device_type in DEVICE_TYPES else "cuda:0"
    extent = default_extent(mangled_function)
    orders = tensor_orders(params, mangled_function)
    tensors = iter(range(len(orders)))

    def default(param: TvmFfiParam) -> TvmFfiArgument | None:
        if param.kind == "tensor":
            index = next(tensors)
            shape = [e if isinstance(e, int) else extent for e in param.shape]
            return TvmFfiArgument(tensor=TensorArgument(
                dtype=param.dtype, shape=shape, strides=compact_strides(shape, orders[index]),
                data=TENSOR_DATA_BASE + index * TENSOR_DATA_STRIDE, device=device))
        if param.kind == "shape":
            return TvmFfiArgument(shape=[e if isinstance(e, int) else extent for e in param.shape])
        if param.kind == "tuple":
            return TvmFfiArgument(tuple_=[default(element) for element in param.elements])
        if param.kind in _SCALAR_DEFAULTS:
            kind, value = _SCALAR_DEFAULTS[param.kind]
            return TvmFfiArgument.model_validate({kind: value})
        if param.kind == "none":
            return None
        if param.kind.startswith("const_"):
            return TvmFfiArgument.model_validate({param.kind[len("const_"):]: param.value})
        raise BadInput(f"parameter {param.name}: {param.type_text} has no default in emu's argument form: give the "
                       "call's arguments (`args:`)", path=path)

    return [default(param) for param in params]
