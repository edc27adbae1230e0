"""Small results emu derives from untrusted text, kept on disk so that a later process skips the work.

A header's launch signature (emu.cache.header_store) and an export's decoded args_spec (emu.dsl.args_spec.reader) each
cost a cold process milliseconds to compute, mostly importing what computes them (pycparser; pickletools
and the inert unpickler).  Each kind is kept under `$EMU_CACHE_DIR/<kind>/<folder>/<key>.json`
(the image store's root, emu.cache.image_store.store_dir; `EMU_CACHE_DIR=off` turns it off): the key is the
SHA-256 of the inputs, the folder is named by a digest of the code that computes the result (`code`)
and of the installed releases of the libraries it uses (`libraries`), as emu.cache.image_store names its
folders, so a changed line of that code or another release of pycparser makes the next run compute it again.

An entry is `{"format": N, "value": <JSON>}`.  It is a file anyone could edit: the caller reads the
value back with every field checked (nothing is unpickled), and anything that does not read back is
a miss, computed again and stored over.  What fails is never stored: its error comes from the code.
"""
from __future__ import annotations

import json
import os
from typing import Any

from ..support.sha256 import sha256 as sha256_of
from .image_store import folder_name, store_dir, write_atomically

MISSING = object()      # what `read` answers for an entry that is absent or does not read back
STORES: list["DerivedStore"] = []      # every kind, as made (the server names their folders once: emu.server.warm)


class DerivedStore:
    """One kind of derived result: its folder name, the code that computes it, and its entry format."""

    def __init__(self, kind: str, code: tuple[str, ...], format: int, libraries: tuple[str, ...] = ()):
        self.kind, self.code, self.format, self.libraries = kind, code, format, libraries
        self._folders: dict[tuple[str | None, str | None], str | None] = {}    # (EMU_CACHE_DIR, HOME) -> folder
        STORES.append(self)

    def entry(self, *inputs: str) -> str | None:
        """The entry of these inputs, or None when the store is off."""
        environ = os.environ
        where = (environ.get("EMU_CACHE_DIR"), environ.get("HOME"))
        folder = self._folders.get(where, "")
        if folder == "":
            root = store_dir()
            folder = self._folders[where] = os.path.join(root, self.kind, folder_name(self.code, self.libraries)) if root else None
        if folder is None:
            return None
        key = sha256_of("\0".join(inputs).encode("utf-8", "surrogatepass")).hexdigest()
        return os.path.join(folder, f"{key}.json")

    def read(self, entry: str) -> Any:
        """The stored JSON value (unchecked: the caller checks it), or MISSING."""
        if not os.access(entry, os.R_OK):         # the usual miss: no exception raised and caught
            return MISSING
        try:
            with open(entry, "rb") as handle:
                record = json.loads(handle.read())
        except (OSError, ValueError, RecursionError):
            return MISSING
        if not isinstance(record, dict) or record.keys() != {"format", "value"} or record["format"] != self.format:
            return MISSING
        return record["value"]

    def write(self, entry: str, value: Any) -> None:
        try:
            write_atomically(entry, json.dumps({"format": self.format, "value": value}, separators=(",", ":")).encode())
        except OSError:
            pass     # a read-only or full disk only costs the next run the work
