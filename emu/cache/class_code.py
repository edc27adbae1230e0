"""The code CPython compiles for every dataclass and named tuple, kept between `python -m emu` processes.

Making a dataclass compiles the source of each method it generates (`__init__`, `__repr__`, `__eq__`...),
and a named tuple its `__new__`: about 360 compilations in a cold one-object run (emu's classes and its
libraries'), 30-50 ms of it, the same text in every process; pydantic's reading of postponed annotations
compiles each as a `typing.ForwardRef` (about 300 more), and emu's generated functions (emu.support.hotpath)
theirs.  `install()` gives the `dataclasses` and `collections` modules an `exec`, and `typing` a `compile`,
that look the text up among code objects compiled by an earlier process; `save()` adds what this process
compiled.

Right by construction: the key is the exact source text; the file is named by what else decides what
`compile` makes of it (the interpreter's exact version and build, its optimisation level); a code object
is compiled as the builtin `exec` or `compile` compiles it there (the same file name and mode, no future
features: none of those modules has any, and emu's generated text is compiled without).  The file is
marshal data in emu's store folder (emu.cache.root; indexed: a code is unmarshalled when first looked up,
not all of them at start), which Python itself trusts as it trusts its `__pycache__`; a file that does not
read back is ignored and rewritten.
Standard library only: `python -m emu` installs it before importing anything that makes a class.
"""
from __future__ import annotations

import builtins
import marshal
import sys
from types import CodeType as _CODE

from .root import indexed_data, interpreter_store_file, read_index, read_indexed, write_indexed

MAX_ENTRIES = 4096          # a bound on the file: only emu's and its libraries' classes are made in its processes

_codes: dict[tuple[str, str, str], object] = {}     # (source, file name, mode) -> code, or where the store has it until used
_state = {"path": None, "added": 0, "file": None}     # file: the store read at install (its view, its data's start)
_builtin_exec = builtins.exec


def _read(path: str) -> dict[tuple[str, str, str], memoryview]:
    """Every entry of the store: key -> a view of its code's marshal data."""
    found = read_indexed(path) or {}
    if not all(type(k) is tuple and len(k) == 3 and all(type(part) is str for part in k) for k in found):
        return {}
    return {key: data for key, (_, data) in found.items()}


def _stored(key: tuple[str, str, str], where) -> object | None:
    """The code the store holds for `key` (its index entry `where` in the file read at install), or None."""
    data = indexed_data(*_state["file"], where)
    try:
        code = marshal.loads(data) if data is not None else None
    except (EOFError, ValueError, TypeError):
        code = None
    if type(code) is not _CODE:             # data that does not read back as code: compiled afresh, stored again
        del _codes[key]
        return None
    _codes[key] = code
    return code


def cached_compile(source: str, filename: str, mode: str):
    """`compile(source, filename, mode)` without inherited future features, from (or added to) the store once
    it is installed; compiled afresh otherwise."""
    if _state["path"] is None:
        return compile(source, filename, mode, dont_inherit=True)
    key = (source, filename, mode)
    code = _codes.get(key)
    if code is not None and type(code) is not _CODE:
        code = _stored(key, code)
    if code is None:
        code = compile(source, filename, mode, dont_inherit=True)
        if len(_codes) < MAX_ENTRIES:
            _codes[key] = code
            _state["added"] += 1
    return code


def cached_exec(source, globals=None, locals=None, /):
    """The builtin `exec`, with a string's code taken from (or added to) the store."""
    if globals is None:             # as the builtin: the caller's namespace (neither module calls it so)
        frame = sys._getframe(1)
        globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
    if type(source) is str:
        source = cached_compile(source, "<string>", "exec")
    return _builtin_exec(source, globals, locals)


def _typing_compile(source, filename, mode, *args, **kwargs):
    """typing's `compile` (a forward reference's text, compiled as an expression)."""
    if args or kwargs or type(source) is not str:
        return compile(source, filename, mode, *args, **kwargs)
    return cached_compile(source, filename, mode)


def install() -> None:
    """Read the store and give `dataclasses` and `collections` the caching `exec` (once per process)."""
    if _state["path"] is not None:
        return
    path = interpreter_store_file("class_code")
    if path is None:
        return
    _state["path"] = path
    found = read_index(path)            # the keys, each with where its code is: unmarshalled when first looked up
    if found is not None:
        index, view, base = found
        _state["file"] = (view, base)
        _codes.update(index)
    import collections
    import dataclasses
    import typing
    dataclasses.exec = collections.exec = cached_exec
    typing.compile = _typing_compile


def save() -> None:
    """Add what this process compiled to the store (merged with what others saved meanwhile)."""
    path = _state["path"]
    if path is None or not _state["added"]:
        return
    merged = _read(path)
    for key, code in list(_codes.items()):
        if len(merged) >= MAX_ENTRIES and key not in merged:
            continue
        if type(code) is _CODE:
            merged[key] = marshal.dumps(code)
        elif key not in merged and (data := indexed_data(*_state["file"], code)) is not None:
            merged[key] = data                  # read at install, never used here
    try:
        write_indexed(path, {key: (None, data) for key, data in merged.items()})
    except OSError:
        pass            # a read-only or full disk only costs the next process the compilations
    _state["added"] = 0
