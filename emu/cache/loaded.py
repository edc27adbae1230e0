"""Parse-and-relocate once: laid-out images cached in the process and on disk.

In the process, by file identity (path, size, mtime); across processes, by content
(see image_store), so a repeated run neither parses nor relocates.
"""
from __future__ import annotations

import os

from . import image_store
from ..errors import ObjectFormatError
from ..dsl.exports import Export, discover
from ..binary.elf.reader import read_object_bytes
from ..binary.image import LoadedBinary
from ..support.sha256 import sha256 as sha256_of

_CACHE: dict[tuple[str, int, int], tuple[LoadedBinary, list[Export]]] = {}
_ABSOLUTE: dict[str, str] = {}     # absolute path as given -> normalised


def load_image(path: str) -> tuple[LoadedBinary, list[Export]]:
    """The relocated image of an object file and the exports it holds (at least one)."""
    path = str(path)
    try:
        stat = os.stat(path)
    except OSError as error:
        raise ObjectFormatError.unreadable(path, error) from None
    absolute = _ABSOLUTE.get(path)
    if absolute is None:
        absolute = os.path.abspath(path)
        if os.path.isabs(path) and len(_ABSOLUTE) < 4096:   # a relative path depends on the working directory
            _ABSOLUTE[path] = absolute
    key = (absolute, stat.st_size, stat.st_mtime_ns)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    raw = read_object_bytes(path, stat.st_size)
    sha256 = sha256_of(raw).hexdigest()
    cached = image_store.load(sha256, path)
    if cached is None:
        # the parser, layout and relocation only for an object the store does not hold: a warm cold run skips their import
        from ..arch import architecture
        from ..binary.formats import load_binary
        image = load_binary(raw, path, sha256)
        sites = architecture(image.arch).cpu.extension_sites(image)
        if sites:
            image.extras["vector_sites"] = sites
        cached = (image, discover(image.obj, image))
        image_store.save(*cached)
    _CACHE[key] = cached
    return cached
