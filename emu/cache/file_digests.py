"""The SHA-256 of emu's own source files, kept between processes beside the file's size and time.

The stores key their folders by a digest of the code that shapes their entries (emu.cache.image_store.code_digest):
about 110 of emu's files, read and hashed in every process that looks an object up, 2-3 ms of a cold run.
A file whose size and modification time (in nanoseconds) are those recorded has the digest recorded with them,
as CPython trusts a .pyc whose source has the size and time it recorded (more coarsely: whole seconds).  A file
changed within two seconds of being hashed is not recorded (its time may not have moved since: a coarse clock),
so it is hashed again until it has settled.  The record is marshal data in emu's store folder (emu.cache.root);
a file that does not read back is ignored and rewritten.  Standard library only.
"""
from __future__ import annotations

import marshal
import os
import time

from ..support.sha256 import sha256 as sha256_of
from .root import SETTLED_NS, interpreter_store_file, write_atomically

MAX_ENTRIES = 2048              # a bound on the file: emu has about 300 source files

_known: dict[str, tuple[int, int, bytes]] = {}      # path -> (size, mtime_ns, digest)
_state: dict = {"read": False, "added": 0}


def _read(path: str) -> dict[str, tuple[int, int, bytes]]:
    try:
        with open(path, "rb") as handle:
            found = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(found, dict) or not all(type(k) is str and type(v) is tuple and len(v) == 3
                                              and type(v[0]) is int and type(v[1]) is int and type(v[2]) is bytes
                                              for k, v in found.items()):
        return {}
    return found


def file_digest(path: str) -> bytes:
    """The SHA-256 of the file's bytes: the recorded one while its size and time are those recorded."""
    if not _state["read"]:
        _state["read"] = True
        store = interpreter_store_file("file_digests")
        if store is not None:
            _known.update(_read(store))
    stat = os.stat(path)
    known = _known.get(path)
    if known is not None and known[0] == stat.st_size and known[1] == stat.st_mtime_ns:
        return known[2]
    with open(path, "rb") as handle:
        digest = sha256_of(handle.read()).digest()
    if time.time_ns() - stat.st_mtime_ns > SETTLED_NS and len(_known) < MAX_ENTRIES:
        _known[path] = (stat.st_size, stat.st_mtime_ns, digest)
        _state["added"] += 1
    return digest


def save() -> None:
    """Record the digests computed since the last save (merged with what other processes recorded)."""
    store = interpreter_store_file("file_digests") if _state["added"] else None
    _state["added"] = 0
    if store is None:
        return
    merged = _read(store)
    merged.update((k, v) for k, v in _known.items() if len(merged) < MAX_ENTRIES or k in merged)
    try:
        write_atomically(store, marshal.dumps(merged))
    except OSError:
        pass            # a read-only or full disk only costs the next process the hashing
