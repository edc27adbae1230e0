"""A persistent store of parsed and relocated objects, keyed by their content and emu's code.

Parsing, relocating and reading an object's cubins cost a never-seen object most of its
run.  The first run of an object stores what parsing produced (sections,
symbols, relocations, the relocated segments, the export description, the vector
instruction sites, what each embedded cubin says) under `$EMU_CACHE_DIR` (default `~/.cache/emu`); later runs
of the same bytes read it back.  An entry is `<sha256>.json`, plain
JSON, with every byte string (section data, RELA tables, segments) kept as an
(offset, length) into `<sha256>.bin` beside it: reading bytes back as they are costs a
tenth of decoding them from base64 in JSON.  The object's sections and symbols, which a
run of a stored image does not read, are a JSON document of their own in those bytes,
decoded only when something asks for them (`StoredObject`): `check DIR` reads an entry
per object, and they were half of its decoding.  The store holds only emu's own output (no
pickle); an entry that does not read back cleanly is ignored and rebuilt.
`EMU_CACHE_DIR=off` disables it.

An entry is what emu's code made of the object, so its key is the object's SHA-256
under a folder named by a digest of that code (`CODE`) and of the installed releases of
the libraries it used (`LIBRARIES`): changing a line of the parser, the layout, the
relocation tables or loops, the export description or the vector scan, or upgrading LIEF
or capstone, makes the next run parse and relocate again, into a new folder.  `CODE` names
packages, not files: a module added to one of them is covered as it lands; a package or
library that comes to shape what an entry holds must be named there.
"""
from __future__ import annotations

import json
import os
import zlib

from ..errors import ObjectFormatError
from ..dsl.exports import Export
from ..binary.image import LoadedBinary, Segment
from . import file_digests
from .library_releases import releases
from .root import store_dir, write_atomically  # noqa: F401 - the stores' root and writer, named here too
from ..binary.elf.reader import ObjectFile, Section, Symbol
from ..support.sha256 import sha256 as sha256_of

# 2: relocations stored as their packed RELA tables; 3: the cubins' facts (extras["cubins"]); 4: bytes in
# <sha256>.bin; 5: sections and symbols a document of their own in the bytes, decoded on first use; 6: a
# LoadedBinary: its format's name and the defined symbols' sizes; 7: every export of the object, each
# with its GPU binary's address, and the cubins' facts per binary
FORMAT = 7

# The packages whose code shapes an entry, relative to the emu package: every *.py file under each counts,
# so a module added to one of them is covered without being listed.  The binary layer (parse, layout,
# relocation) and the architectures' tables, the export description (dsl), the GPU binary readers and
# the runtime model's reading of them (cuda), the helpers they generate code with (support), the stores.
CODE = ("binary", "arch", "dsl", "gpu_binary", "cuda", "support", "cache")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The libraries whose output an entry holds too: LIEF's parse, capstone's decoding of the vector sites.
LIBRARIES = ("lief", "capstone")


_DIGESTS: dict[tuple[str, tuple[str, ...]], str] = {}     # (package, code) -> code_digest, once per process
_FILE_DIGESTS: dict[str, bytes] = {}                     # source file -> the SHA-256 of its bytes, read once per process


def code_digest(package: str = _PACKAGE, code: tuple[str, ...] = CODE) -> str:
    """The SHA-256 of the `code` sources under `package` (each file's path and the digest of its bytes, in path order).

    This emu's own (`package` left as is) once per process: the code a process runs is what it imported,
    whatever the files say later (a served child inherits the server's, which serves only while emu's files
    are those it started from, emu.server.address).  The stores each ask for theirs, and their packages
    overlap: a file is read once, and hashed only when its size or time differ from those recorded with its digest
    by an earlier process (emu.cache.file_digests).  Another package (a copy) is read each time.
    """
    remembered = package == _PACKAGE
    known = _DIGESTS.get((package, code)) if remembered else None
    if known is not None:
        return known
    paths = []
    for name in code:
        path = os.path.join(package, name)
        if os.path.isdir(path):
            for folder, folders, files in os.walk(path):
                if "__pycache__" in folders:      # bytecode only: not walked
                    folders.remove("__pycache__")
                paths += [os.path.join(folder, file) for file in files if file.endswith(".py")]
        else:
            paths.append(path)
    digest, base = sha256_of(), os.path.join(package, "")
    for path in sorted(paths):
        file_digest = _FILE_DIGESTS.get(path) if remembered else None
        if file_digest is None:
            if remembered:              # this emu's own files: their digests are kept between processes
                file_digest = _FILE_DIGESTS[path] = file_digests.file_digest(path)
            else:
                with open(path, "rb") as handle:
                    file_digest = sha256_of(handle.read()).digest()
        digest.update(_relative(path, base).encode() + b"\0" + file_digest)
    answer = digest.hexdigest()
    if remembered:
        file_digests.save()
        _DIGESTS[package, code] = answer
    return answer


def _relative(path: str, base: str) -> str:
    """`os.path.relpath(path, base)` of a path made by joining onto `base`, without its two abspath calls (a tenth
    of a millisecond per hundred files)."""
    relative = path[len(base):]
    if not path.startswith(base) or f"{os.sep}." in relative or relative.startswith(".") or os.sep * 2 in relative:
        return os.path.relpath(path, base)
    return relative


def folder_name(code: tuple[str, ...] = CODE, libraries: tuple[str, ...] = LIBRARIES) -> str:
    """The folder of the entries this code and these libraries' installed releases make (emu.cache.library_releases):
    a changed line of the code, or another release of a library, starts a new folder."""
    return sha256_of(f"{code_digest(code=code)}\n{releases(libraries)}".encode()).hexdigest()[:24]


_IMAGES_DIRS: dict[tuple[str | None, str | None], str | None] = {}   # (EMU_CACHE_DIR, HOME) -> this code's folder


def _entry_path(sha256: str) -> str | None:
    environ = os.environ
    key = (environ.get("EMU_CACHE_DIR"), environ.get("HOME"))    # every entry is looked up: resolve the folder once
    folder = _IMAGES_DIRS.get(key, "")
    if folder == "":
        store = store_dir()
        folder = _IMAGES_DIRS[key] = os.path.join(store, "images", folder_name()) if store else None
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


def save(image: LoadedBinary, exports: list[Export]) -> None:
    path = _entry_path(image.sha256)
    if path is None:
        return
    from ..cuda.loading import stored_cubins
    obj, blob = image.obj, _Blob()
    # The sections and symbols, which a run of a stored image seldom reads, are a JSON document of their
    # own in the bytes, read on first use (StoredObject); its CRC-32 in the record catches a spoilt one.
    parts = json.dumps({"sections": [[s.index, s.name, s.type, s.flags, s.size, s.align, s.link, s.info, blob.add(s.data)]
                                     for s in obj.sections],
                        "symbols": [[s.index, s.name, s.value, s.size, s.type, s.binding, s.shndx] for s in obj.symbols]},
                       separators=(",", ":")).encode()
    record = {
        "format": FORMAT, "sha256": image.sha256, "arch": image.arch, "binary_format": image.format,
        "object": [*blob.add(parts), zlib.crc32(parts)],
        "relocation_tables": [[index, blob.add(entries)] for index, entries in obj.relocation_tables],
        "segments": [[s.address, blob.add(s.data), s.perms] for s in image.segments],
        "stub_symbols": image.stub_symbols, "functions": image.functions, "data_symbols": image.data_symbols,
        "sizes": image.sizes, "duplicates": image.duplicates,
        "got_base": image.got_base,
        "extras": {**image.extras, "cubins": stored_cubins(image, [e.binary for e in exports if e.binary is not None])},
        "exports": [{**export.__dict__, "kernel_info": {k: {str(a): v for a, v in attrs.items()} for k, attrs in export.kernel_info.items()}}
                    for export in exports],
    }
    record["bytes"] = blob.size
    try:
        # the bytes first: a record is only ever read beside the bytes it names
        write_atomically(path[:-len(".json")] + ".bin", b"".join(blob.parts))
        write_atomically(path, json.dumps(record, separators=(",", ":")).encode())
    except OSError:
        pass   # a read-only or full disk only costs the next run a parse


def _piece(blob: bytes, offset: int, length: int) -> bytes:
    if not 0 <= offset <= offset + length <= len(blob):
        raise ValueError("a piece outside the entry's bytes")
    return blob[offset:offset + length]


class StoredObject(ObjectFile):
    """An ObjectFile read back from the store: its sections and symbols are decoded when first read.

    A run of a stored image reads only the image and the export; a launch, `inspect` or an
    error message reads the object's tables, and then pays for them.  `__getattr__` runs
    only while an attribute is missing, so once decoded they cost what a parsed object's do.
    """

    def __init__(self, path: str, arch: str, sha256: str, relocation_tables: list[tuple[int, bytes]], blob: bytes,
                 where: tuple[int, int], entry: str):
        self.path, self.arch, self.sha256, self.relocation_tables = path, arch, sha256, relocation_tables
        self._relocations, self._by_name = None, None
        self._blob, self._where, self._entry = blob, where, entry

    def __getattr__(self, name: str):
        if name not in ("sections", "symbols") or "_blob" not in self.__dict__:
            raise AttributeError(name)
        blob = self._blob
        try:
            parts = json.loads(_piece(blob, *self._where))
            self.sections = [Section(*s[:8], _piece(blob, *s[8])) for s in parts["sections"]]
            self.symbols = [Symbol(*s) for s in parts["symbols"]]
        except (ValueError, KeyError, TypeError, IndexError) as error:     # its CRC-32 matched: written so by something else
            raise ObjectFormatError(f"the image store entry {self._entry} does not read back ({error}); delete it to parse "
                                    "the object again", path=self.path) from None
        del self._blob
        return self.__dict__[name]


def load(sha256: str, path: str) -> tuple[LoadedBinary, list[Export]] | None:
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
        offset, length, crc = record["object"]
        if zlib.crc32(_piece(blob, offset, length)) != crc:
            return None
        tables = [(index, _piece(blob, *where)) for index, where in record["relocation_tables"]]
        if any(len(entries) % 24 for _, entries in tables):
            return None
        obj = StoredObject(path, record["arch"], sha256, tables, blob, (offset, length), entry)
        image = LoadedBinary(path=path, arch=record["arch"], sha256=sha256, format=record["binary_format"],
                             segments=[Segment(a, _piece(blob, *where), p) for a, where, p in record["segments"]],
                             functions=record["functions"], data_symbols=record["data_symbols"], sizes=record["sizes"],
                             stub_symbols=record["stub_symbols"], got_base=record["got_base"], obj=obj,
                             extras=record["extras"], duplicates=record["duplicates"])
        exports = [Export(**{**raw, "kernel_info": {k: {int(a): v for a, v in attrs.items()} for k, attrs in raw["kernel_info"].items()}})
                   for raw in record["exports"]]
        if not exports:
            return None
        return image, exports
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
