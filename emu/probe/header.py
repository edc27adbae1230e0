"""Read what the probe needs from an export's generated C header: its prefix, the module load
function, the launch wrapper's parameters and the structs those parameters point to.

The header is the export's public interface (what a C++ application includes), so the probe calls
the export only through it.  Only the forms `export_to_c` writes are understood; anything else is
a `HeaderError` naming the header and what is missing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

# <prefix>_Kernel_Module_Load(<prefix>_Kernel_Module_t *module) since 4.4; 4.3 wrote _Kernel_Metadata_Load(.. *metadata)
_LOAD = re.compile(r"static inline void ((\w+)_Kernel_(?:Module|Metadata)_Load)\((\w+) \*\w+\)")
_WRAPPER = re.compile(r"static inline int32_t ((?:cute_dsl_)?\w+_wrapper)\(([^)]*)\)\s*\{", re.S)
_STRUCT = re.compile(r"typedef struct\s*\{([^{}]*)\}\s*(\w+);", re.S)
_FIELD = re.compile(r"^\s*([\w ]+?)\s*(\*?)\s*(\w+)\s*(?:\[(\d+)\])?\s*;\s*$")
_PARAM = re.compile(r"^\s*([\w ]+?)\s*(\*?)\s*(\w+)\s*$")


class HeaderError(ValueError):
    """The header is not one `export_to_c` writes (or is cut short)."""


@dataclass(frozen=True)
class StructField:
    ctype: str          # "void", "int32_t", "int64_t", ...
    pointer: bool
    name: str
    count: int | None   # array length, None for a plain field


@dataclass(frozen=True)
class Param:
    ctype: str
    pointer: bool
    name: str


@dataclass
class ExportHeader:
    path: str
    prefix: str
    load_function: str
    module_type: str
    wrapper: str | None
    params: list[Param] = field(default_factory=list)          # after the module pointer
    structs: dict[str, list[StructField]] = field(default_factory=dict)


def parse_header(path: str | Path) -> ExportHeader:
    text = Path(path).read_text(errors="replace")
    load = _LOAD.search(text)
    if load is None:
        raise HeaderError(f"{path}: no `static inline void <prefix>_Kernel_Module_Load(<prefix>_Kernel_Module_t *module)` "
                          "(nor 4.3's `_Kernel_Metadata_Load`); "
                          "this is not a header written by CuTe DSL's export_to_c")
    load_function, prefix, module_type = load.groups()
    structs = {name: _fields(body, path, name) for body, name in _STRUCT.findall(text)}
    wrapper = _WRAPPER.search(text)
    if wrapper is None:
        return ExportHeader(str(path), prefix, load_function, module_type, None, [], structs)
    params = [_param(p, path) for p in wrapper.group(2).split(",") if p.strip()]
    if not params or params[0].ctype != module_type or not params[0].pointer:
        raise HeaderError(f"{path}: the wrapper {wrapper.group(1)} does not take a `{module_type} *` first")
    return ExportHeader(str(path), prefix, load_function, module_type, wrapper.group(1), params[1:], structs)


def _fields(body: str, path, struct: str) -> list[StructField]:
    fields = []
    for line in body.strip().splitlines():
        if not line.strip():
            continue
        match = _FIELD.match(line)
        if match is None:
            raise HeaderError(f"{path}: struct {struct} has a field the probe cannot read: {line.strip()!r}")
        ctype, star, name, count = match.groups()
        fields.append(StructField(ctype.strip(), bool(star), name, int(count) if count else None))
    return fields


def _param(text: str, path) -> Param:
    match = _PARAM.match(text.replace("\n", " "))
    if match is None:
        raise HeaderError(f"{path}: a wrapper parameter the probe cannot read: {text.strip()!r}")
    ctype, star, name = match.groups()
    return Param(ctype.strip(), bool(star), name)
