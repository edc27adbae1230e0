"""The launch signature a header declares, as plain immutable values.

Kept apart from emu.dsl.header.parse, which reads it with pycparser (whose import and parse cost a short
run tens of milliseconds): code that only uses a signature (emu.dsl.launch.plan, emu.cache.header_store, which
keeps parsed signatures on disk) imports these types without importing the parser.

They are NamedTuples, not frozen dataclasses, for the same reason: Python 3.11 compiles six methods
for each frozen dataclass, about a millisecond of every process that imports one.
"""
from __future__ import annotations

from typing import NamedTuple

from ...errors import ObjectFormatError

# Scalar C types a launch argument can have, by the name the header uses: (struct format, kind).
SCALAR_TYPES = {"int8_t": ("b", "int"), "int16_t": ("h", "int"), "int32_t": ("i", "int"), "int64_t": ("q", "int"),
                "uint8_t": ("B", "int"), "uint16_t": ("H", "int"), "uint32_t": ("I", "int"), "uint64_t": ("Q", "int"),
                "float": ("f", "float"), "double": ("d", "float"), "__half_raw": ("e", "float"),
                "__half": ("e", "float"), "__nv_bfloat16": ("bf16", "float"), "__nv_bfloat16_raw": ("bf16", "float")}


class HeaderError(ObjectFormatError):
    """The header beside the object cannot be read as the launch signature export_to_c writes."""


class CField(NamedTuple):
    name: str
    ctype: str               # the element type as the header spells it (int32_t, void *, a struct name)
    offset: int
    size: int                # of the whole field (all elements of an array)
    count: int | None        # array length, None for a plain field
    struct: "CStruct | None" = None

    @property
    def element_size(self) -> int:
        return self.size // (self.count or 1)


class CStruct(NamedTuple):
    name: str
    size: int
    align: int
    fields: tuple[CField, ...]

    def field(self, name: str) -> CField | None:
        return next((f for f in self.fields if f.name == name), None)


class HeaderParam(NamedTuple):
    """One parameter of the wrapper, after the module: `<prefix>_Tensor_a_t *a`, `int32_t n`, `cudaStream_t s`."""
    name: str
    ctype: str               # as spelled, without the name: "add_Tensor_a_t *", "int32_t", "cudaStream_t"
    kind: str                # "tensor", "tensor_list", "scalar", "stream", "pointer", "array"
    struct: CStruct | None = None      # the pointee struct of a tensor or tensor list
    element: str | None = None         # the scalar type of a scalar, or of an array's elements


class PackedSlot(NamedTuple):
    """One entry of `void *args[]`: which parameter, and how the header takes its address."""
    param: str
    how: str                 # "value" (a), "address" (&a), "element" (&a[i]), "list_element" (&a->elements[i]), "ret"
    index: int = 0


class HeaderSignature(NamedTuple):
    wrapper: str
    launch_function: str
    params: tuple[HeaderParam, ...]
    slots: tuple[PackedSlot, ...]
    return_type: str
