"""Small ELF64 little-endian editing helpers for building hostile inputs from real fixtures.

Everything works on `bytearray`s with `struct`; no LIEF, so the helpers also work on
objects LIEF would refuse.  Used by the hostile-input and fault tests and by the fuzzer.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
X86 = FIXTURES / "cutlass-dsl-4.8.0" / "x86_64"
ARM = FIXTURES / "cutlass-dsl-4.8.0" / "aarch64"
SEED_X86 = X86 / "carveout_25.o"
SEED_ARM = ARM / "carveout_25.o"

SH_FIELDS = {  # name -> (offset in the 64-byte section header, struct format)
    "name": (0, "<I"), "type": (4, "<I"), "flags": (8, "<Q"), "addr": (16, "<Q"), "offset": (24, "<Q"),
    "size": (32, "<Q"), "link": (40, "<I"), "info": (44, "<I"), "addralign": (48, "<Q"), "entsize": (56, "<Q"),
}
SYM_FIELDS = {"name": (0, "<I"), "info": (4, "<B"), "other": (5, "<B"), "shndx": (6, "<H"), "value": (8, "<Q"), "size": (16, "<Q")}
RELA_FIELDS = {"offset": (0, "<Q"), "info": (8, "<Q"), "addend": (16, "<q")}


@dataclass
class SectionHeader:
    index: int
    header_offset: int      # where this header sits in the file
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    info: int
    addr: int = 0           # sh_addr: where a shared library's section is loaded


def fixture_bytes(path: Path = SEED_X86) -> bytearray:
    return bytearray(Path(path).read_bytes())


def sections(raw: bytes) -> list[SectionHeader]:
    shoff, = struct.unpack_from("<Q", raw, 40)
    shnum, shstrndx = struct.unpack_from("<HH", raw, 60)
    headers = []
    for index in range(shnum):
        at = shoff + 64 * index
        name, kind, flags, addr, offset, size, link, info = struct.unpack_from("<IIQQQQII", raw, at)
        headers.append([index, at, name, kind, flags, offset, size, link, info, addr])
    strtab = headers[shstrndx]
    names = bytes(raw[strtab[5]:strtab[5] + strtab[6]])
    result = []
    for index, at, name, kind, flags, offset, size, link, info, addr in headers:
        text = names[name:names.index(b"\0", name)].decode() if name < len(names) else ""
        result.append(SectionHeader(index, at, text, kind, flags, offset, size, link, info, addr))
    return result


def section(raw: bytes, name: str) -> SectionHeader:
    return next(s for s in sections(raw) if s.name == name)


def set_section_field(raw: bytearray, index_or_name, field: str, value: int) -> bytearray:
    header = section(raw, index_or_name) if isinstance(index_or_name, str) else sections(raw)[index_or_name]
    offset, fmt = SH_FIELDS[field]
    struct.pack_into(fmt, raw, header.header_offset + offset, value)
    return raw


def symbols(raw: bytes) -> list[dict]:
    """Each symbol: index, name, file offset of its entry, and its fields."""
    symtab = next(s for s in sections(raw) if s.type == 2)
    strtab = sections(raw)[symtab.link]
    names = bytes(raw[strtab.offset:strtab.offset + strtab.size])
    result = []
    for index in range(symtab.size // 24):
        at = symtab.offset + 24 * index
        name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", raw, at)
        text = names[name:names.index(b"\0", name)].decode()
        result.append(dict(index=index, name=text, entry_offset=at, name_offset=strtab.offset + name,
                           info=info, shndx=shndx, value=value, size=size))
    return result


def symbol(raw: bytes, name: str) -> dict:
    return next(s for s in symbols(raw) if s["name"] == name)


def set_symbol_field(raw: bytearray, name_or_index, field: str, value: int) -> bytearray:
    entry = symbols(raw)[name_or_index] if isinstance(name_or_index, int) else symbol(raw, name_or_index)
    offset, fmt = SYM_FIELDS[field]
    struct.pack_into(fmt, raw, entry["entry_offset"] + offset, value)
    return raw


def relocations(raw: bytes, section_name: str = ".rela.ltext") -> list[dict]:
    rela = section(raw, section_name)
    result = []
    for number in range(rela.size // 24):
        at = rela.offset + 24 * number
        offset, info, addend = struct.unpack_from("<QQq", raw, at)
        result.append(dict(number=number, entry_offset=at, offset=offset, symbol=info >> 32, type=info & 0xFFFFFFFF, addend=addend))
    return result


def set_relocation(raw: bytearray, number: int, section_name: str = ".rela.ltext", *, offset: int | None = None,
                   symbol: int | None = None, type: int | None = None, addend: int | None = None) -> bytearray:
    entry = relocations(raw, section_name)[number]
    offset = entry["offset"] if offset is None else offset
    symbol = entry["symbol"] if symbol is None else symbol
    type = entry["type"] if type is None else type
    addend = entry["addend"] if addend is None else addend
    struct.pack_into("<QQq", raw, entry["entry_offset"], offset, (symbol << 32) | type, addend)
    return raw


def function_file_offset(raw: bytes, name: str) -> int:
    """The file offset of a defined function's first byte (a library's symbol value is an address)."""
    entry = symbol(raw, name)
    header = sections(raw)[entry["shndx"]]
    return header.offset + entry["value"] - header.addr


def patch_function(raw: bytearray, name: str, code: bytes) -> bytearray:
    at = function_file_offset(raw, name)
    raw[at:at + len(code)] = code
    return raw


def rename_symbol(raw: bytearray, old: str, new: str) -> bytearray:
    """Rewrite a symbol's name in place in the string table (same length)."""
    assert len(old) == len(new)
    at = symbol(raw, old)["name_offset"]
    assert raw[at:at + len(old)] == old.encode()
    raw[at:at + len(new)] = new.encode()
    return raw


# -- shared libraries: program headers and the dynamic section --------------------------------------------
PH_FIELDS = {"type": (0, "<I"), "flags": (4, "<I"), "offset": (8, "<Q"), "vaddr": (16, "<Q"), "paddr": (24, "<Q"),
             "filesz": (32, "<Q"), "memsz": (40, "<Q"), "align": (48, "<Q")}
PT_LOAD, PT_DYNAMIC = 1, 2


def program_headers(raw: bytes) -> list[dict]:
    """Each program header: index, file offset of its entry, and its fields."""
    phoff, = struct.unpack_from("<Q", raw, 32)
    phnum, = struct.unpack_from("<H", raw, 56)
    return [dict(index=index, entry_offset=phoff + 56 * index,
                 **dict(zip(PH_FIELDS, struct.unpack_from("<IIQQQQQQ", raw, phoff + 56 * index))))
            for index in range(phnum)]


def set_program_header(raw: bytearray, index: int, field: str, value: int) -> bytearray:
    offset, fmt = PH_FIELDS[field]
    struct.pack_into(fmt, raw, program_headers(raw)[index]["entry_offset"] + offset, value)
    return raw


def dynamic_entries(raw: bytes) -> list[dict]:
    """Each entry of the dynamic section up to DT_NULL: number, file offset, tag, value."""
    dynamic = next(h for h in program_headers(raw) if h["type"] == PT_DYNAMIC)
    result = []
    for number in range(dynamic["filesz"] // 16):
        at = dynamic["offset"] + 16 * number
        tag, value = struct.unpack_from("<qQ", raw, at)
        result.append(dict(number=number, entry_offset=at, tag=tag, value=value))
        if tag == 0:
            break
    return result


def set_dynamic(raw: bytearray, tag: int, value: int, *, new_tag: int | None = None) -> bytearray:
    """Give the first entry with `tag` a new value (and, with `new_tag`, a new tag)."""
    entry = next(e for e in dynamic_entries(raw) if e["tag"] == tag)
    struct.pack_into("<qQ", raw, entry["entry_offset"], tag if new_tag is None else new_tag, value)
    return raw


def dynamic_value(raw: bytes, tag: int) -> int:
    return next(e["value"] for e in dynamic_entries(raw) if e["tag"] == tag)
