"""Launch signatures read from headers, kept on disk so that a later run never imports pycparser.

Reading a header's signature (emu.dsl.header.parse) costs a short `python -m emu run` about 40 ms:
importing pycparser, compiling its lexer's expressions and parsing.  The first run that reads
a header stores the signature under `$EMU_CACHE_DIR/headers/<code digest>/<key>.json`
(emu.cache.derived_store: `EMU_CACHE_DIR=off` turns it off), keyed by the architecture and the
header's text; later runs read it back.  A change to the parser, its C rules or this format
(`CODE`) makes the next run parse again.

The entry is plain JSON, read back field by field with each type checked: nothing in it is
unpickled or trusted, and an entry that does not read back as a signature is ignored and the
header parsed again.  A header that does not parse is not stored: its error always comes from
the parser.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

from .derived_store import MISSING, DerivedStore
from ..dsl.header.types import CField, CStruct, HeaderParam, HeaderSignature, PackedSlot

# The code that shapes a stored signature, relative to the emu package.
CODE = ("dsl/header", "cache")         # the packages that parse and store it
STORE = DerivedStore("headers", CODE, format=1, libraries=("pycparser",))     # pycparser parses the header
PARAM_KINDS = frozenset({"tensor", "tensor_list", "scalar", "stream", "pointer", "array"})
SLOT_KINDS = frozenset({"value", "address", "element", "list_element", "ret"})
MAX_STRUCT_DEPTH = 64          # as deep as emu.dsl.header.parse lays structs out


@lru_cache(maxsize=64)
def header_signature(text: str, path: str, arch: str) -> HeaderSignature | None:
    """What `emu.dsl.header.parse.parse_header(text, path, arch)` answers, from the store when a run stored it."""
    entry = entry_path(text, arch)
    if entry is not None:
        stored = _read(entry)
        if stored is not MISSING:
            return stored
    from ..dsl.header.parse import parse_header          # pycparser: only for a header the store does not hold
    signature = parse_header(text, path, arch)
    if entry is not None:
        STORE.write(entry, None if signature is None else _plain(signature))
    return signature


def entry_path(text: str, arch: str) -> str | None:
    return STORE.entry(arch, text)


def _read(entry: str) -> Any:
    """The stored signature (None: the header has no launch wrapper), or MISSING."""
    value = STORE.read(entry)
    if value is None or value is MISSING:
        return value
    try:
        return _signature(value)
    except (ValueError, TypeError, RecursionError):
        return MISSING


def _plain(value: Any) -> Any:
    """A signature as JSON data: each record a mapping of its fields, each tuple a list."""
    if hasattr(value, "_asdict"):
        return {name: _plain(field) for name, field in value._asdict().items()}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


# -- an entry read back, every field checked ------------------------------------------------------
def _signature(data: Any) -> HeaderSignature:
    return _build(HeaderSignature, data, wrapper=_text, launch_function=_text, params=_tuple_of(_param),
                  slots=_tuple_of(_slot), return_type=_text)


def _param(data: Any) -> HeaderParam:
    return _build(HeaderParam, data, name=_text, ctype=_text, kind=_one_of(PARAM_KINDS), struct=_optional(_struct),
                  element=_optional(_text))


def _slot(data: Any) -> PackedSlot:
    return _build(PackedSlot, data, param=_text, how=_one_of(SLOT_KINDS), index=_count)


def _struct(data: Any, depth: int = 0) -> CStruct:
    if depth > MAX_STRUCT_DEPTH:
        raise ValueError("structs nest too deep")
    return _build(CStruct, data, name=_text, size=_count, align=_count,
                  fields=_tuple_of(lambda field: _field(field, depth)))


def _field(data: Any, depth: int) -> CField:
    return _build(CField, data, name=_text, ctype=_text, offset=_count, size=_count, count=_optional(_count),
                  struct=_optional(lambda struct: _struct(struct, depth + 1)))


def _build(cls: type, data: Any, **checks: Callable[[Any], Any]):
    """`cls` from a mapping with exactly its fields, each value passed through its check."""
    if not isinstance(data, dict) or data.keys() != checks.keys():
        raise ValueError(f"not a {cls.__name__}")
    return cls(**{name: check(data[name]) for name, check in checks.items()})


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("not a string")
    return value


def _count(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise ValueError("not a count")
    return value


def _one_of(choices: frozenset[str]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"not one of {sorted(choices)}")
        return value
    return check


def _optional(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else check(value)


def _tuple_of(check: Callable[[Any], Any]) -> Callable[[Any], tuple]:
    def checked(value: Any) -> tuple:
        if not isinstance(value, list):
            raise ValueError("not a list")
        return tuple(check(item) for item in value)
    return checked
