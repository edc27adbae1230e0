"""The bytecode of emu's own modules, kept in one store file between `python -m emu` processes.

Importing a module from its `__pycache__` costs CPython about 0.1 ms here above running it (finding
the file among the folder's, a stat, opening and reading the .pyc, checking its header, the module's
attributes): a cold one-object run imports some 130 of emu's modules, over 10 ms of it.  `install()`
puts a finder first on `sys.meta_path` that serves a submodule of emu's packages (`emu.*`,
`stub_models.*`) from the one file a `python -m emu` process read at start: one stat of the source and
the code unmarshalled, about a fifth of that.  `save()` adds the modules this process imported the
usual way, with the code CPython ran: the valid .pyc's (as CPython checks it: the source's size and
whole-second time), else compiled from the source as CPython compiles it (so that a process with
PYTHONDONTWRITEBYTECODE=1 compiles emu once, not every time).

Right by construction: a module is served only where CPython's path finder would find that same file:
its package's `__path__` is the one folder recorded, that folder (and a package's own) is unchanged
since (its modification time: any file added, removed or renamed in it changes it; a finder's cache
of the folder's listing is refreshed the same way), and the source has the recorded size and time in
nanoseconds (and neither changed within two seconds of being recorded: a coarse clock may not have moved).
The module is then made as CPython makes it (the spec `spec_from_file_location` makes,
a SourceFileLoader for `__file__`, `__cached__`, source and resources), except that its code comes
from the store.  The store is marshal data in emu's store folder (emu.cache.root: an indexed file) named by the
interpreter's exact build and optimisation level, which Python trusts as it trusts its `__pycache__`;
a file that does not read back is ignored and rewritten.  Standard library only.
"""
from __future__ import annotations

import marshal
import os
import sys
import time
from importlib.machinery import SourceFileLoader
from importlib.util import MAGIC_NUMBER, spec_from_file_location

from .root import SETTLED_NS, interpreter_store_file, read_indexed, write_indexed

PACKAGES = ("emu.", "stub_models.")     # the submodules served: emu's own code, nothing else
MAX_ENTRIES = 1024                      # a bound on the file: emu and stub_models have about 300 modules

# name -> (source path, package folder or None, searched folder, source size, source mtime_ns,
#          ((folder, mtime_ns), ...), code as marshal data: bytes, or a view of the store file's)
_entries: dict[str, tuple] = {}
_folders: dict[str, int | None] = {}    # folder -> its mtime_ns now (stat once per process)
_state: dict = {"path": None}
# A file per checkout: two checkouts' processes sharing a store would otherwise each replace the other's modules.
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _folder_time(folder: str) -> int | None:
    if folder not in _folders:
        try:
            _folders[folder] = os.stat(folder).st_mtime_ns
        except OSError:
            _folders[folder] = None
    return _folders[folder]


class StoredCodeLoader(SourceFileLoader):
    """CPython's loader of a source file, whose code comes from the store (checked by the finder)."""

    def get_code(self, fullname):
        return marshal.loads(_entries[fullname][6])


class StoredCodeFinder:
    """First on sys.meta_path: a spec for a module of the store that CPython would find where it was recorded."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        entry = _entries.get(name)
        if entry is None or path is None or target is not None:
            return None
        origin, own_folder, searched, size, mtime_ns, folders, _ = entry
        if len(path) != 1 or path[0] != searched or any(_folder_time(folder) != time for folder, time in folders):
            return None
        try:
            stat = os.stat(origin)
        except OSError:
            return None
        if stat.st_size != size or stat.st_mtime_ns != mtime_ns:
            return None
        return spec_from_file_location(name, origin, loader=StoredCodeLoader(name, origin),
                                       submodule_search_locations=None if own_folder is None else [own_folder])


def _read(path: str) -> dict[str, tuple]:
    """The store's entries, each module's code a view of the file's bytes (unmarshalled when imported)."""
    found = read_indexed(path) or {}
    if not all(type(k) is str and type(about) is tuple and len(about) == 6 for k, (about, _) in found.items()):
        return {}
    return {name: (*about, code) for name, (about, code) in found.items()}


def install() -> None:
    """Read the store and put its finder first on sys.meta_path (once per process)."""
    if _state["path"] is not None:
        return
    path = interpreter_store_file("module_code", _CHECKOUT)
    if path is None:
        return
    _state["path"] = path
    _state["before"] = frozenset(sys.modules)       # imported before the finder: never served, never stored
    _entries.update(_read(path))
    sys.meta_path.insert(0, StoredCodeFinder)


def _code_bytes(spec, stat: os.stat_result) -> bytes | None:
    """The module's code as marshal data: its .pyc's if CPython would take it, else compiled from the source."""
    cached = getattr(spec, "cached", None)
    if cached:
        try:
            with open(cached, "rb") as handle:
                data = handle.read()
        except OSError:
            data = b""
        if (len(data) > 16 and data[:4] == MAGIC_NUMBER and int.from_bytes(data[4:8], "little") == 0
                and int.from_bytes(data[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
                and int.from_bytes(data[12:16], "little") == stat.st_size & 0xFFFFFFFF):
            return data[16:]
    try:
        with open(spec.origin, "rb") as handle:
            return marshal.dumps(compile(handle.read(), spec.origin, "exec", dont_inherit=True))
    except (OSError, SyntaxError, ValueError):
        return None


def _entry(name: str, module) -> tuple | None:
    """What the store keeps of a module this process imported from its source through CPython's path finder
    (None when the store holds it already, as it is now)."""
    spec = getattr(module, "__spec__", None)
    parent = sys.modules.get(name.rpartition(".")[0])
    searched = getattr(parent, "__path__", None)
    if (spec is None or not spec.has_location or not spec.origin or not spec.origin.endswith(".py")
            or searched is None or len(searched) != 1):
        return None
    own = spec.submodule_search_locations
    if own is not None and len(own) != 1:
        return None
    folders = (searched[0],) if own is None else (searched[0], own[0])
    times = tuple((folder, _folder_time(folder)) for folder in folders)
    try:
        stat = os.stat(spec.origin)
    except OSError:
        return None
    settled = time.time_ns() - SETTLED_NS
    if any(mtime is None or mtime > settled for _, mtime in times) or stat.st_mtime_ns > settled:
        return None                     # changed too recently to trust its time (emu.cache.root.SETTLED_NS)
    where = (spec.origin, None if own is None else own[0], searched[0], stat.st_size, stat.st_mtime_ns, times)
    if _entries.get(name, ())[:6] == where:
        return None
    code = _code_bytes(spec, stat)
    return None if code is None else (*where, code)


def save() -> None:
    """Add the modules of emu's packages this process imported the usual way (merged with what others saved)."""
    path = _state["path"]
    if path is None:
        return
    _folders.clear()                    # folders as they are now: this process may have written their __pycache__
    added, before = {}, _state["before"]
    for name, module in list(sys.modules.items()):
        if name.startswith(PACKAGES) and name not in before \
                and type(getattr(getattr(module, "__spec__", None), "loader", None)) is SourceFileLoader:
            entry = _entry(name, module)
            if entry is not None:
                added[name] = entry
    if not added:
        return
    merged = _read(path)
    merged.update((k, v) for k, v in added.items() if len(merged) < MAX_ENTRIES or k in merged)
    try:
        write_indexed(path, {name: (tuple(entry[:6]), entry[6]) for name, entry in merged.items()})
    except OSError:
        pass            # a read-only or full disk only costs the next process the usual imports
