"""Read an ELF relocatable object into plain Python data, validating as we go.

LIEF parses the ELF header and the section table; the symbol and relocation tables are
decoded here from their section bytes with `struct`, which is both faster than walking
LIEF's per-entry objects and gives the raw psABI relocation numbers (LIEF tags them with
an architecture bit).  Everything downstream (layout, relocation, emulation) works on
the `ObjectFile` returned here and never touches LIEF, so a parsed object can be cached.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import struct
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from pathlib import Path
from typing import NamedTuple

from .errors import ObjectFormatError

SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 0, 1, 2, 3, 4, 8, 9
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
SHN_UNDEF, SHN_LORESERVE, SHN_ABS, SHN_COMMON, SHN_XINDEX = 0, 0xFF00, 0xFFF1, 0xFFF2, 0xFFFF
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION, STT_FILE = 0, 1, 2, 3, 4
EM_X86_64, EM_AARCH64 = 62, 183
MACHINES = {EM_X86_64: "x86_64", EM_AARCH64: "aarch64"}

MAX_OBJECT_BYTES = 256 << 20
MAX_ALLOC_BYTES = 64 << 20   # sum of SHF_ALLOC section sizes (NOBITS included)


_new = tuple.__new__    # builds a NamedTuple without its Python-level __new__ (an object has hundreds)


class Section(NamedTuple):
    index: int
    name: str
    type: int
    flags: int
    size: int
    align: int
    link: int
    info: int
    data: bytes  # empty for NOBITS

    @property
    def alloc(self) -> bool:
        return bool(self.flags & SHF_ALLOC)

    @property
    def writable(self) -> bool:
        return bool(self.flags & SHF_WRITE)

    @property
    def executable(self) -> bool:
        return bool(self.flags & SHF_EXECINSTR)


class Symbol(NamedTuple):
    index: int
    name: str
    value: int
    size: int
    type: int
    binding: int
    shndx: int

    @property
    def defined(self) -> bool:
        return self.shndx != SHN_UNDEF


class Relocation(NamedTuple):
    section: int      # index of the section the relocation patches
    offset: int       # offset inside that section
    type: int         # psABI number (ELF64_R_TYPE)
    symbol: int       # symbol table index
    addend: int


@dataclass
class ObjectFile:
    path: str
    arch: str
    sha256: str
    sections: list[Section]
    symbols: list[Symbol]
    relocations: list[Relocation]
    _by_name: dict[str, Symbol] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for symbol in self.symbols:
            if symbol.name and (symbol.name not in self._by_name or symbol.binding != 0):
                self._by_name[symbol.name] = symbol

    def symbol(self, name: str) -> Symbol | None:
        return self._by_name.get(name)

    def symbol_bytes(self, symbol: Symbol) -> bytes:
        """The initial bytes of a defined data symbol (zeros for NOBITS)."""
        section = self.sections[symbol.shndx]
        if section.type == SHT_NOBITS:
            return bytes(symbol.size)
        return section.data[symbol.value:symbol.value + symbol.size]

    def c_string(self, name: str) -> str | None:
        """A NUL-terminated string stored at a defined symbol, or None."""
        symbol = self.symbol(name)
        if symbol is None or not symbol.defined or symbol.shndx >= len(self.sections):
            return None
        raw = self.symbol_bytes(symbol)
        return raw.split(b"\0", 1)[0].decode("utf-8", "replace")

    def section_name(self, index: int) -> str:
        if 0 <= index < len(self.sections):
            return self.sections[index].name or f"section[{index}]"
        return f"section[{index}]"

    def symbol_label(self, index: int) -> str:
        """A readable name for a symbol index: its name, or its section's for STT_SECTION."""
        if not 0 <= index < len(self.symbols):
            return f"symbol[{index}]"
        symbol = self.symbols[index]
        if symbol.name:
            return symbol.name
        if symbol.type == STT_SECTION:
            return self.section_name(symbol.shndx)
        return f"symbol[{index}]"


def read_object_bytes(path: str) -> bytes:
    """The file's bytes, refusing unreadable paths and files too large to be a loader object."""
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            size = os.fstat(handle).st_size
            # Ask for the file's size plus one (a read allocates what it asks for); only a
            # pipe, a file that changed size or a short read needs the loop to the bound.
            raw = os.read(handle, min(size, MAX_OBJECT_BYTES) + 1)
            if len(raw) != size:
                parts, total = [raw], len(raw)
                while total <= MAX_OBJECT_BYTES:
                    chunk = os.read(handle, min(1 << 20, MAX_OBJECT_BYTES + 1 - total))
                    if not chunk:
                        break
                    parts.append(chunk)
                    total += len(chunk)
                raw = b"".join(parts)
        finally:
            os.close(handle)
    except OSError as error:
        raise ObjectFormatError(f"cannot read the object file: {error.strerror or error}", path=path) from None
    if len(raw) > MAX_OBJECT_BYTES:
        raise ObjectFormatError(f"file is larger than {MAX_OBJECT_BYTES >> 20} MiB; not a loader object", path=path)
    return raw


def load_object(path: str | Path) -> ObjectFile:
    """Parse and validate `path`; raise ObjectFormatError with a precise message."""
    path = str(path)
    return parse_object(read_object_bytes(path), path)


def parse_object(raw: bytes, path: str = "<bytes>", sha256: str | None = None) -> ObjectFile:
    machine = _check_header(raw, path)
    sections = _read_sections(raw, path)
    symbols = _read_symbols(sections, path)
    relocations = _read_relocations(sections, symbols, path)
    return ObjectFile(path=path, arch=MACHINES[machine], sha256=sha256 or hashlib.sha256(raw).hexdigest(),
                      sections=sections, symbols=symbols, relocations=relocations)


def _check_header(raw: bytes, path: str) -> int:
    """Check the ELF identity ourselves before LIEF sees the file, for exact messages."""
    if not raw:
        raise ObjectFormatError("the file is empty (0 bytes), not an ELF object", path=path)
    if len(raw) < 4 or raw[:4] != b"\x7fELF":
        raise ObjectFormatError("not an ELF file (no \\x7fELF magic at offset 0)", path=path)
    if len(raw) < 64:
        raise ObjectFormatError(f"truncated ELF header: the file has {len(raw)} bytes, the header needs 64", path=path)
    if raw[4] != 2:
        raise ObjectFormatError(f"32-bit ELF (EI_CLASS={raw[4]}); emu loads 64-bit objects only", path=path)
    if raw[5] != 1:
        raise ObjectFormatError(f"big-endian or unknown byte order (EI_DATA={raw[5]}); emu loads little-endian objects only", path=path)
    e_type, e_machine = struct.unpack_from("<HH", raw, 16)
    kinds = {2: "an executable", 3: "a shared library or PIE executable", 4: "a core dump"}
    if e_type != 1:
        what = kinds.get(e_type, f"ELF type {e_type}")
        raise ObjectFormatError(f"this is {what}, not a relocatable object (ET_REL); pass the .o that export_to_c wrote", path=path)
    if e_machine not in MACHINES:
        raise ObjectFormatError(f"ELF machine {e_machine} is not supported; emu runs x86-64 (62) and AArch64 (183) objects", path=path)
    shoff, = struct.unpack_from("<Q", raw, 40)
    shentsize, shnum = struct.unpack_from("<HH", raw, 58)
    if shnum and shentsize != 64:
        raise ObjectFormatError(f"section header entry size is {shentsize}, expected 64", path=path)
    if shoff + shnum * 64 > len(raw):
        raise ObjectFormatError(f"section header table at offset {shoff:#x} ({shnum} entries) runs past the end of the file ({len(raw)} bytes)", path=path)
    return e_machine


_LIEF_CONFIG = None


def _lief_parse(raw: bytes):
    """LIEF's view of the ELF structure: headers and sections only.

    Symbols, relocations and notes are read from the section bytes below, so LIEF is
    told to skip them (a quarter of its parse time), and its logger stays off.
    """
    global _LIEF_CONFIG
    import lief  # deferred: importing LIEF costs a quarter second

    if _LIEF_CONFIG is None:
        lief.logging.disable()
        config = lief.ELF.ParserConfig()
        for option in ("parse_relocations", "parse_dyn_symbols", "parse_symtab_symbols",
                       "parse_symbol_versions", "parse_notes", "parse_overlay"):
            setattr(config, option, False)
        _LIEF_CONFIG = config
        atexit.register(_forget_lief_config)
    return lief.ELF.parse(raw, _LIEF_CONFIG)


def _forget_lief_config() -> None:
    """Drop the parser config before interpreter teardown: nanobind reports objects still
    alive when LIEF's module is torn down as leaks, and module teardown order varies."""
    global _LIEF_CONFIG
    _LIEF_CONFIG = None


def _read_sections(raw: bytes, path: str) -> list[Section]:
    binary = _lief_parse(raw)
    if binary is None:
        raise ObjectFormatError("LIEF could not parse the ELF structure (corrupt headers)", path=path)
    sections: list[Section] = []
    alloc_total = 0
    shoff, = struct.unpack_from("<Q", raw, 40)
    shnum, = struct.unpack_from("<H", raw, 60)
    found = binary.sections
    if len(found) > shnum:
        raise ObjectFormatError(f"LIEF found {len(found)} sections but the header declares {shnum}", path=path)
    end = len(raw)
    names = [sec.name for sec in found]
    # The numbers come straight from the section headers LIEF parsed (bounds checked by
    # _check_header): LIEF tags sh_type per architecture and each attribute read is a
    # call into it.
    headers = struct.iter_unpack("<IIQQQQIIQQ", raw[shoff:shoff + 64 * len(names)])
    for index, (name, header) in enumerate(zip(names, headers)):
        _, kind, flags, _, offset, size, link, info, align, _ = header
        if isinstance(name, bytes):   # LIEF hands back bytes for a name that is not UTF-8
            name = name.decode("utf-8", "replace")
        if kind != SHT_NOBITS and kind != SHT_NULL and offset + size > end:
            raise ObjectFormatError(f"section {name or index} (offset {offset:#x}, size {size:#x}) runs past the end of the file ({end} bytes)", path=path)
        if flags & SHF_ALLOC:
            alloc_total += size
            if alloc_total > MAX_ALLOC_BYTES:
                raise ObjectFormatError(f"section {name or index} asks for {size:#x} bytes of memory; the loadable sections total more than {MAX_ALLOC_BYTES >> 20} MiB", path=path)
        if align > 1 << 16 or (align & (align - 1)):
            raise ObjectFormatError(f"section {name or index} has an invalid alignment {align}", path=path)
        data = b"" if kind == SHT_NOBITS or kind == SHT_NULL else raw[offset:offset + size]
        sections.append(_new(Section, (index, name, kind, flags, size, align or 1, link, info, data)))
    return sections


def _string_reader(table: bytes):
    """(names by start offset, name-at-offset reader) for a string table.

    The names that start right after a NUL (all but suffix-shared ones) come from a dict
    built by one split, with no Python call per symbol; the reader serves the rest.  An
    ASCII table (the usual case) is decoded once.
    """
    if table.isascii():
        text = table.decode("ascii")
        parts = text.split("\0")
        names = dict(zip(accumulate([len(part) + 1 for part in parts], initial=0), parts))

        def read(offset: int) -> str:
            end = text.find("\0", offset)
            return text[offset:end] if end >= 0 else text[offset:]
        return names, read
    return {}, lambda offset: _string_at(table, offset)


def _string_at(table: bytes, offset: int) -> str:
    if offset >= len(table):
        return ""
    end = table.find(b"\0", offset)
    return table[offset:end if end >= 0 else len(table)].decode("utf-8", "replace")


def _read_symbols(sections: list[Section], path: str) -> list[Symbol]:
    tables = [s for s in sections if s.type == SHT_SYMTAB]
    if not tables:
        return []
    symtab = tables[0]
    if symtab.size % 24:
        raise ObjectFormatError(f"section {symtab.name} size {symtab.size:#x} is not a multiple of the 24-byte symbol entry", path=path)
    if not 0 < symtab.link < len(sections):
        raise ObjectFormatError(f"section {symtab.name} links to string table index {symtab.link}, which does not exist", path=path)
    strtab = sections[symtab.link].data
    entries = list(struct.iter_unpack("<IBBHQQ", symtab.data))
    count = len(sections)
    for index, (name, _info, _other, shndx, _value, _size) in enumerate(entries):
        if shndx >= count:       # both checks below need an index past the table
            if shndx == SHN_XINDEX:
                raise ObjectFormatError(f"symbol {index} uses extended section indexes (SHN_XINDEX), which loader objects never need", path=path)
            if shndx < SHN_LORESERVE:
                raise ObjectFormatError(f"symbol {index} ({_string_at(strtab, name) or 'unnamed'}) names section index {shndx}, which does not exist", path=path)
    names, name_at = _string_reader(strtab)
    return [_new(Symbol, (index, names[name] if name in names else name_at(name), value, size, info & 0xF, info >> 4, shndx))
            for index, (name, info, _other, shndx, value, size) in enumerate(entries)]


def _read_relocations(sections: list[Section], symbols: list[Symbol], path: str) -> list[Relocation]:
    relocations = []
    for sec in sections:
        if sec.type == SHT_REL:
            raise ObjectFormatError(f"section {sec.name} holds REL relocations without addends; export objects use RELA", path=path)
        if sec.type != SHT_RELA:
            continue
        target = sec.info
        if not 0 < target < len(sections):
            raise ObjectFormatError(f"relocation section {sec.name} applies to section index {target}, which does not exist", path=path)
        patched = sections[target]
        if not patched.flags & SHF_ALLOC:
            continue  # relocations of non-loaded sections (debug info) never matter at run time
        if sec.size % 24:
            raise ObjectFormatError(f"relocation section {sec.name} size {sec.size:#x} is not a multiple of 24", path=path)
        # r_info is (symbol << 32) | type: unpacked little-endian as two 32-bit words, type first
        if sec.size and max(memoryview(sec.data).cast("I")[3::6]) >= len(symbols):     # symbol indexes, scanned in C
            for number, (offset, info, addend) in enumerate(struct.iter_unpack("<QQq", sec.data)):
                if info >> 32 >= len(symbols):
                    raise ObjectFormatError(f"relocation {number} in {sec.name} (offset {offset:#x} in {patched.name}) names symbol index {info >> 32}; the symbol table has {len(symbols)}", path=path)
        # (section,) + (offset, type, symbol, addend) for every entry, built without a Python loop
        relocations.extend(map(_new, repeat(Relocation), map((target,).__add__, struct.iter_unpack("<QIIq", sec.data))))
    return relocations
