"""The architectures emu can run, registered by ELF machine number.

Adding an architecture is its package (relocations, calling convention, CPU; see
`base.py`) plus one line in REGISTRY.  Everything that names architectures (the object
parser, the trace and inspect models, the JSON Schemas, messages) reads them from here.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:      # base imports the relocation code, which imports objfile, which reads this registry
    from .base import Architecture


@dataclass(frozen=True)
class Registered:
    """One architecture: its ELF e_machine, its name in emu, how people write it, and where it is defined."""

    machine: int
    name: str
    title: str
    module: str           # relative to emu.arch
    attribute: str        # the Architecture in that module


REGISTRY = (
    Registered(62, "x86_64", "x86-64", "x86_64.architecture", "X86_64"),          # EM_X86_64
    Registered(183, "aarch64", "AArch64", "aarch64.architecture", "AARCH64"),     # EM_AARCH64
)

NAMES = tuple(entry.name for entry in REGISTRY)
BY_MACHINE = {entry.machine: entry for entry in REGISTRY}
_BY_NAME = {entry.name: entry for entry in REGISTRY}
_LOADED: dict[str, Architecture] = {}


def architecture(name: str) -> Architecture:
    """The Architecture for an object's `arch` (imported on first use, one package per architecture)."""
    found = _LOADED.get(name)
    if found is None:
        entry = _BY_NAME[name]          # KeyError for a name that is not registered
        found = _LOADED[name] = getattr(import_module(f".{entry.module}", __name__), entry.attribute)
    return found


def supported_machines() -> str:
    """The registered architectures as a message lists them: 'x86-64 (62) and AArch64 (183)'."""
    items = [f"{entry.title} ({entry.machine})" for entry in REGISTRY]
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else items[0]
