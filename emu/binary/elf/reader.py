"""Read an ELF relocatable object into plain Python data, validating as we go.

LIEF parses the ELF header and the section table; the symbol and relocation tables are
decoded here from their section bytes with `struct`, which is both faster than walking
LIEF's per-entry objects and gives the raw psABI relocation numbers (LIEF tags them with
an architecture bit).  Everything downstream (layout, relocation, emulation) works on
the `ObjectFile` returned here and never touches LIEF, so a parsed object can be cached.
"""
from __future__ import annotations

import atexit
import os
import struct
from itertools import accumulate, compress, count, repeat
from operator import add, and_, itemgetter, rshift
from pathlib import Path
from typing import NamedTuple

from ...arch import BY_MACHINE, supported_machines
from ...errors import ObjectFormatError
from ...support.sha256 import sha256 as sha256_of

SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 0, 1, 2, 3, 4, 8, 9
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
SHN_UNDEF, SHN_LORESERVE, SHN_ABS, SHN_COMMON, SHN_XINDEX = 0, 0xFF00, 0xFFF1, 0xFFF2, 0xFFFF
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION, STT_FILE = 0, 1, 2, 3, 4
ET_REL, ET_DYN = 1, 3
MACHINES = {machine: entry.name for machine, entry in BY_MACHINE.items()}     # ELF e_machine -> emu's name

MAX_OBJECT_BYTES = 256 << 20
PASS = "pass the .o that export_to_c wrote or a shared library linked from it"
MAX_ALLOC_BYTES = 64 << 20   # sum of SHF_ALLOC section sizes (NOBITS included)


_new = tuple.__new__    # builds a NamedTuple without its Python-level __new__ (an object has hundreds)
_NAME, _BINDING = itemgetter(1), itemgetter(5)      # Symbol.name, Symbol.binding


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


RELA_ENTRY = struct.Struct("<QIIq")    # r_offset, then r_info as (type, symbol) words, r_addend


class ObjectFile:
    """A parsed object as plain data: sections, symbols and relocations.

    Relocations are kept as their tables, `(patched section index, packed RELA entries)`,
    which the loader's bulk loop unpacks as it goes; `relocations` builds the records
    (for tools, tests and errors) the first time it is read.
    """

    def __init__(self, path: str, arch: str, sha256: str, sections: list[Section], symbols: list[Symbol],
                 relocations: list[Relocation] | None = None, relocation_tables: list[tuple[int, bytes]] | None = None):
        self.path, self.arch, self.sha256, self.sections, self.symbols = path, arch, sha256, sections, symbols
        self._relocations = relocations
        self.relocation_tables = relocation_tables if relocation_tables is not None else _tables_of(relocations or [])
        self._by_name: dict[str, Symbol] | None = None

    def __repr__(self) -> str:
        return f"ObjectFile(path={self.path!r}, arch={self.arch!r}, sha256={self.sha256[:12]!r}..)"

    @property
    def relocations(self) -> list[Relocation]:
        if self._relocations is None:
            self._relocations = [_new(Relocation, (index, *entry)) for index, table in self.relocation_tables
                                 for entry in RELA_ENTRY.iter_unpack(table)]
        return self._relocations

    def symbol(self, name: str) -> Symbol | None:
        """The symbol called `name`: a global or weak one if there is one, else the first local."""
        by_name = self._by_name
        if by_name is None:
            symbols = self.symbols
            by_name = dict(zip(map(_NAME, reversed(symbols)), reversed(symbols)))     # the first of each name...
            bound = list(compress(symbols, map(_BINDING, symbols)))
            by_name.update(zip(map(_NAME, bound), bound))                             # ...unless a global or weak one
            by_name.pop("", None)
            self._by_name = by_name
        return by_name.get(name) if name else None

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


def read_object_bytes(path: str, size: int | None = None) -> bytes:
    """The file's bytes, refusing unreadable paths and files too large to be a loader object.

    `size`, from a stat the caller made anyway, saves an fstat; a file whose size has
    changed since is still read whole (the read loops until end of file).
    """
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            if size is None:
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
        raise ObjectFormatError.unreadable(path, error) from None
    if len(raw) > MAX_OBJECT_BYTES:
        raise ObjectFormatError(f"file is larger than {MAX_OBJECT_BYTES >> 20} MiB; not a loader object", path=path)
    return raw


def load_object(path: str | Path) -> ObjectFile:
    """Parse and validate the relocatable object at `path` (a library: emu.binary.formats.parse_file)."""
    path = str(path)
    raw = read_object_bytes(path)
    if elf_type(raw) != ET_REL:
        raise refusal(raw, path)
    return parse_object(raw, path)


def elf_type(raw: bytes) -> int | None:
    """e_type of a 64-bit little-endian ELF file, None for any other file: what emu's ELF formats accept by."""
    if len(raw) < 64 or raw[:4] != b"\x7fELF" or raw[4] != 2 or raw[5] != 1:
        return None
    return struct.unpack_from("<H", raw, 16)[0]


def refusal(raw: bytes, path: str) -> ObjectFormatError:
    """Why emu loads no binary from these bytes (no format accepted them): what is wrong with their ELF
    identity (raised), else what their type is."""
    _check_identity(raw, path)
    e_type, = struct.unpack_from("<H", raw, 16)
    what = {2: "an executable (ET_EXEC)", 3: "a PIE executable (ET_DYN with a program interpreter)",
            4: "a core dump (ET_CORE)"}.get(e_type, f"ELF type {e_type}")
    return ObjectFormatError(f"this is {what}, neither a relocatable object (ET_REL) nor a shared library; {PASS}", path=path)


def parse_object(raw: bytes, path: str = "<bytes>", sha256: str | None = None) -> ObjectFile:
    """The ObjectFile of an ET_REL file's bytes (emu.binary.formats says which files are one)."""
    machine = check_header(raw, path)
    sections = _read_sections(raw, path)
    symbols = _read_symbols(sections, path)
    tables = _read_relocations(sections, symbols, path)
    return ObjectFile(path=path, arch=MACHINES[machine], sha256=sha256 or sha256_of(raw).hexdigest(),
                      sections=sections, symbols=symbols, relocation_tables=tables)


def check_header(raw: bytes, path: str) -> int:
    """Check the ELF header ourselves before LIEF sees the file, for exact messages; its e_machine."""
    _check_identity(raw, path)
    e_machine, = struct.unpack_from("<H", raw, 18)
    if e_machine not in MACHINES:
        raise ObjectFormatError(f"ELF machine {e_machine} is not supported; emu runs {supported_machines()} objects", path=path)
    shoff, = struct.unpack_from("<Q", raw, 40)
    shentsize, shnum = struct.unpack_from("<HH", raw, 58)
    if shnum and shentsize != 64:
        raise ObjectFormatError(f"section header entry size is {shentsize}, expected 64", path=path)
    if shoff + shnum * 64 > len(raw):
        raise ObjectFormatError(f"section header table at offset {shoff:#x} ({shnum} entries) runs past the end of the file ({len(raw)} bytes)", path=path)
    return e_machine


def _check_identity(raw: bytes, path: str) -> None:
    """The checks every ELF file emu reads passes first: an ELF file, whole header, 64-bit, little-endian."""
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


_LIEF_CONFIG = None


def lief_parse(raw: bytes):
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
    binary = lief_parse(raw)
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
    # check_header): LIEF tags sh_type per architecture and each attribute read is a
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


def _names_at(table: bytes, offsets) -> list[str]:
    """The NUL-terminated names at `offsets` in a string table.

    Names that start right after a NUL (all but suffix-shared ones) come from one split
    of the table into a dict by start offset, with no Python call per name; the few
    others are cut out one by one.  An ASCII table (the usual case) is decoded once.
    """
    if not table.isascii():
        return [_string_at(table, offset) for offset in offsets]
    text = table.decode("ascii")
    parts = text.split("\0")
    starts = map(add, accumulate(map(len, parts), initial=0), count())      # part i starts after i NULs
    found = list(map(dict(zip(starts, parts)).get, offsets))
    if None in found:
        for index, offset in enumerate(offsets):
            if found[index] is None:
                found[index] = _string_at(table, offset)
    return found


def _string_at(table: bytes, offset: int) -> str:
    if offset >= len(table):
        return ""
    end = table.find(b"\0", offset)
    return table[offset:end if end >= 0 else len(table)].decode("utf-8", "replace")


def _read_symbols(sections: list[Section], path: str) -> list[Symbol]:
    """The symbol table, decoded column by column: each column is a strided view of the entries."""
    tables = [s for s in sections if s.type == SHT_SYMTAB]
    if not tables:
        return []
    symtab = tables[0]
    if symtab.size % 24:
        raise ObjectFormatError(f"section {symtab.name} size {symtab.size:#x} is not a multiple of the 24-byte symbol entry", path=path)
    if not 0 < symtab.link < len(sections):
        raise ObjectFormatError(f"section {symtab.name} links to string table index {symtab.link}, which does not exist", path=path)
    return decode_symbols(symtab.data, sections[symtab.link].data, len(sections), path)


def decode_symbols(data: bytes, strtab: bytes, sections_count: int, path: str) -> list[Symbol]:
    """Elf64_Sym entries (24 bytes each) named from `strtab`, section indexes checked: .symtab, a library's .dynsym."""
    if not data:
        return []
    # Elf64_Sym: st_name (u32), st_info (u8), st_other (u8), st_shndx (u16), st_value, st_size (u64)
    words, halves, quads = memoryview(data).cast("I"), memoryview(data).cast("H"), memoryview(data).cast("Q")
    shndxs = halves[3::12]
    if max(shndxs) >= sections_count:
        for index, shndx in enumerate(shndxs):      # both checks need an index past the table
            if shndx >= sections_count and (shndx == SHN_XINDEX or shndx < SHN_LORESERVE):
                if shndx == SHN_XINDEX:
                    raise ObjectFormatError(f"symbol {index} uses extended section indexes (SHN_XINDEX), which loader objects never need", path=path)
                raise ObjectFormatError(f"symbol {index} ({_string_at(strtab, words[6 * index]) or 'unnamed'}) names section index {shndx}, which does not exist", path=path)
    infos = data[4::24]
    names = _names_at(strtab, words[0::6].tolist())
    columns = zip(range(len(names)), names, quads[1::3], quads[2::3], map(and_, infos, repeat(0xF)),
                  map(rshift, infos, repeat(4)), shndxs)
    return list(map(_new, repeat(Symbol), columns))


def _tables_of(relocations: list[Relocation]) -> list[tuple[int, bytes]]:
    """Relocation records packed back into tables, one per run of records against one section."""
    tables: list[tuple[int, list]] = []
    for rel in relocations:
        if not tables or tables[-1][0] != rel.section:
            tables.append((rel.section, []))
        tables[-1][1].append(RELA_ENTRY.pack(rel.offset, rel.type, rel.symbol, rel.addend))
    return [(index, b"".join(entries)) for index, entries in tables]


def _read_relocations(sections: list[Section], symbols: list[Symbol], path: str) -> list[tuple[int, bytes]]:
    """The RELA tables of loaded sections, checked: (patched section index, entries)."""
    tables = []
    for sec in sections:
        kind = sec.type
        if kind != SHT_RELA:
            if kind == SHT_REL:
                raise ObjectFormatError(f"section {sec.name} holds REL relocations without addends; export objects use RELA", path=path)
            continue
        target = sec.info
        if not 0 < target < len(sections):
            raise ObjectFormatError(f"relocation section {sec.name} applies to section index {target}, which does not exist", path=path)
        patched = sections[target]
        if not patched.flags & SHF_ALLOC:
            continue  # relocations of non-loaded sections (debug info) never matter at run time
        if sec.size % 24:
            raise ObjectFormatError(f"relocation section {sec.name} size {sec.size:#x} is not a multiple of 24", path=path)
        if not sec.size:
            continue
        if max(memoryview(sec.data).cast("I")[3::6]) >= len(symbols):     # symbol indexes, scanned in C
            for number, (offset, _, symbol, _) in enumerate(RELA_ENTRY.iter_unpack(sec.data)):
                if symbol >= len(symbols):
                    raise ObjectFormatError(f"relocation {number} in {sec.name} (offset {offset:#x} in {patched.name}) names symbol index {symbol}; the symbol table has {len(symbols)}", path=path)
        tables.append((target, sec.data))
    return tables
