"""What a CuTe DSL export looks like from its symbols: prefix, entry points, kernels, metadata."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING

from .entries import KINDS
from ..errors import ObjectFormatError
from .generations import FORMATS, KERNEL_SLOT, KERNEL_SLOT_43, METADATA_SYMBOLS, metadata_symbols
from ..binary.elf.reader import SHN_UNDEF, STT_FUNC, ObjectFile

if TYPE_CHECKING:
    from ..binary.image import LoadedBinary

_KERNEL_SLOTS = re.compile("\0kernels_(kernel_[^\0]*)")        # searched in NUL + the names joined by NULs
_KERNEL_SLOTS_43 = re.compile("\0(kernel_[^\0]*)")
_NAME = itemgetter(1)


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

    def entry_symbol(self, entry: str) -> str:
        """The function an entry runs: `<prefix>_cuda_load`, `_mlir_<prefix>_cuda_load`, the launch wrapper."""
        if entry == "launch":
            return self.launch_function or f"_mlir_{self.prefix}__mlir_ciface_"
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


def describe_export(obj: ObjectFile, image: LoadedBinary | None = None) -> Export:
    """The export in `obj`; `image`, its laid-out form where there is one, already names its symbols.

    With an image, the functions and kernel slots come from its maps of the defined
    functions and data objects (the loader can only run what it laid out); without one
    (inspect), from the symbol table.
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
    if len(prefixes) > 1:
        raise ObjectFormatError(f"several exports in one object ({', '.join(prefixes)}); emu runs one export per object", path=obj.path)
    prefix = prefixes[0]
    info, error = _kernel_info(obj, prefix)
    version = obj.c_string(f"{prefix}_version")
    # 4.3 (emu.dsl.generations): kernel_* slots and none of the metadata symbols 4.4 introduced
    if slots or version is not None:
        fmt = "4.4+"
    elif metadata_symbols(obj, prefix):
        fmt = "4.4+"
    else:
        fmt = "4.3" if slots_43 else "unknown"
    if fmt == "4.3":
        slots = slots_43
    kernels = list(dict.fromkeys(list(info) + slots))
    launch_prefix = f"_mlir_{prefix}__mlir_ciface_"
    launch = sorted(name for name in functions if name.startswith(launch_prefix))
    return Export(prefix=prefix, kernels=kernels, kernel_info=info, kernel_info_error=error,
                  launch_function=launch[0] if launch else None,
                  version=version, function_name=obj.c_string(f"{prefix}_function_name"), format=fmt)


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


