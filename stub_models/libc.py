"""Pydantic models of the C library functions DSL host code calls (printf and friends).

The DSL's host code reaches libc for its diagnostics (the insufficient-shared-memory
warning is a `printf`) and, in general C host code, for memory and string helpers and
for ending the process.  Each model is a function's fixed parameters in prototype order;
`varargs` marks a variadic one, whose further arguments emu.stubs.libc reads by the calling
convention as its format asks.  `stub_models.LIBC_REGISTRY` lists each symbol with its model
(`LIBC_MODELS` here is every one of them, in the same order); emu's C library family
(emu.stubs.families.libc) looks a symbol up in `stub_models.LIBC_CATALOGUE` before the CUDA family,
which imports this module only for an object that calls the C library (few exports do).
"""
# No `from __future__ import annotations`: pydantic reads these annotations as objects, not strings to evaluate.

from typing import ClassVar

from pydantic import Field

from .base import StubCall
from .fields import CString, Handle, Int, Ptr, Size


class LibcCall(StubCall):
    """Base of the libc models (api = "libc")."""

    api: ClassVar[str] = "libc"
    varargs: ClassVar[bool] = False


class Printf(LibcCall):
    symbol: ClassVar[str] = "printf"
    prototype: ClassVar[str] = "int printf(const char *format, ...)"
    varargs: ClassVar[bool] = True
    format: CString = Field(description="the format; its conversions read the variadic arguments")


class Fprintf(LibcCall):
    symbol: ClassVar[str] = "fprintf"
    prototype: ClassVar[str] = "int fprintf(FILE *stream, const char *format, ...)"
    varargs: ClassVar[bool] = True
    stream: Handle = Field(description="the FILE * written to (stdout or stderr in host code)")
    format: CString = Field(description="the format; its conversions read the variadic arguments")


class Puts(LibcCall):
    symbol: ClassVar[str] = "puts"
    prototype: ClassVar[str] = "int puts(const char *s)"
    s: CString = Field(description="the line written, without its newline")


class Fputs(LibcCall):
    symbol: ClassVar[str] = "fputs"
    prototype: ClassVar[str] = "int fputs(const char *s, FILE *stream)"
    s: CString = Field(description="the text written")
    stream: Handle = Field(description="the FILE * written to")


class Putchar(LibcCall):
    symbol: ClassVar[str] = "putchar"
    prototype: ClassVar[str] = "int putchar(int c)"
    c: Int = Field(description="the character written")


class Putc(LibcCall):
    symbol: ClassVar[str] = "putc"
    prototype: ClassVar[str] = "int putc(int c, FILE *stream)"
    c: Int = Field(description="the character written")
    stream: Handle = Field(description="the FILE * written to")


class Fputc(Putc):
    symbol: ClassVar[str] = "fputc"
    prototype: ClassVar[str] = "int fputc(int c, FILE *stream)"


class Fwrite(LibcCall):
    symbol: ClassVar[str] = "fwrite"
    prototype: ClassVar[str] = "size_t fwrite(const void *ptr, size_t size, size_t nmemb, FILE *stream)"
    ptr: Ptr = Field(description="the bytes written")
    size: Size = Field(description="bytes per item")
    nmemb: Size = Field(description="items")
    stream: Handle = Field(description="the FILE * written to")


class Memcpy(LibcCall):
    symbol: ClassVar[str] = "memcpy"
    prototype: ClassVar[str] = "void *memcpy(void *dest, const void *src, size_t n)"
    dest: Ptr = Field(description="destination")
    src: Ptr = Field(description="source (must not overlap dest)")
    n: Size = Field(description="bytes copied")


class Memmove(Memcpy):
    symbol: ClassVar[str] = "memmove"
    prototype: ClassVar[str] = "void *memmove(void *dest, const void *src, size_t n)"      # src may overlap dest


class Memset(LibcCall):
    symbol: ClassVar[str] = "memset"
    prototype: ClassVar[str] = "void *memset(void *s, int c, size_t n)"
    s: Ptr = Field(description="destination")
    c: Int = Field(description="the byte value (converted to unsigned char)")
    n: Size = Field(description="bytes set")


class Strlen(LibcCall):
    symbol: ClassVar[str] = "strlen"
    prototype: ClassVar[str] = "size_t strlen(const char *s)"
    s: Ptr = Field(description="the string measured")


class Malloc(LibcCall):
    symbol: ClassVar[str] = "malloc"
    prototype: ClassVar[str] = "void *malloc(size_t size)"
    size: Size = Field(description="bytes to allocate")


class Calloc(LibcCall):
    symbol: ClassVar[str] = "calloc"
    prototype: ClassVar[str] = "void *calloc(size_t nmemb, size_t size)"
    nmemb: Size = Field(description="items")
    size: Size = Field(description="bytes per item")


class Realloc(LibcCall):
    symbol: ClassVar[str] = "realloc"
    prototype: ClassVar[str] = "void *realloc(void *ptr, size_t size)"
    ptr: Ptr = Field(description="the block to resize (NULL: allocate)")
    size: Size = Field(description="the new size in bytes")


class Free(LibcCall):
    symbol: ClassVar[str] = "free"
    prototype: ClassVar[str] = "void free(void *ptr)"
    ptr: Ptr = Field(description="the block to release (NULL: nothing)")


class Abort(LibcCall):
    symbol: ClassVar[str] = "abort"
    prototype: ClassVar[str] = "void abort(void)"


class Exit(LibcCall):
    symbol: ClassVar[str] = "exit"
    prototype: ClassVar[str] = "void exit(int status)"
    status: Int = Field(description="the exit status")


class StackChkFail(LibcCall):
    symbol: ClassVar[str] = "__stack_chk_fail"
    prototype: ClassVar[str] = "void __stack_chk_fail(void)"


LIBC_MODELS: tuple[type[LibcCall], ...] = (
    Printf, Fprintf, Puts, Fputs, Putchar, Putc, Fputc, Fwrite,
    Memcpy, Memmove, Memset, Strlen,
    Malloc, Calloc, Realloc, Free,
    Abort, Exit, StackChkFail,
)
