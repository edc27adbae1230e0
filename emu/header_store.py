"""Launch signatures read from headers, kept on disk so that a later run never imports pycparser.

Reading a header's signature (emu.header) costs a short `python -m emu run` about 40 ms:
importing pycparser, compiling its lexer's expressions and parsing.  The first run that reads
a header stores the signature under `$EMU_CACHE_DIR/headers/<code digest>/<key>.json` (the
image store's folder, emu.image_store.store_dir; `EMU_CACHE_DIR=off` disables both), keyed by
the SHA-256 of the architecture and the header's text; later runs read it back.  The folder is
named by a digest of the code that shapes a signature (`CODE`), so a change to the parser, its
C rules or this format makes the next run parse again.

An entry is plain JSON, read back field by field with each type checked: the store is a file
anyone could edit, so nothing in it is unpickled or trusted, and an entry that does not read
back as a signature is ignored and the header parsed again.  A header that does not parse is
not stored: its error always comes from the parser.
"""
from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from typing import Any, Callable

from .header_types import CField, CStruct, HeaderParam, HeaderSignature, PackedSlot
from .image_store import code_digest, store_dir

FORMAT = 1
CODE = ("header.py", "c_source.py", "header_types.py", "header_store.py")     # relative to the emu package
PARAM_KINDS = frozenset({"tensor", "tensor_list", "scalar", "stream", "pointer", "array"})
SLOT_KINDS = frozenset({"value", "address", "element", "list_element", "ret"})
MAX_STRUCT_DEPTH = 64          # as deep as emu.header lays structs out

_MISSING = object()
_FOLDERS: dict[tuple[str | None, str | None], str | None] = {}     # (EMU_CACHE_DIR, HOME) -> this code's folder


@lru_cache(maxsize=64)
def header_signature(text: str, path: str, arch: str) -> HeaderSignature | None:
    """What `emu.header.parse_header(text, path, arch)` answers, from the store when a run stored it."""
    entry = entry_path(text, arch)
    if entry is not None:
        stored = _read(entry)
        if stored is not _MISSING:
            return stored
    from .header import parse_header          # pycparser: only for a header the store does not hold
    signature = parse_header(text, path, arch)
    if entry is not None:
        _write(entry, signature)
    return signature


def entry_path(text: str, arch: str) -> str | None:
    environ = os.environ
    where = (environ.get("EMU_CACHE_DIR"), environ.get("HOME"))
    folder = _FOLDERS.get(where, "")
    if folder == "":
        store = store_dir()
        folder = _FOLDERS[where] = os.path.join(store, "headers", code_digest(code=CODE)[:24]) if store else None
    if folder is None:
        return None
    key = hashlib.sha256(f"{arch}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()
    return os.path.join(folder, f"{key}.json")


def _read(entry: str) -> Any:
    """The stored signature (None: the header has no launch wrapper), or _MISSING."""
    if not os.access(entry, os.R_OK):         # the usual miss: no exception raised and caught
        return _MISSING
    try:
        with open(entry, "rb") as handle:
            record = json.loads(handle.read())
        if not isinstance(record, dict) or record.get("format") != FORMAT or set(record) != {"format", "signature"}:
            return _MISSING
        return None if record["signature"] is None else _signature(record["signature"])
    except (OSError, ValueError, TypeError, RecursionError):
        return _MISSING


def _write(entry: str, signature: HeaderSignature | None) -> None:
    import tempfile                           # only a run that stores pays for importing it

    record = {"format": FORMAT, "signature": None if signature is None else _plain(signature)}
    folder = os.path.dirname(entry)
    try:
        os.makedirs(folder, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(handle, "w") as out:
            json.dump(record, out, separators=(",", ":"))
        os.replace(temporary, entry)
    except OSError:
        pass     # a read-only or full disk only costs the next run a parse


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
