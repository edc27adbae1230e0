"""Annotated field types the stub models are written with (one `C` marker each).

    Handle  opaque CUDA handle (stream, event, library, kernel, graph, module, ...), shown in hex
    Int     int                      UInt  unsigned int           U64  unsigned long long
    Size    size_t                   Ptr   pointer not dereferenced by the stub
    CString const char * (read up to its NUL)
    Out(p)  pointer the callee writes one scalar or handle of type p through
    Struct(n) pointer to a C struct decoded by emu.stubs.cuda_structs' decoder n (when emu has one)
    Enum(E) / UEnum(E) an int / unsigned int holding a value of the IntEnum E
"""
# No `from __future__ import annotations`: pydantic reads these annotations as objects, not strings to evaluate.

from enum import IntEnum
from typing import Annotated

from .base import C

Handle = Annotated[int, C("handle")]
Int = Annotated[int, C("i32")]
UInt = Annotated[int, C("u32")]
I64 = Annotated[int, C("i64")]
U64 = Annotated[int, C("u64")]
Size = Annotated[int, C("size")]
Ptr = Annotated[int, C("ptr")]
CString = Annotated[str | None, C("cstr")]


def Out(pointee: str):
    """A pointer the callee writes a `pointee` (i32/u32/i64/u64/size/handle) through."""
    return Annotated[int, C("out", pointee=pointee)]


def Struct(name: str):
    """A pointer to the C struct `name` (decoded when emu.stubs.cuda_structs has a decoder of that name)."""
    return Annotated[int, C("struct", struct=name)]


def Enum(enum: type[IntEnum]):
    """A (signed) int that holds an `enum` value; traces show `9 NAME`."""
    return Annotated[int, C("i32", enum=enum)]


def UEnum(enum: type[IntEnum]):
    """An unsigned int that holds an `enum` value."""
    return Annotated[int, C("u32", enum=enum)]
