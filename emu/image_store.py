"""A persistent store of parsed and relocated objects, keyed by their content and emu's code.

Parsing needs LIEF, whose import and teardown cost about half a second: most of a short
`python -m emu run`.  The first run of an object stores what parsing produced (sections,
symbols, relocations, the relocated segments, the export description, the vector
instruction sites, what each embedded cubin says) under `$EMU_CACHE_DIR` (default `~/.cache/emu`); later runs
of the same bytes read it back and never import LIEF.  An entry is `<sha256>.json`, plain
JSON, with every byte string (section data, RELA tables, segments) kept as an
(offset, length) into `<sha256>.bin` beside it: reading bytes back as they are costs a
tenth of decoding them from base64 in JSON.  The store holds only emu's own output (no
pickle); an entry that does not read back cleanly is ignored and rebuilt.
`EMU_CACHE_DIR=off` disables it.

An entry is what emu's code made of the object, so its key is the object's SHA-256
under a folder named by a digest of that code (`CODE`): changing a line of the parser,
the layout, the relocation tables or loops, the export description or the vector scan
makes the next run parse and relocate again, into a new folder.  A module that comes to
shape what an entry holds must be listed in `CODE`.
"""
from __future__ import annotations

import hashlib
import json
import os

from .export import Export
from .layout import Image, Segment
from .objfile import ObjectFile, Section, Symbol

FORMAT = 4     # 2: relocations stored as their packed RELA tables; 3: the cubins' facts (extras["cubins"]); 4: bytes in <sha256>.bin

# The code whose output an entry stores, relative to the emu package: files, and
# folders whose *.py files all count.
CODE = ("objfile.py", "layout.py", "relocation.py", "hotpath.py", "memory_map.py", "export.py", "generation.py",
        "entries.py", "image_store.py", "arch", "fatbin.py", "cubin.py", "cubin_info.py", "cuda/loading.py",
        "cuda/kernel_attributes.py")
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def code_digest(package: str = _PACKAGE, code: tuple[str, ...] = CODE) -> str:
    """The SHA-256 of the `code` sources under `package` (each file's path and bytes, in path order)."""
    paths = []
    for name in code:
        path = os.path.join(package, name)
        if os.path.isdir(path):
            paths += [os.path.join(folder, file) for folder, _, files in os.walk(path) for file in files if file.endswith(".py")]
        else:
            paths.append(path)
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(os.path.relpath(path, package).encode() + b"\0")
        with open(path, "rb") as handle:
            digest.update(handle.read() + b"\0")
    return digest.hexdigest()


def store_dir() -> str | None:
    configured = os.environ.get("EMU_CACHE_DIR")
    if configured == "off":
        return None
    return configured or os.path.join(os.path.expanduser("~"), ".cache", "emu")


_IMAGES_DIRS: dict[tuple[str | None, str | None], str | None] = {}   # (EMU_CACHE_DIR, HOME) -> this code's folder


def _entry_path(sha256: str) -> str | None:
    environ = os.environ
    key = (environ.get("EMU_CACHE_DIR"), environ.get("HOME"))    # every entry is looked up: resolve the folder once
    folder = _IMAGES_DIRS.get(key, "")
    if folder == "":
        store = store_dir()
        folder = _IMAGES_DIRS[key] = os.path.join(store, "images", code_digest()[:24]) if store else None
    return f"{folder}{os.sep}{sha256}.json" if folder else None


class _Blob:
    """The byte strings of one entry, appended in turn: each is kept in the record as [offset, length]."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, data: bytes) -> list[int]:
        self.parts.append(data)
        self.size += len(data)
        return [self.size - len(data), len(data)]


def save(image: Image, export: Export) -> None:
    path = _entry_path(image.obj.sha256)
    if path is None:
        return
    from .cuda.loading import stored_cubins     # read with LIEF, which parsing the object has imported
    obj, blob = image.obj, _Blob()
    record = {
        "format": FORMAT, "sha256": obj.sha256, "arch": obj.arch,
        "sections": [[s.index, s.name, s.type, s.flags, s.size, s.align, s.link, s.info, blob.add(s.data)] for s in obj.sections],
        "symbols": [[s.index, s.name, s.value, s.size, s.type, s.binding, s.shndx] for s in obj.symbols],
        "relocation_tables": [[index, blob.add(entries)] for index, entries in obj.relocation_tables],
        "segments": [[s.address, blob.add(s.data), s.perms] for s in image.segments],
        "stub_symbols": image.stub_symbols, "functions": image.functions, "data_symbols": image.data_symbols,
        "got_base": image.got_base, "extras": {**image.extras, "cubins": stored_cubins(image)},
        "export": {**export.__dict__, "kernel_info": {k: {str(a): v for a, v in attrs.items()} for k, attrs in export.kernel_info.items()}},
    }
    record["bytes"] = blob.size
    import tempfile     # only a run that stores pays for importing it

    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        # the bytes first: a record is only ever read beside the bytes it names
        payloads = ((".bin", b"".join(blob.parts)), (".json", json.dumps(record, separators=(",", ":")).encode()))
        for suffix, payload in payloads:
            handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(handle, "wb") as out:
                out.write(payload)
            os.replace(temporary, path[:-len(".json")] + suffix)
    except OSError:
        pass   # a read-only or full disk only costs the next run a parse


def load(sha256: str, path: str) -> tuple[Image, Export] | None:
    entry = _entry_path(sha256)
    if entry is None or not os.access(entry, os.R_OK):     # no exception raised and caught for the usual miss
        return None
    try:
        with open(entry, "rb") as handle:     # json reads the bytes: no text layer
            record = json.loads(handle.read())
        if record.get("format") != FORMAT or record.get("sha256") != sha256:
            return None
        with open(entry[:-len(".json")] + ".bin", "rb") as handle:
            blob = handle.read()
        if len(blob) != record["bytes"]:
            return None                       # bytes of another save, or cut short

        def piece(offset: int, length: int) -> bytes:
            if not 0 <= offset <= offset + length <= len(blob):
                raise ValueError("a piece outside the entry's bytes")
            return blob[offset:offset + length]

        tables = [(index, piece(*where)) for index, where in record["relocation_tables"]]
        if any(len(entries) % 24 for _, entries in tables):
            return None
        obj = ObjectFile(path=path, arch=record["arch"], sha256=sha256,
                         sections=[Section(*s[:8], piece(*s[8])) for s in record["sections"]],
                         symbols=[Symbol(*s) for s in record["symbols"]],
                         relocation_tables=tables)
        image = Image(obj, [Segment(a, piece(*where), p) for a, where, p in record["segments"]],
                      record["stub_symbols"], record["functions"], record["data_symbols"], record["got_base"],
                      record["extras"])
        raw = record["export"]
        export = Export(**{**raw, "kernel_info": {k: {int(a): v for a, v in attrs.items()} for k, attrs in raw["kernel_info"].items()}})
        return image, export
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
