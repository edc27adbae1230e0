"""The calling ABIs of an export's launch entry, by name (each an emu.abi.base.LaunchAbi).

`ciface` is the CuTe DSL's `_mlir_<prefix>__mlir_ciface_<fn>(void **args, int32_t num_args)`; `tvm_ffi`
Apache TVM-FFI's `__tvm_ffi_<name>(self, const TVMFFIAny *args, int32_t num_args, TVMFFIAny *result)`.
Adding one is its module here plus its line in REGISTRY; each is imported on first use (the
CuTe one brings the header and args_spec readers).
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import LaunchAbi

REGISTRY: dict[str, tuple[str, str]] = {      # name -> (module of emu.abi, its LaunchAbi)
    "ciface": ("ciface", "CIFACE"),
    "tvm_ffi": ("tvm_ffi", "TVM_FFI"),
}
_LOADED: dict[str, LaunchAbi] = {}


def launch_abi(name: str) -> LaunchAbi:
    """The ABI called `name` (KeyError for one that is not registered)."""
    found = _LOADED.get(name)
    if found is None:
        module, attribute = REGISTRY[name]
        found = _LOADED[name] = getattr(import_module(f".{module}", __name__), attribute)
    return found
