"""Where emu keeps what it stores between processes, and how a store file is written.

Standard library only (os): `python -m emu` reads the class-code store (emu.cache.class_code)
through it before anything else of emu is imported.
"""
from __future__ import annotations

import os


def store_dir() -> str | None:
    """`$EMU_CACHE_DIR` (default `~/.cache/emu`), or None when it is `off`."""
    configured = os.environ.get("EMU_CACHE_DIR")
    if configured == "off":
        return None
    return configured or os.path.join(os.path.expanduser("~"), ".cache", "emu")


def interpreter_store_file(kind: str) -> str | None:
    """The store file of `kind` (a folder of the store) for this interpreter: named by what decides what
    `compile` and `marshal` make (the interpreter's exact version and build, its optimisation level);
    None when the store is off."""
    root = store_dir()
    if root is None:
        return None
    import marshal
    import sys
    import zlib
    build = f"{sys.version}|{sys.hexversion:x}|{sys.implementation.cache_tag}|{marshal.version}"
    return os.path.join(root, kind, f"{sys.implementation.cache_tag}-{zlib.crc32(build.encode()):08x}"
                                    f"-O{sys.flags.optimize}.marshal")


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
