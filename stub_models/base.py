"""The vocabulary stub models are written in.

A stub model is a pydantic model named after a function an object calls (a CUDA wrapper,
a C library function) whose fields are that function's parameters, in prototype order and with the prototype's names.  Each field is
annotated with a `C` marker saying how the raw register/stack value is read (a signed
int, a handle, a C string, a pointer the callee writes through...).  emu reads the
arguments by the calling convention, decodes them by these markers and hands the model
to the stub's behaviour; the trace records the same names.
"""
from dataclasses import dataclass
from enum import IntEnum
from functools import cache
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

Kind = Literal["i32", "u32", "i64", "u64", "size", "handle", "ptr", "cstr", "out", "struct"]
Pointee = Literal["i32", "u32", "i64", "u64", "size", "handle"]


@dataclass(frozen=True)
class C:
    """How to read one parameter.

    kind:    the C type class of the raw argument.
    enum:    for integer parameters that are CUDA enums, the IntEnum whose names the trace shows.
    pointee: for `out` parameters, the type the callee writes through the pointer.
    struct:  for `struct` parameters, the name of the decoder (see emu.stubs.cuda_structs).
    """

    kind: Kind
    enum: type[IntEnum] | None = None
    pointee: Pointee | None = None
    struct: str | None = None


@dataclass(frozen=True)
class Param:
    name: str
    c: C


class StubCall(BaseModel):
    """Base of every stub model, of any family: the parameters of one call, by the function's own names."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)   # schemas build on first validation, not at import

    symbol: ClassVar[str]        # the symbol the object references, e.g. "_cudaFuncSetAttribute" or "printf"
    prototype: ClassVar[str]     # the C prototype, for documentation and `emu inspect`
    api: ClassVar[str]           # which library's interface: each family's base says

    @classmethod
    @cache
    def params(cls) -> tuple[Param, ...]:
        out = []
        for name, info in cls.model_fields.items():
            marker = next((m for m in info.metadata if isinstance(m, C)), None)
            if marker is None:
                raise TypeError(f"{cls.__name__}.{name} has no C(...) marker")
            out.append(Param(name, marker))
        return tuple(out)

    def arguments(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in type(self).model_fields}


class CudaCall(StubCall):
    """Base of the CUDA family's models: a wrapper of libcute_dsl_runtime.so, by its CUDA names."""

    api: ClassVar[Literal["runtime", "driver", "helper"]] = "runtime"
    # Set only where the exported wrapper's signature differs from the public CUDA function's
    # (then `prototype` is the wrapper's own, named with its leading underscore).
    public_prototype: ClassVar[str | None] = None
