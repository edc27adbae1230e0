"""A loaded binary, whatever its format: segments, defined symbols, imports, and readers over them.

Each format (emu.binary.formats) lays its file out into this: plain bytes and
addresses that do not depend on an emulator, so one loaded binary can be mapped into any
number of runs and stored (emu.cache.image_store).  Everything past loading (the
emulator, the stubs, the export description) reads a binary through this class; only
tools that show sections read the format's own parse, `obj`.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .memory_map import PAGE, RETURN_SENTINEL, STUB_BASE, STUB_RETURN, STUB_SLOT

PERM_R, PERM_W, PERM_X = 1, 2, 4     # the same values as Unicorn's UC_PROT_*


@dataclass(frozen=True)
class Segment:
    address: int
    data: bytes
    perms: int           # PERM_* bits


class Defined(NamedTuple):
    """A symbol the binary defines: where it is laid out, its size in bytes, and whether it is code."""

    name: str
    address: int
    size: int
    kind: str            # "function" or "object"


@dataclass
class LoadedBinary:
    path: str
    arch: str                               # emu.arch's name for it
    sha256: str
    format: str                             # the format that loaded it (emu.binary.formats), e.g. "elf-relocatable"
    segments: list[Segment]
    functions: dict[str, int]               # defined function name -> address
    data_symbols: dict[str, int]            # defined data object name -> address
    sizes: dict[str, int]                   # defined symbol name -> its size in bytes (0: not given)
    stub_symbols: list[str]                 # slot index -> the symbol its stub answers ('' for slot 0, the sentinel):
                                            # the imports (a bound copy adds definitions after them: emu.binary.bindings)
    got_base: int
    obj: Any                                # the format's own parse (an ObjectFile for ET_REL), for tools that show sections
    extras: dict = field(default_factory=dict)   # per-binary facts other parts compute once and store (vector sites)
    duplicates: dict[str, list[int]] = field(default_factory=dict)   # a name defined more than once -> every address
    memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)   # the same, never stored
    _starts: list[int] = field(default_factory=list, init=False, repr=False)
    _names: list[str] = field(default_factory=list, init=False, repr=False)
    _located: dict[int, str] = field(default_factory=dict, init=False, repr=False)
    _code: tuple[int, int] = field(default=(0, 0), init=False, repr=False)   # [start, end) of the executable segment

    def __post_init__(self) -> None:
        located = sorted((address, name) for name, address in self.functions.items())
        self._starts = [address for address, _ in located]
        self._names = [name for _, name in located]
        code = next((s for s in self.segments if s.perms & PERM_X), None)
        if code is not None:
            self._code = (code.address, code.address + len(code.data))

    def defined(self, name: str) -> Defined | None:
        """The defined symbol called `name` (a function before a data object of the same name), or None."""
        address = self.functions.get(name)
        if address is not None:
            return Defined(name, address, self.sizes.get(name, 0), "function")
        address = self.data_symbols.get(name)
        if address is not None:
            return Defined(name, address, self.sizes.get(name, 0), "object")
        return None

    def addresses(self, name: str) -> list[int]:
        """Every address a symbol called `name` is defined at, in symbol-table order: several where linked
        inputs each define a local of that name (each export's `kernels_binary`), else at most one."""
        if name in self.duplicates:
            return list(self.duplicates[name])
        found = self.defined(name)
        return [found.address] if found is not None else []

    def read(self, address: int, size: int) -> bytes:
        """`size` bytes at `address`, as laid out (relocated); ValueError unless one segment holds them all."""
        segment = self._segment(address)
        if segment is None or address + size > segment.address + len(segment.data) or size < 0:
            raise ValueError(f"{size} bytes at {address:#x} are not inside one segment of {self.path}")
        offset = address - segment.address
        return segment.data[offset:offset + size]

    def c_string(self, name: str) -> str | None:
        """The NUL-terminated string stored at a defined data symbol (within its size), or None."""
        address = self.data_symbols.get(name)
        segment = self._segment(address) if address is not None else None
        if segment is None:
            return None
        offset = address - segment.address
        raw = segment.data[offset:offset + self.sizes.get(name, 0)]
        return raw.split(b"\0", 1)[0].decode("utf-8", "replace")

    def _segment(self, address: int) -> Segment | None:
        return next((s for s in self.segments if s.address <= address < s.address + len(s.data)), None)

    def locate(self, address: int) -> str:
        """`function+0xoff` for a code address, or the stub's symbol, or a raw address (memoised)."""
        known = self._located.get(address)
        if known is None:
            known = self._located[address] = self._locate(address)
        return known

    def _locate(self, address: int) -> str:
        start, end = self._code
        if start <= address < end:                   # the usual case: a return address in the binary's code
            index = bisect.bisect_right(self._starts, address) - 1
            if index >= 0:
                return f"{self._names[index]}+{address - self._starts[index]:#x}"
        if address == RETURN_SENTINEL:
            return "entry (tail call)"      # a tail call returns straight to emu's return sentinel
        if STUB_RETURN <= address < STUB_RETURN + PAGE:
            return "stub entry path"
        slot = (address - STUB_BASE) // STUB_SLOT
        if 0 < slot < len(self.stub_symbols) and address >= STUB_BASE:
            return f"{self.stub_symbols[slot]} (stub)"
        return f"{address:#x}"
