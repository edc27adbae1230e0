"""The stub families, in the order a symbol is looked up: the first whose models name it answers it.

Each module here defines `FAMILY` (an emu.stubs.family.StubFamily); adding a library is its
module plus its line in REGISTRY.  Families are imported on first use, like the models.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stub_models import StubCall

    from ..family import StubFamily

REGISTRY = (
    "libc",      # the C library functions host code calls (printf, memcpy, malloc, exit...)
    "cuda",      # the _cuda*/_cu* wrappers and cuda_dialect_* helpers of libcute_dsl_runtime.so
    "tvm_ffi",   # libtvm_ffi.so's stream and error functions a TVM-FFI export calls
)

_FAMILIES: list[StubFamily] = []
_PROVIDED: list[frozenset[str]] = []       # every symbol some family models, made on first use


def families() -> list[StubFamily]:
    """Every family, in look-up order (imported on the first call)."""
    if not _FAMILIES:
        _FAMILIES.extend(import_module(f".{name}", __name__).FAMILY for name in REGISTRY)
    return _FAMILIES


def register(family: StubFamily) -> None:
    """Add a family from outside this package (a test's), looked up after the listed ones."""
    families().append(family)
    _PROVIDED.clear()


def provides(symbol: str) -> bool:
    """Whether some family models `symbol` (emu.binary.bindings binds a function a binary defines by it):
    one set look-up, since bindings ask it of every function of a never-seen binary."""
    if not _PROVIDED:
        _PROVIDED.append(frozenset(name for family in families() for name in family.models))
    return symbol in _PROVIDED[0]


def owner(symbol: str) -> tuple[StubFamily, type[StubCall]] | None:
    """The family that provides `symbol`, and its model; None for a symbol no family models.

    Asked per symbol, never merged into one table: the CUDA catalogue builds a model only
    when its symbol is looked up, and building all 64 costs a process about 0.1 s.
    """
    for family in families():
        model = family.model(symbol)
        if model is not None:
            return family, model
    return None
