"""The binary formats emu loads, and `load_binary`, which picks the one that accepts a file's bytes.

A format turns a file's bytes into a `LoadedBinary` (emu.binary.image); what comes after
loading never asks which format it was.  Adding a format is
its own module and a line in FORMATS, ahead of any format that would also accept its bytes: ET_REL
objects (emu.binary.elf.relocatable) and ET_DYN shared libraries (emu.binary.elf.shared) today.
"""
from __future__ import annotations

from typing import Protocol

from .elf.reader import ObjectFile, parse_object, read_object_bytes, refusal
from .elf.relocatable import ElfRelocatable
from .elf.shared import ElfShared
from .elf.shared_object import is_shared_library, parse_shared_object
from .image import LoadedBinary


class BinaryFormat(Protocol):
    name: str            # a short name, what LoadedBinary.format says

    def accepts(self, raw: bytes) -> bool:
        """Whether these are the bytes of a file of this format (a cheap look at its header: no parse)."""

    def load(self, raw: bytes, path: str, sha256: str) -> LoadedBinary:
        """The file laid out and relocated; ObjectFormatError with a precise message when it cannot be."""


FORMATS: list[BinaryFormat] = [ElfRelocatable(), ElfShared()]      # tried in order


def load_binary(raw: bytes, path: str, sha256: str) -> LoadedBinary:
    """The binary in `raw`, loaded by the first format that accepts it; else the error that says what the file is."""
    for binary_format in FORMATS:
        if binary_format.accepts(raw):
            return binary_format.load(raw, path, sha256)
    raise refusal(raw, path)


def parse_file(path: str) -> ObjectFile:
    """A file's sections and symbols without laying it out (what `inspect` shows): an object's ObjectFile, or a
    shared library's SharedObject (the same tables, its symbol values counted from their sections)."""
    path = str(path)
    raw = read_object_bytes(path)
    if ElfRelocatable.accepts(raw):
        return parse_object(raw, path)
    if is_shared_library(raw):
        return parse_shared_object(raw, path)
    raise refusal(raw, path)
