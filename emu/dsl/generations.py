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
import re
from dataclasses import dataclass

NEWEST_CHECKED = "4.8.1"
_HEAD = 128            # base64 characters of args_spec read for its class: protocol, frame, module, name
KNOWN_VERSIONS = ("1.1",)
METADATA_SYMBOLS = ("version", "kernel_info", "args_spec")       # <prefix>_<name>: written from 4.4 on


@dataclass(frozen=True)
class Format:
    """How the loaders of one export format are called."""

    name: str
    library_by_value: bool | None  # cuda_load forms take the handle itself (4.3), a pointer to its slot; None: unknown
    module_load_per_device: bool   # the header's module load: load_to_device per device (4.4+), or one cuda_load (4.3)
    wrapper: str                   # the header's launch wrapper, for prefix P
    header_module_type: str


FORMAT_43 = Format("4.3", True, False, "{prefix}_wrapper", "{prefix}_Kernel_Metadata_t")
FORMAT_44 = Format("4.4+", False, True, "cute_dsl_{prefix}_wrapper", "{prefix}_Kernel_Module_t")
# Neither the metadata symbols of 4.4 and later nor kernel slots: how the loaders take the library is not known.
FORMAT_UNKNOWN = Format("unknown", None, True, "cute_dsl_{prefix}_wrapper", "{prefix}_Kernel_Module_t")
FORMATS = {f.name: f for f in (FORMAT_43, FORMAT_44, FORMAT_UNKNOWN)}
UNKNOWN_CONVENTION = ("cannot tell how {symbol} takes the library: the object has neither the metadata symbols "
                      "of nvidia-cutlass-dsl 4.4 and later ({prefix}_version, _kernel_info, _args_spec: a pointer to "
                      "the library slot) nor the kernel_* slots of 4.3 (the handle by value)")
UNKNOWN_RELEASES = "an unknown nvidia-cutlass-dsl release (nvidia-cutlass-dsl 4.3.0 or later: 4.2 and earlier cannot export)"


@dataclass(frozen=True)
class Generation:
    """The export format and the releases the evidence allows."""

    format: str                   # a key of FORMATS
    releases: str                 # "nvidia-cutlass-dsl 4.3.x", "nvidia-cutlass-dsl 4.5.0 or later", ...
    evidence: tuple[str, ...]     # what was seen, one short clause each

    def statement(self) -> str:
        return f"exported by {self.releases} ({'; '.join(self.evidence)})"


KERNEL_SLOT = "kernels_kernel_"   # the 8-byte slot `kernels_<kernel name>`; kernel names start with "kernel_"
KERNEL_SLOT_43 = "kernel_"        # 4.3 exports name the slot after the kernel itself


def metadata_symbols(obj, prefix: str) -> list[str]:
    """The metadata symbols (`<prefix>_version`, `_kernel_info`, `_args_spec`) the object defines."""
    return [name for name in (f"{prefix}_{suffix}" for suffix in METADATA_SYMBOLS)
            if (symbol := obj.symbol(name)) is not None and symbol.defined]


def object_evidence(export, obj) -> list[str]:
    """What in the object decided its format (emu.dsl.exports.discover decides it; this says why)."""
    prefix, present = export.prefix, metadata_symbols(obj, export.prefix)
    if export.format == "4.3":
        return [f"no {prefix}_version, {prefix}_kernel_info or {prefix}_args_spec", "kernel slots named kernel_*"]
    evidence = [", ".join(present) + " present"] if present else []
    if export.kernels and obj.symbol(KERNEL_SLOT[:-len("kernel_")] + export.kernels[0]) is not None:
        evidence.append("kernel slots named kernels_kernel_*")
    if export.format == "unknown":
        evidence.append("no metadata symbols and no kernel slots: the format cannot be told")
    return evidence


def pickled_class(args_spec_text: str | None) -> str | None:
    """`inspect.Signature` / `inspect.FullArgSpec`: the `inspect` class the args_spec pickle names first.

    Read from the pickle's first bytes as data (never unpickled): protocol 4's `SHORT_BINUNICODE
    'inspect'` [MEMOIZE] `SHORT_BINUNICODE <name>`, or the `GLOBAL 'inspect <name>'` of older protocols.
    """
    if not args_spec_text:
        return None
    try:
        data = base64.b64decode(args_spec_text[:_HEAD] + "=" * (-len(args_spec_text[:_HEAD]) % 4))
    except (binascii.Error, ValueError):
        return None
    short = _SHORT_STRINGS.search(data)
    if short is not None:
        name = data[short.end():short.end() + short.group(1)[0]]
        return "inspect." + name.decode("ascii", "replace")
    long_form = _GLOBAL.search(data)
    return f"inspect.{long_form.group(1).decode('ascii')}" if long_form else None


_SHORT_STRINGS = re.compile(rb"\x8c\x07inspect\x94?\x8c(.)", re.S)
_GLOBAL = re.compile(rb"cinspect\n(\w+)\n")


def recognise(export, obj, header_text: str | None = None) -> Generation:
    """The generation of `export` (the emu.dsl.exports.Export of ObjectFile `obj`), narrowed by its header if any."""
    evidence = object_evidence(export, obj)
    if export.format == "4.3":
        releases = "nvidia-cutlass-dsl 4.3.x"
        evidence.append("the 4.3 format, seen in 4.3.5; 4.2 and earlier cannot export, 4.4 changed it")
    elif export.format == "unknown":
        releases = UNKNOWN_RELEASES
    else:
        low, high = _range_from_object(export, obj, evidence)
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


def _range_from_object(export, obj, evidence: list[str]) -> tuple[str, str | None]:
    if export.version is not None and export.version not in KNOWN_VERSIONS:
        evidence.append(f"{export.prefix}_version {export.version!r}, not the '1.1' of 4.4.2-{NEWEST_CHECKED}")
        return _after(NEWEST_CHECKED), None
    pickled = pickled_class(obj.c_string(f"{export.prefix}_args_spec"))
    low, high = "4.4.0", None
    if pickled == "inspect.FullArgSpec":
        evidence.append("args_spec pickles inspect.FullArgSpec (4.4.2 does; 4.5.0 and later pickle inspect.Signature)")
        high = "4.4.x"
    elif pickled == "inspect.Signature":
        evidence.append("args_spec pickles inspect.Signature (4.5.0 and later)")
        low = "4.5.0"
    if obj.arch == "aarch64" or any(9 in attrs for attrs in export.kernel_info.values()):
        evidence.append("AArch64 loaders" if obj.arch == "aarch64" else "kernel_info asks for attribute 9 (carveout)")
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


def unknown_format(export, defines) -> str | None:
    """Why emu does not know the format or metadata of `export`, or None when it does.

    `defines(name)` says whether the binary defines data symbol `name`.  Unknown: a format the
    object does not say (FORMAT_UNKNOWN), a `<prefix>_version` other than KNOWN_VERSIONS (what
    `inspect` states as "a release newer than ..."), or a 4.4+ export without the metadata every
    4.4.2 to NEWEST_CHECKED export carries (`_version`, a readable `_kernel_info`).  What a run of it
    records may not be what its loaders do on a GPU: `run` refuses it, `trace` and the API flag it.
    """
    prefix = export.prefix
    if export.format == "unknown":
        return (f"the export format is unknown, {UNKNOWN_RELEASES}: "
                + UNKNOWN_CONVENTION.format(symbol=f"{prefix}_cuda_load", prefix=prefix))
    if export.version is not None and export.version not in KNOWN_VERSIONS:
        return (f"{prefix}_version is {export.version!r}, not the {', '.join(map(repr, KNOWN_VERSIONS))} of "
                f"4.4.2-{NEWEST_CHECKED}: exported by {_range_text(_after(NEWEST_CHECKED), None)}")
    if export.format == "4.4+":
        missing = [f"{prefix}_{name}" for name in ("version", "kernel_info") if not defines(f"{prefix}_{name}")]
        if missing:
            return (f"no {' or '.join(missing)}, which every export of nvidia-cutlass-dsl 4.4.2-{NEWEST_CHECKED} "
                    "defines: its metadata is of a form emu does not know")
        if export.kernel_info_error:
            return f"{export.kernel_info_error}: its metadata is of a form emu does not know"
    return None
