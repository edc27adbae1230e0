"""Which nvidia-cutlass-dsl release wrote an export, told from what the object and its header hold.

The export format changed twice among the releases that can export (4.2 and earlier have no
export API; tests/fixtures/cutlass-dsl-4.3.5 ... 4.8.1 are the evidence):
- 4.3 (seen in 4.3.5): no `<prefix>_version`, `<prefix>_kernel_info` or `<prefix>_args_spec`;
  kernel handle slots named `kernel_<name>`; `<prefix>_cuda_load(CUlibrary lib)` and
  `<prefix>_cuda_load_to_device(CUlibrary lib, int device)` take the library handle by value;
  the header (`#include <cuda.h>`) has `<prefix>_Kernel_Metadata_t`, a Kernel_Metadata_Load that
  calls `_mlir_<prefix>_cuda_init` then `_mlir_<prefix>_cuda_load` and then sets attribute 8 itself
  through the driver API, and the wrapper `<prefix>_wrapper`; launches pass only the launch
  attributes that are set.
- 4.4 and later (4.4.2 to 4.8.1): `<prefix>_version` "1.1", `<prefix>_kernel_info`, `<prefix>_args_spec`,
  slots `kernels_kernel_<name>`, loaders that take a pointer to the library slot, a header with
  `<prefix>_Kernel_Module_t`, Kernel_Module_Load (init, then load_to_device per device) and
  `cute_dsl_<prefix>_wrapper`.  Within it: 4.4.2 pickles an `inspect.FullArgSpec` in args_spec, 4.5.0
  and later an `inspect.Signature`; headers initialise `ret` (`cudaError_t ret =
  cudaSuccess;`) from 4.6.0, 4.4.2 to 4.5.3 do not; only 4.6.0 and later build AArch64 loaders or ask for a
  shared memory carveout (attribute 9) in kernel_info.

The object alone decides how emu calls the loaders (`Format`); the header only narrows the
release range that `inspect` states.  Each statement is a range the evidence supports.
"""
from __future__ import annotations

import base64
import binascii
import pickletools
import re
from dataclasses import dataclass

NEWEST_CHECKED = "4.8.1"
_HEAD = 128            # base64 characters of args_spec read for its class: protocol, frame, module, name
KNOWN_VERSIONS = ("1.1",)


@dataclass(frozen=True)
class Format:
    """How the loaders of one export format are called."""

    name: str
    library_by_value: bool        # cuda_load / cuda_load_to_device take the handle, not a pointer to the slot
    module_load_loads: str        # the entry Kernel_Module_Load calls after init: "mlir_cuda_load" or per device
    wrapper: str                  # the header's launch wrapper, for prefix P
    header_module_type: str
    lacks: str


FORMAT_43 = Format("4.3", True, "mlir_cuda_load", "{prefix}_wrapper", "{prefix}_Kernel_Metadata_t",
                   "no kernel_info, args_spec or version symbols (nothing for `check` to compare), no carveout, "
                   "no host target (loaders built for the compiling CPU), no cooperative launch")
FORMAT_44 = Format("4.4+", False, "mlir_cuda_load_to_device", "cute_dsl_{prefix}_wrapper", "{prefix}_Kernel_Module_t",
                   "")
FORMATS = {f.name: f for f in (FORMAT_43, FORMAT_44)}


@dataclass(frozen=True)
class Generation:
    """The export format and the releases the evidence allows."""

    format: str                   # a key of FORMATS
    releases: str                 # "nvidia-cutlass-dsl 4.3.x", "nvidia-cutlass-dsl 4.5.0 or later", ...
    evidence: tuple[str, ...]     # what was seen, one short clause each

    @property
    def call_format(self) -> Format:
        return FORMATS[self.format]

    def statement(self) -> str:
        return f"exported by {self.releases} ({'; '.join(self.evidence)})"


def object_format(prefix: str, defined: set[str], slot_style: str | None) -> tuple[str, list[str]]:
    """The format and its evidence from the object's defined symbols and the naming of its kernel slots.

    `slot_style`: "kernels_kernel_" or "kernel_" (the slots found), None when there is none.
    """
    metadata = [name for name in ("version", "kernel_info", "args_spec") if f"{prefix}_{name}" in defined]
    if not metadata and slot_style == "kernel_":
        return "4.3", [f"no {prefix}_version, {prefix}_kernel_info or {prefix}_args_spec", "kernel slots named kernel_*"]
    evidence = [", ".join(f"{prefix}_{name}" for name in metadata) + " present"] if metadata else []
    if slot_style == "kernels_kernel_":
        evidence.append("kernel slots named kernels_kernel_*")
    if not evidence:
        evidence.append("no metadata symbols and no kernel slots: the format cannot be told; run as 4.4 and later")
    return "4.4+", evidence


def pickled_class(args_spec_text: str | None) -> str | None:
    """`inspect.Signature` / `inspect.FullArgSpec`: the first class the args_spec pickle names (never unpickled)."""
    if not args_spec_text:
        return None
    try:
        data = base64.b64decode(args_spec_text[:_HEAD], validate=False)   # the class is named in the first bytes
        strings: list[str] = []
        for opcode, arg, _ in pickletools.genops(data):
            if opcode.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
                strings.append(arg)
            elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                return f"{strings[-2]}.{strings[-1]}"
            elif opcode.name == "GLOBAL":
                return str(arg).replace(" ", ".")
    except (binascii.Error, ValueError, TypeError):     # a truncated or foreign pickle names nothing
        return None
    return None


def recognise(export, arch: str, header_text: str | None = None) -> Generation:
    """The generation of `export` (an emu.export.Export of an `arch` object), narrowed by its header if any."""
    evidence = list(export.format_evidence)
    if export.format == "4.3":
        releases = "nvidia-cutlass-dsl 4.3.x"
        evidence.append("the 4.3 format, seen in 4.3.5; 4.2 and earlier cannot export, 4.4 changed it")
    else:
        low, high = _range_from_object(export, arch, evidence)
        releases = _range_text(*_narrow_by_header(export.prefix, header_text, low, high, evidence))
    if header_text is not None:
        header = header_format(export.prefix, header_text)
        if header is None:
            evidence.append("the header beside the object has no export wrapper emu knows")
        elif header != export.format:
            evidence.append(f"the header beside the object is of the {header} format, the object of the "
                            f"{export.format} format: they are not one export")
    return Generation(export.format, releases, tuple(evidence))


def header_format(prefix: str, text: str) -> str | None:
    """The format a header is written in, from its module type and wrapper name; None if neither."""
    for fmt in FORMATS.values():
        wrapper = fmt.wrapper.format(prefix=prefix)
        module = fmt.header_module_type.format(prefix=prefix)
        if re.search(rf"\b{re.escape(wrapper)}\s*\(", text) and module in text:
            return fmt.name
    return None


def _range_from_object(export, arch: str, evidence: list[str]) -> tuple[str, str | None]:
    if export.version is not None and export.version not in KNOWN_VERSIONS:
        evidence.append(f"{export.prefix}_version {export.version!r}, not the '1.1' of 4.4.2-{NEWEST_CHECKED}")
        return _after(NEWEST_CHECKED), None
    pickled = export.args_spec_class
    low, high = "4.4.0", None
    if pickled == "inspect.FullArgSpec":
        evidence.append("args_spec pickles inspect.FullArgSpec (4.4.2 does; 4.5.0 and later pickle inspect.Signature)")
        high = "4.4.x"
    elif pickled == "inspect.Signature":
        evidence.append("args_spec pickles inspect.Signature (4.5.0 and later)")
        low = "4.5.0"
    if arch == "aarch64" or any(9 in attrs for attrs in export.kernel_info.values()):
        evidence.append("AArch64 loaders" if arch == "aarch64" else "kernel_info asks for attribute 9 (carveout)")
        low = "4.6.0"
    return low, high


def _narrow_by_header(prefix: str, text: str | None, low: str, high: str | None,
                      evidence: list[str]) -> tuple[str, str | None]:
    if text is None or header_format(prefix, text) != "4.4+":
        return low, high
    if re.search(r"cudaError_t ret = cudaSuccess;", text):
        evidence.append("the header initialises ret (4.6.0 and later)")
        return max(low, "4.6.0", key=_key), high
    if re.search(r"cudaError_t ret;", text):
        evidence.append("the header leaves ret uninitialised (4.4.2 to 4.5.3; not 4.6.0 and later)")
        return low, high or "4.5.x"
    return low, high


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 99 for part in version.split("."))


def _after(version: str) -> str:
    return f"after {version}"


def _range_text(low: str, high: str | None) -> str:
    if low.startswith("after "):
        return f"a nvidia-cutlass-dsl release newer than {low[len('after '):]} (an export format emu has not seen)"
    if high is None:
        return f"nvidia-cutlass-dsl {low} or later (the format is unchanged through {NEWEST_CHECKED}, the newest checked)"
    if high.endswith(".x") and low == high[:-1] + "0":
        return f"nvidia-cutlass-dsl {high}"
    if _key(low) > _key(high):
        return f"no nvidia-cutlass-dsl release emu knows (the evidence contradicts itself: {low} or later, {high} or earlier)"
    return f"nvidia-cutlass-dsl {low} to {high}"


def without_kernel_info(prefix: str) -> str:
    """What `check` can say about an export without `<prefix>_kernel_info` (every 4.3 export)."""
    return (f"no {prefix}_kernel_info in the object (4.3-format exports, from nvidia-cutlass-dsl 4.3.x, carry none): "
            "which attributes each kernel needs cannot be checked; checked: only what each loader returned")
