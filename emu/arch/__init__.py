"""The architectures emu can run, by the name `emu.objfile` gives an ELF machine."""
from __future__ import annotations

from .base import Architecture


def architecture(name: str) -> Architecture:
    """The Architecture for an object's `arch` (imported lazily, one module per architecture)."""
    found = _LOADED.get(name)
    if found is not None:
        return found
    if name == "x86_64":
        from .x86_64.architecture import X86_64 as found
    elif name == "aarch64":
        from .aarch64.architecture import AARCH64 as found
    else:
        raise KeyError(name)
    _LOADED[name] = found
    return found


_LOADED: dict[str, Architecture] = {}
