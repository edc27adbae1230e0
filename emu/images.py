"""Parse-and-relocate once: a process-wide cache of laid-out images, keyed by file identity."""
from __future__ import annotations

import os

from .errors import ObjectFormatError
from .export import Export, describe_export
from .layout import Image, build_image
from .objfile import load_object

_CACHE: dict[tuple[str, int, int], tuple[Image, Export]] = {}


def load_image(path: str) -> tuple[Image, Export]:
    """The relocated image and export description of an object file (cached by path, size, mtime)."""
    try:
        stat = os.stat(path)
    except OSError as error:
        raise ObjectFormatError(f"cannot read the object file: {error.strerror or error}", path=str(path)) from None
    key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns)
    cached = _CACHE.get(key)
    if cached is None:
        obj = load_object(path)
        cached = _CACHE[key] = (build_image(obj), describe_export(obj))
    return cached
