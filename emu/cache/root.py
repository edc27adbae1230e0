"""Where emu keeps what it stores between processes, and how a store file is written.

Standard library only (os): `python -m emu` reads the class-code store (emu.cache.class_code)
through it before anything else of emu is imported.
"""
from __future__ import annotations

import os


# A file or folder changed this recently may change again without its modification time moving (a coarse clock):
# the stores that trust a time (emu.cache.file_digests, module_code) record only what has been still this long.
SETTLED_NS = 2_000_000_000


def store_dir() -> str | None:
    """`$EMU_CACHE_DIR` (default `~/.cache/emu`), or None when it is `off`."""
    configured = os.environ.get("EMU_CACHE_DIR")
    if configured == "off":
        return None
    return configured or os.path.join(os.path.expanduser("~"), ".cache", "emu")


def interpreter_store_file(kind: str, place: str = "") -> str | None:
    """The store file of `kind` (a folder of the store) for this interpreter: named by what decides what
    `compile` and `marshal` make (the interpreter's exact version and build, its optimisation level), and by
    `place` when given (a file per checkout of emu, say); None when the store is off."""
    root = store_dir()
    if root is None:
        return None
    import marshal
    import sys
    import zlib
    build = f"{sys.version}|{sys.hexversion:x}|{sys.implementation.cache_tag}|{marshal.version}"
    where = f"-{zlib.crc32(place.encode('utf-8', 'surrogatepass')):08x}" if place else ""
    return os.path.join(root, kind, f"{sys.implementation.cache_tag}-{zlib.crc32(build.encode()):08x}"
                                    f"-O{sys.flags.optimize}{where}.marshal")


def read_index(path: str) -> tuple[dict, memoryview, int] | None:
    """An indexed store file's index as stored (key -> (about, offset, length), checked when an entry is used:
    `indexed_data`), a view of the file's bytes and where its entries' data begins; None when the file is absent
    or its index does not read back.  Reading one costs its index: an entry's data (marshal data, say) is sliced
    and decoded when the entry is used, not all of them on every start.

    The file: the index's length (8 bytes), the index (marshal data: key -> (about, offset, length), offsets
    counted from the index's end), then the entries' data."""
    import marshal
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        size = int.from_bytes(raw[:8], "little")
        view = memoryview(raw)
        index = marshal.loads(view[8:8 + size])
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return (index, view, 8 + size) if isinstance(index, dict) else None


def indexed_data(view: memoryview, base: int, where) -> memoryview | None:
    """An entry's data (a view), or None when its index entry is not (about, offset, length) inside the file."""
    if type(where) is not tuple or len(where) != 3 or type(where[1]) is not int or type(where[2]) is not int \
            or where[1] < 0 or where[2] < 0 or base + where[1] + where[2] > len(view):
        return None
    return view[base + where[1]:base + where[1] + where[2]]


def read_indexed(path: str) -> dict | None:
    """Every entry of an indexed store file (`read_index`), key -> (about, a view of its data); None when the
    file is absent or does not read back."""
    found = read_index(path)
    if found is None:
        return None
    index, view, base = found
    entries = {}
    for key, where in index.items():
        data = indexed_data(view, base, where)
        if data is None:
            return None
        entries[key] = (where[0], data)
    return entries


def write_indexed(path: str, entries: dict) -> None:
    """Write an indexed store file (`read_indexed`) of key -> (about, data as bytes or a view), atomically."""
    import marshal
    index, parts, offset = {}, [], 0
    for key, (about, data) in entries.items():
        index[key] = (about, offset, len(data))
        parts.append(data)
        offset += len(data)
    head = marshal.dumps(index)
    write_atomically(path, len(head).to_bytes(8, "little") + head + b"".join(parts))


def write_atomically(path: str, payload: bytes) -> None:
    """Write a store file whole or not at all: a temporary file beside it, then renamed over it.
    A process reading the store meanwhile sees the old file or the new one, never a part."""
    import tempfile     # only a run that stores pays for importing it

    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
    with os.fdopen(handle, "wb") as out:
        out.write(payload)
    os.replace(temporary, path)
