"""The architectures emu can run, by the name `emu.objfile` gives an ELF machine."""
from __future__ import annotations

from .base import Architecture


def architecture(name: str) -> Architecture:
    """The Architecture for an object's `arch` (imported lazily, one module per architecture)."""
    if name == "x86_64":
        from .x86_64.architecture import X86_64
        return X86_64
    if name == "aarch64":
        from .aarch64.architecture import AARCH64
        return AARCH64
    raise KeyError(name)


NAMES = ("x86_64", "aarch64")
