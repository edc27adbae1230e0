"""What the C library functions DSL host code calls do, inside the emulation.

Output functions format their text (printf's conversions reading the variadic arguments
as the architecture's calling convention passes them: `RegisterConvention.variadic`) and
record it in the trace; nothing is printed.
Memory functions act on emulated memory; `malloc` and friends carve blocks out of the
upper half of the host scratch area (see emu.binary.memory_map) with a first-fit free list;
`abort`, `exit` and `__stack_chk_fail` end the entry, reported as its fault.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable

from unicorn import Uc, UcError

from ..emulator.unicorn_c import mem_read, mem_write
from ..binary.memory_map import HOST_BASE, HOST_SIZE
from ..errors import StubFailure

if TYPE_CHECKING:
    from ..arch.base import CallingConvention
    from ..arch.convention import VariadicArgs

HEAP_BASE = HOST_BASE + HOST_SIZE // 2      # the lower half holds the arguments emu writes
HEAP_END = HOST_BASE + HOST_SIZE
HEAP_ALIGN = 16
MAX_TEXT = 1 << 16
MAX_COPY = 1 << 24

class EntryEnded(StubFailure):
    """The host code ended the process (abort, exit): the entry stops with this fault kind."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


# -- printf ---------------------------------------------------------------------------------------
_CONVERSION = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|q|L|j|z|t)?([diouxXcspfFeEgGaAn%])")
_INT_BITS = {"hh": 8, "h": 16, None: 32, "l": 64, "ll": 64, "q": 64, "j": 64, "z": 64, "t": 64, "L": 64}


def format_text(uc: Uc, fmt: str, args: VariadicArgs) -> str:
    """The text `printf(fmt, ...)` writes, as glibc formats it."""
    out, position = [], 0
    for match in _CONVERSION.finditer(fmt):
        out.append(fmt[position:match.start()])
        position = match.end()
        flags, width, precision, length, conv = match.groups()
        if conv == "%":
            out.append("%")
            continue
        if conv == "n":
            raise StubFailure("the format uses %n (writes through a pointer): emu refuses it")
        if width == "*":
            width = _signed(args.integer(), 32)
            flags, width = (flags + "-", str(-width)) if width < 0 else (flags, str(width))
        if precision == "*":
            value = _signed(args.integer(), 32)
            precision = None if value < 0 else str(value)
        spec = "%" + flags + (width or "") + ("." + precision if precision is not None else "")
        out.append(_convert(uc, spec, conv, length, precision, args))
    out.append(fmt[position:])
    text = "".join(out)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT]


def _convert(uc: Uc, spec: str, conv: str, length: str | None, precision: str | None, args: VariadicArgs) -> str:
    if conv in "fFeEgGaA":
        value = args.double()
        if conv in "aA":
            text = value.hex()
            return text.upper() if conv == "A" else text
        return (spec + conv) % value
    raw = args.integer()
    if conv == "s":
        limit = int(precision) if precision else MAX_TEXT
        text = "(null)" if raw == 0 else _c_string(uc, raw, limit)
        return (spec + "s") % text
    if conv == "c":
        return (spec + "c") % chr(raw & 0xFF)
    if conv == "p":
        return (spec.replace("#", "") + "s") % ("(nil)" if raw == 0 else f"{raw:#x}")
    bits = _INT_BITS[length]
    value = _signed(raw, bits) if conv in "di" else raw & ((1 << bits) - 1)
    if precision is not None:                       # C: a precision makes an integer ignore the 0 flag
        spec = _without_zero_flag(spec)
    text = (spec + ("d" if conv in "diu" else conv)) % value
    return text.replace("0o", "0", 1) if conv == "o" else text      # C's alternate octal form is a leading 0


def _without_zero_flag(spec: str) -> str:
    body = spec[1:]
    flags = body[:len(body) - len(body.lstrip("-+ #0"))]
    return "%" + flags.replace("0", "") + body[len(flags):]


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _c_string(uc: Uc, address: int, limit: int) -> str:
    data = bytearray()
    while len(data) < limit:
        try:
            chunk = mem_read(uc, address + len(data), min(64, limit - len(data)))
        except UcError:
            chunk = b""
            try:
                chunk = mem_read(uc, address + len(data), 1)
            except UcError:
                raise StubFailure(f"string at {address:#x} runs into unmapped memory at {address + len(data):#x}") from None
        end = chunk.find(b"\0")
        if end >= 0:
            data += chunk[:end]
            break
        data += chunk
    return data[:limit].decode("utf-8", "replace")


# -- the heap -------------------------------------------------------------------------------------
class Heap:
    """First-fit blocks in [HEAP_BASE, HEAP_END): enough for host code's scratch allocations."""

    def __init__(self) -> None:
        self.blocks: dict[int, int] = {}          # address -> size, live blocks
        self.free: list[tuple[int, int]] = []     # (address, size), released blocks
        self.top = HEAP_BASE

    def allocate(self, size: int) -> int:
        size = max(HEAP_ALIGN, (size + HEAP_ALIGN - 1) // HEAP_ALIGN * HEAP_ALIGN)
        for i, (address, free_size) in enumerate(self.free):
            if free_size >= size:
                self.free[i:i + 1] = [(address + size, free_size - size)] if free_size > size else []
                self.blocks[address] = size
                return address
        if self.top + size > HEAP_END:
            return 0                               # out of memory: NULL, as malloc says
        address, self.top = self.top, self.top + size
        self.blocks[address] = size
        return address

    def release(self, address: int) -> None:
        size = self.blocks.pop(address, None)
        if size is None:
            raise StubFailure(f"free({address:#x}) of a pointer malloc did not return (or freed twice)")
        self.free.append((address, size))


class LibcState:
    """Per object run: the heap, and the calling convention a variadic call's arguments are read by."""

    def __init__(self, convention: CallingConvention) -> None:
        self.heap = Heap()
        self.convention = convention


# -- behaviours: (state, uc, call, fixed argument count) -> (return value, extra trace fields) -----
def _printf(state: LibcState, uc: Uc, call, fixed: int) -> tuple[int, dict[str, Any]]:
    text = format_text(uc, call.format or "", state.convention.variadic(uc, fixed))
    return len(text.encode()), {"text": text}


def _puts(state, uc, call, fixed):
    text = (call.s or "") + "\n"
    return len(text), {"text": text}


def _fputs(state, uc, call, fixed):
    return len(call.s or ""), {"text": call.s or ""}


def _putc(state, uc, call, fixed):
    return call.c & 0xFF, {"text": chr(call.c & 0xFF)}


def _putchar(state, uc, call, fixed):
    return call.c & 0xFF, {"text": chr(call.c & 0xFF)}


def _fwrite(state, uc, call, fixed):
    total = call.size * call.nmemb
    if total > MAX_TEXT:
        raise StubFailure(f"fwrite of {total} bytes: more than emu records ({MAX_TEXT})")
    data = _read(uc, call.ptr, total)
    return call.nmemb, {"text": data.decode("utf-8", "replace")}


def _read(uc: Uc, address: int, size: int) -> bytes:
    if size > MAX_COPY:
        raise StubFailure(f"{size} bytes: more than emu copies ({MAX_COPY})")
    try:
        return mem_read(uc, address, size) if size else b""
    except UcError:
        raise StubFailure(f"cannot read {size} bytes at {address:#x}: unmapped memory") from None


def _write(uc: Uc, address: int, data: bytes) -> None:
    try:
        if data:
            mem_write(uc, address, data)
    except UcError:
        raise StubFailure(f"cannot write {len(data)} bytes at {address:#x}: unmapped or read-only memory") from None


def _memcpy(state, uc, call, fixed):
    _write(uc, call.dest, _read(uc, call.src, call.n))
    return call.dest, {}


def _memset(state, uc, call, fixed):
    if call.n > MAX_COPY:
        raise StubFailure(f"memset of {call.n} bytes: more than emu writes ({MAX_COPY})")
    _write(uc, call.s, bytes([call.c & 0xFF]) * call.n)
    return call.s, {}


def _strlen(state, uc, call, fixed):
    return len(_c_string(uc, call.s, MAX_COPY).encode()), {}


def _malloc(state, uc, call, fixed):
    return state.heap.allocate(call.size), {}


def _calloc(state, uc, call, fixed):
    size = call.nmemb * call.size
    address = state.heap.allocate(size) if size < HEAP_END - HEAP_BASE else 0
    if address:
        _write(uc, address, bytes(size))
    return address, {}


def _realloc(state, uc, call, fixed):
    if call.ptr == 0:
        return state.heap.allocate(call.size), {}
    old = state.heap.blocks.get(call.ptr)
    if old is None:
        raise StubFailure(f"realloc({call.ptr:#x}) of a pointer malloc did not return")
    address = state.heap.allocate(call.size)
    if address:
        _write(uc, address, _read(uc, call.ptr, min(old, call.size)))
        state.heap.release(call.ptr)
    return address, {}


def _free(state, uc, call, fixed):
    if call.ptr:
        state.heap.release(call.ptr)
    return 0, {}


def _abort(state, uc, call, fixed):
    raise EntryEnded("abort", "the host code called abort() (SIGABRT natively)")


def _exit(state, uc, call, fixed):
    raise EntryEnded("exit", f"the host code called exit({call.status})")


def _stack_chk_fail(state, uc, call, fixed):
    raise EntryEnded("abort", "__stack_chk_fail: the stack protector found its canary overwritten (stack smashing)")


LIBC_BEHAVIOURS: dict[str, Callable[[LibcState, Uc, Any, int], tuple[int, dict[str, Any]]]] = {
    "printf": _printf, "fprintf": _printf, "puts": _puts, "fputs": _fputs, "putchar": _putchar, "putc": _putc, "fputc": _putc,
    "fwrite": _fwrite,
    "memcpy": _memcpy, "memmove": _memcpy, "memset": _memset, "strlen": _strlen,
    "malloc": _malloc, "calloc": _calloc, "realloc": _realloc, "free": _free,
    "abort": _abort, "exit": _exit, "__stack_chk_fail": _stack_chk_fail,
}
