"""The CuTe DSL exports a binary holds, found from its symbols: prefix, entry points, kernels, metadata.

`discover` finds every export: one object written by `export_to_c` holds one, an object or library
linked from several holds each.  Each export names its own GPU binary, kernels, entries and launch
function with the calling ABI it is launched through (emu.abi).  When one binary holds several exports,
their GPU binaries (each export's local `kernels_binary`) are paired with the exports in link order:
the linker keeps each input's sections in input order, so the n-th export's code and its binary come
n-th (tests/dsl/test_exports.py proves it on objects linked with `ld -r`); the runtime model then loads,
for each export, the binary its own cuda_init names.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING

from .entries import KINDS
from ..errors import BadInput, ObjectFormatError
from .tvm_ffi.export import tvm_ffi_fields
from .generations import FORMATS, KERNEL_SLOT, KERNEL_SLOT_43, METADATA_SYMBOLS, metadata_symbols
from ..binary.elf.reader import SHN_UNDEF, STT_FUNC, ObjectFile

if TYPE_CHECKING:
    from ..binary.image import LoadedBinary

_KERNEL_SLOTS = re.compile("\0kernels_(kernel_[^\0]*)")        # searched in NUL + the names joined by NULs
_KERNEL_SLOTS_43 = re.compile("\0(kernel_[^\0]*)")
_NAME = itemgetter(1)


BINARY_SYMBOL = "kernels_binary"       # the embedded fatbin each export's cuda_init loads
LAUNCH_ABI = "ciface"                   # the CuTe ABI's launch wrapper: void *args[] (emu.abi.ciface)
TVM_FFI_ABI = "tvm_ffi"                 # __tvm_ffi_N(self, TVMFFIAny *args, num_args, result) (emu.abi.tvm_ffi)


@dataclass(frozen=True)
class Export:
    prefix: str
    kernels: list[str]                    # kernel names, in the object's order
    kernel_info: dict[str, dict[int, int]]
    kernel_info_error: str | None
    launch_function: str | None           # the _mlir_ packed launch wrapper the header calls
    version: str | None
    function_name: str | None
    format: str                           # the export format (emu.dsl.generations.FORMATS): how its loaders are called
    binary: int | None = None             # the address of its GPU binary in the laid-out image; None: none (or no image)
    # a TVM-FFI export (emu.dsl.tvm_ffi.export): N of its entry __tvm_ffi_N, else None; its launch function's
    # mangled name, the signature its entry quotes and the device type it checks for (None where the object has none)
    ffi_name: str | None = None
    mangled_function: str | None = None
    ffi_signature: str | None = None
    ffi_device_type: str | None = None   # the one device type its tensor checks expect (cuda, cpu), if one

    @property
    def name(self) -> str:
        """How traces, checks and scenarios name the export: its prefix (CuTe ABI), N (TVM-FFI's __tvm_ffi_N)."""
        return self.ffi_name or self.prefix

    @property
    def launch_abi(self) -> str:
        """The calling ABI of its launch function (a key of emu.abi's registry)."""
        return TVM_FFI_ABI if self.ffi_name else LAUNCH_ABI

    def entry_symbol(self, entry: str) -> str:
        """The function an entry runs: `<prefix>_cuda_load`, `_mlir_<prefix>_cuda_load`, the launch wrapper."""
        if entry == "launch":
            return self.launch_function or f"_mlir_{self.prefix}__mlir_ciface_"
        if entry == "tvm_ffi":
            return f"__tvm_ffi_{self.ffi_name or self.prefix}"
        if entry == "process_exit":         # the destructor a TVM-FFI object lists in .fini_array
            return f"{self.prefix}___dtor_cuda_dialect_unload_library_once"
        symbol = KINDS[entry].symbol
        if symbol is None:
            raise KeyError(entry)
        return symbol.format(prefix=self.prefix)

    @property
    def library_by_value(self) -> bool | None:
        """Whether cuda_load / cuda_load_to_device take the library handle itself (4.3), not a pointer to it.

        None when the object does not say (emu.dsl.generations.FORMAT_UNKNOWN): those entries are refused.
        """
        return FORMATS[self.format].library_by_value

    @property
    def header_wrapper(self) -> str:
        """The launch wrapper the export's header defines: `<prefix>_wrapper` (4.3), `cute_dsl_<prefix>_wrapper`."""
        return FORMATS[self.format].wrapper.format(prefix=self.prefix)


def discover(obj: ObjectFile, image: LoadedBinary | None = None) -> list[Export]:
    """Every export in `obj`, by prefix; `image`, its laid-out form where there is one, already names its symbols.

    With an image, the functions and kernel slots come from its maps of the defined
    functions and data objects (the loader can only run what it laid out); without one
    (inspect), from the symbol table.  An object without an export is an ObjectFormatError.
    """
    if image is not None:
        functions = image.functions.keys()
        slots = [name[len("kernels_"):] for name in image.data_symbols if name.startswith(KERNEL_SLOT)]
        slots_43 = [] if slots else [name for name in image.data_symbols if name.startswith(KERNEL_SLOT_43)]
    else:
        symbols = obj.symbols
        functions = {name for _, name, _, _, kind, _, shndx in symbols if kind == STT_FUNC and shndx != SHN_UNDEF and name}
        # kernel slots, in the object's order: every name is NUL-free, so one search of the joined names finds them
        joined = "\0" + "\0".join(map(_NAME, symbols))
        slots = _KERNEL_SLOTS.findall(joined)
        slots_43 = [] if slots else _KERNEL_SLOTS_43.findall(joined)
    prefixes = sorted(name[:-len("_cuda_init")] for name in functions
                      if name.endswith("_cuda_init") and not name.startswith("_mlir_") and f"{name[:-5]}_load" in functions)
    if not prefixes:
        raise ObjectFormatError("no CuTe DSL export found: there is no function <prefix>_cuda_init with a matching "
                                "<prefix>_cuda_load (nvidia-cutlass-dsl exports them from 4.3 on; 4.2 and earlier cannot export)",
                                path=obj.path)
    binaries = _binaries(obj, image, prefixes)
    alone = len(prefixes) == 1             # kernel slots are the object's: an export among several names its kernel_info's
    return [_export(obj, prefix, functions, slots if alone else [], slots_43 if alone else [], binaries[prefix], alone)
            for prefix in prefixes]


def _export(obj: ObjectFile, prefix: str, functions, slots: list[str], slots_43: list[str], binary: int | None,
            alone: bool = True) -> Export:
    info, error = _kernel_info(obj, prefix)
    version = obj.c_string(f"{prefix}_version")
    tvm_ffi = tvm_ffi_fields(obj, prefix, functions) or {}
    # 4.3 (emu.dsl.generations): kernel_* slots and none of the metadata symbols 4.4 introduced
    if slots or version is not None or tvm_ffi:      # TVM-FFI loaders are 4.8's: the library by a pointer to its slot
        fmt = "4.4+"
    elif metadata_symbols(obj, prefix):
        fmt = "4.4+"
    else:
        fmt = "4.3" if slots_43 else "unknown"
    if fmt == "4.3":
        slots = slots_43
    tvm_ffi_slots = tvm_ffi.pop("kernels", None) if alone else None      # the object's slots: its only export's
    kernels = tvm_ffi_slots or list(dict.fromkeys(list(info) + slots))
    launch_prefix = f"_mlir_{prefix}__mlir_ciface_"
    launch = sorted(name for name in functions if name.startswith(launch_prefix))
    return Export(prefix=prefix, kernels=kernels, kernel_info=info, kernel_info_error=error,
                  launch_function=launch[0] if launch else None,
                  version=version, function_name=obj.c_string(f"{prefix}_function_name"), format=fmt, binary=binary,
                  **tvm_ffi)


def _binaries(obj: ObjectFile, image: LoadedBinary | None, prefixes: list[str]) -> dict[str, int | None]:
    """Each export's GPU binary address, paired in link order (see the module's docstring).

    One export takes the object's `kernels_binary`.  Several take one each, paired by address
    with the exports' cuda_init; a count that does not match is refused, never guessed.
    """
    if image is None:
        return dict.fromkeys(prefixes)
    if len(prefixes) == 1:
        return {prefixes[0]: image.data_symbols.get(BINARY_SYMBOL)}
    return in_link_order(prefixes, lambda prefix: image.functions[f"{prefix}_cuda_init"],
                         image.addresses(BINARY_SYMBOL), obj.path)


def in_link_order(prefixes: list[str], code_place, binaries: list, path: str) -> dict:
    """Each export's GPU binary among `binaries` (anything ordered by where it lies), paired in link order with
    the exports ordered by `code_place(prefix)`; a count that does not match is refused."""
    if len(binaries) != len(prefixes):
        raise ObjectFormatError(f"{len(prefixes)} exports ({', '.join(prefixes)}) but {len(binaries)} {BINARY_SYMBOL} "
                                "symbols: emu cannot tell which GPU binary each export loads", path=path)
    return dict(zip(sorted(prefixes, key=code_place), sorted(binaries)))


def choose(exports: list[Export], name: str | None, path: str) -> Export:
    """The export called `name`, or the only one when `name` is None; BadInput naming the exports otherwise."""
    if name is None and len(exports) == 1:      # every run of an object export_to_c wrote: no names to build
        return exports[0]
    wanted = chosen_name([e.name for e in exports], name, path)
    return next(e for e in exports if e.name == wanted)


def chosen_name(names: list[str], name: str | None, path: str) -> str:
    """`name` if it is one of `names`, or the only name when `name` is None; BadInput naming them otherwise."""
    if name is None and len(names) == 1:
        return names[0]
    if name is not None and name in names:
        return name
    listed = ", ".join(names)
    if name is None:
        raise BadInput(f"the object holds {len(names)} exports ({listed}): name one (`export:` in a scenario, "
                       "export= in the API)", path=path)
    raise BadInput(f"no export {name!r} in the object (its exports: {listed})", path=path)


def _integer(value) -> int:
    """An attribute value as the DSL writes it: a JSON integer (not a float such as 1e400, a string or a bool)."""
    if type(value) is not int:
        raise ValueError(f"attribute value {json.dumps(value)} is not an integer")
    return value


def _kernel_info(obj: ObjectFile, prefix: str) -> tuple[dict[str, dict[int, int]], str | None]:
    text = obj.c_string(f"{prefix}_kernel_info")
    if text is None:
        return {}, None
    try:
        raw = json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        return {str(name): {int(k): _integer(v) for k, v in (attrs or {}).items()} for name, attrs in raw.items()}, None
    except (ValueError, TypeError, AttributeError) as error:
        return {}, f"{prefix}_kernel_info is not the expected JSON {{kernel: {{attribute: value}}}}: {error}"


