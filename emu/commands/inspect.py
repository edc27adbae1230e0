"""`python -m emu inspect OBJECT`: what an export holds, read statically, without running it.

Before tracing an object (or filing a bug against it) one wants to see what it claims:
its entry points, kernels and `kernel_info`, its launch signature, its GPU binary and every
CUDA wrapper it calls, with whether emu can stub that wrapper.  Nothing here emulates code,
and `args_spec` is decoded symbolically (emu.dsl.args_spec.reader): a crafted pickle is never run.
"""
from __future__ import annotations

import json
import os
from typing import Any, Literal

from pydantic import Field

from stub_models import model_of

from .inspect_tvm_ffi import TvmFfiInspection, inspect_tvm_ffi, tvm_ffi_lines

from ..dsl.args_spec.reader import ArgSpec, ArgSpecError, decode_args_spec
from ..arch import NAMES
from ..dsl.entries import ENTRY_NAMES
from ..dsl.exports import BINARY_SYMBOL, Export, discover, in_link_order
from ..cuda.kernel_attributes import attribute_name
from ..cuda.kernel_images import KernelImages, kernel_image_lines, kernel_images
from ..dsl.generations import recognise
from ..gpu_binary.fatbin import FatbinError, FatbinInfo, container_at, parse_fatbin
from ..support.model import Model
from ..binary.elf.reader import ObjectFile
from ..binary.formats import parse_file
from ..binary.elf.shared_object import SharedObject

ENTRIES = tuple(name for name in ENTRY_NAMES if name != "module_load")   # module_load is header code, not a symbol
EMU_PROVIDED = {"_GLOBAL_OFFSET_TABLE_"}   # emu lays out the GOT itself
MAX_HEADER_CHARS = 4 << 20                 # a header is read for its shape only


class EntryPoint(Model):
    entry: str = Field(description="emu's entry name (as in scenarios)")
    symbol: str | None = Field(description="the function symbol for it; null when the export has no launch wrapper")
    present: bool = Field(description="whether the object defines that function")


class KernelAttribute(Model):
    attribute: int = Field(description="CUfunction_attribute number as kernel_info stores it")
    name: str | None = Field(description="its CUDA name, e.g. PREFERRED_SHARED_MEMORY_CARVEOUT; null if unknown")
    value: int = Field(description="the value kernel_info asks for")


class KernelMetadata(Model):
    kernel: str = Field(description="kernel name as cudaLibraryGetKernel looks it up")
    in_kernel_info: bool = Field(description="whether kernel_info lists this kernel")
    attributes: list[KernelAttribute] = Field(description="what kernel_info asks for this kernel")


class GpuBinary(Model):
    symbol: str = Field(description="the symbol holding the fatbin")
    size: int = Field(description="bytes of the symbol")
    fatbin: FatbinInfo | None = Field(description="the decoded container; null when it cannot be decoded")
    error: str | None = Field(default=None, description="why it cannot be decoded")
    kernels: KernelImages | None = Field(default=None, description="each kernel's attributes derived from its cubin, "
                                         "as the first profile whose device runs the binary loads it")


class UndefinedSymbol(Model):
    symbol: str = Field(description="an undefined symbol the object references")
    handled_by: Literal["stub", "emu", "none"] = Field(
        description="stub: a stub model in stub_models.CATALOGUE answers calls; emu: emu provides it itself "
        "(the GOT); none: a call to it stops with missing_stub (or returns 0 with missing_symbols: return_zero)")
    prototype: str | None = Field(default=None, description="the CUDA prototype of the stubbed function")


class Generation(Model):
    exported_by: str = Field(description="the nvidia-cutlass-dsl releases the evidence allows, e.g. "
                             "'nvidia-cutlass-dsl 4.3.x' or 'nvidia-cutlass-dsl 4.5.0 or later (...)'")
    format: Literal["4.3", "4.4+", "unknown"] = Field(
        description="the export format, which decides how emu calls the loaders: 4.3 loaders take the library handle "
        "by value, 4.4+ a pointer to its slot; unknown: the object does not say, and emu refuses the cuda_load forms")
    evidence: list[str] = Field(description="what in the object (and the header beside it, if any) says so")
    header: str | None = Field(description="the header read beside the object, if there is one")
    launch_wrapper: str | None = Field(description="the header's launch wrapper for this format: <prefix>_wrapper (4.3) "
                                       "or cute_dsl_<prefix>_wrapper; null for a TVM-FFI export, which has no header")


class Initializer(Model):
    entry: str = Field(description="what dlopen or dlclose would run: DT_INIT, DT_INIT_ARRAY[i], DT_FINI, DT_FINI_ARRAY[i]")
    address: int = Field(description="its address in the laid-out library")
    function: str | None = Field(description="the function that starts there; null when no symbol names it (stripped)")
    run: bool = Field(description="whether emu runs it before the loaders (it does not)")
    reason: str = Field(description="why it is not run")


class SharedLibrary(Model):
    needed: list[str] = Field(description="the libraries it names as DT_NEEDED, in order")
    symbol_table: Literal[".symtab", ".dynsym"] = Field(
        description=".symtab: the full symbol table; .dynsym: stripped, each export's GPU binary found by its fatbin header")
    initializers: list[Initializer] = Field(description="what dlopen would run before the loaders and dlclose after them")


class InspectResult(Model):
    object: str = Field(description="path of the object file")
    sha256: str = Field(description="sha256 of the file")
    arch: Literal[NAMES] = Field(description="host architecture of the loaders")
    prefix: str = Field(description="export prefix detected from the symbols")
    version: str | None = Field(description="<prefix>_version")
    generation: Generation = Field(description="which release wrote the export, and how its loaders are called")
    function_name: str | None = Field(description="<prefix>_function_name")
    entry_points: list[EntryPoint] = Field(description="every entry emu knows, with its symbol and presence")
    kernels: list[KernelMetadata] = Field(description="kernels, with what kernel_info asks for each")
    kernel_info: str | None = Field(description="<prefix>_kernel_info verbatim")
    kernel_info_parsed: dict[str, Any] | None = Field(
        description="kernel_info decoded from JSON as written ({kernel: {attribute: value}}, the attribute "
        "numbers JSON strings); null when there is none or it is not a JSON object (kernel_info_error says why)")
    kernel_info_error: str | None = Field(description="why kernel_info is not the expected JSON, if it is not")
    signature: ArgSpec | None = Field(description="the launch signature decoded from <prefix>_args_spec (never unpickled)")
    args_spec_error: str | None = Field(description="why args_spec could not be decoded; null when decoded or absent")
    binary: GpuBinary | None = Field(description="the embedded GPU binary; null when the object has none")
    undefined: list[UndefinedSymbol] = Field(description="every undefined symbol, sorted, with what answers it")
    library: SharedLibrary | None = Field(default=None, description="for a shared library: what it needs and what "
                                          "dlopen would run; null for an object")
    tvm_ffi: TvmFfiInspection | None = Field(default=None, description="a TVM-FFI export (__tvm_ffi_<name>): its entry, "
                                             "compiled signature and what the form does not carry; null for the CuTe ABI")


def inspect_object(path: str) -> list[InspectResult]:
    """Read `path` statically, one result per export; raises ObjectFormatError (an EmuError, exit 2) for bad input."""
    obj = parse_file(path)
    library = _library(path) if isinstance(obj, SharedObject) else None
    exports = library[2] if library is not None else discover(obj)     # a library's as laid out: each its own kernels
    if library is not None and library[0].symbol_table == ".dynsym":
        binaries = library[1]
    else:
        binaries = _binary_symbols(obj, [e.prefix for e in exports])
    return [_inspect_export(path, obj, export, binaries[export.prefix], library and library[0]) for export in exports]


def _library(path: str) -> tuple[SharedLibrary, dict, list[Export]]:
    """What a shared library needs and would run, (stripped) each export's GPU binary as laid out (a
    stand-in symbol over its fatbin's bytes), and its exports as discovered in the laid-out library."""
    from ..cache.loaded import load_image

    image, exports = load_image(path)
    facts = image.extras["library"]
    binaries = {}
    for export in exports:
        if export.binary is not None:
            binaries[export.prefix] = _Laid(f"fatbin at {export.binary:#x}", container_at(image.read, export.binary))
        else:
            binaries[export.prefix] = None
    return SharedLibrary(needed=facts["needed"], symbol_table=facts["symbol_table"],
                         initializers=[Initializer(**entry) for entry in facts["initializers"]]), binaries, exports


class _Laid:
    """A GPU binary a stripped library holds with no symbol: its bytes where the library lays it out."""

    defined = True

    def __init__(self, name: str, data: bytes):
        self.name, self.data = name, data


def _inspect_export(path: str, obj: ObjectFile, export: Export, binary, library: SharedLibrary | None) -> InspectResult:
    signature, spec_error = _signature(obj, export.prefix)
    undefined = _undefined(obj)
    return InspectResult(
        object=str(path), sha256=obj.sha256, arch=obj.arch, prefix=export.prefix, version=export.version,
        generation=_generation(str(path), export, obj),
        function_name=export.function_name, entry_points=_entry_points(obj, export), kernels=_kernels(export),
        kernel_info=(text := obj.c_string(f"{export.prefix}_kernel_info")), kernel_info_parsed=_json_object(text),
        kernel_info_error=export.kernel_info_error,
        signature=signature, args_spec_error=spec_error, binary=_binary(obj, binary), undefined=undefined,
        library=library, tvm_ffi=inspect_tvm_ffi(export, {u.symbol for u in undefined}))


def _json_object(text: str | None) -> dict[str, Any] | None:
    """`text` decoded when it is a JSON object: what API users want of kernel_info, beside the bytes it holds."""
    try:
        value = json.loads(text) if text is not None else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _generation(path: str, export: Export, obj: ObjectFile) -> Generation:
    header = os.path.splitext(path)[0] + ".h"
    try:
        with open(header, encoding="utf-8", errors="replace") as handle:
            text = handle.read(MAX_HEADER_CHARS)
    except OSError:
        header, text = None, None
    if export.ffi_name:
        return Generation(exported_by="nvidia-cutlass-dsl with --enable-tvm-ffi (export_to_c(object_file_path, "
                          "function_name=...); 4.8.1 checked)", format=export.format,
                          evidence=[f"defines __tvm_ffi_{export.ffi_name} and loaders {export.prefix}_cuda_init, "
                                    "_cuda_load, _cuda_load_to_device (called by cuda_dialect_init_library_once)"],
                          header=None, launch_wrapper=None)
    found = recognise(export, obj, text)
    return Generation(exported_by=found.releases, format=found.format, evidence=list(found.evidence),
                      header=header, launch_wrapper=export.header_wrapper)


def _entry_points(obj: ObjectFile, export: Export) -> list[EntryPoint]:
    points = []
    for entry in ENTRIES:
        if (entry in ("tvm_ffi", "process_exit")) != bool(export.ffi_name) and entry in ("launch", "tvm_ffi", "process_exit"):
            continue                        # each form has one launch entry: launch (CuTe ABI) or tvm_ffi
        if export.ffi_name and entry.startswith("mlir_"):
            continue                        # no header calls packed forms in a TVM-FFI export: it has none
        symbol = export.entry_symbol(entry) if entry != "launch" or export.launch_function else None
        found = obj.symbol(symbol) if symbol else None
        points.append(EntryPoint(entry=entry, symbol=symbol, present=bool(found and found.defined)))
    return points


def _kernels(export: Export) -> list[KernelMetadata]:
    return [KernelMetadata(kernel=name, in_kernel_info=name in export.kernel_info,
                           attributes=[KernelAttribute(attribute=a, name=attribute_name(a), value=v)
                                       for a, v in export.kernel_info.get(name, {}).items()])
            for name in export.kernels]


def _signature(obj: ObjectFile, prefix: str) -> tuple[ArgSpec | None, str | None]:
    symbol = obj.symbol(f"{prefix}_args_spec")
    if symbol is None or not symbol.defined:
        return None, None
    try:
        return decode_args_spec(obj.symbol_bytes(symbol)), None
    except ArgSpecError as error:
        return None, str(error)


def _binary_symbols(obj: ObjectFile, prefixes: list[str]) -> dict:
    """Each export's GPU binary symbol: the object's one, or one per export paired in link order (emu.dsl.exports)."""
    if len(prefixes) == 1:
        return {prefixes[0]: obj.symbol(BINARY_SYMBOL)}
    place = lambda symbol: (symbol.shndx, symbol.value, symbol.index)      # noqa: E731 - where it lies in the object
    binaries = [s for s in obj.symbols if s.name == BINARY_SYMBOL and s.defined]
    by_place = {place(s): s for s in binaries}
    paired = in_link_order(prefixes, lambda prefix: place(obj.symbol(f"{prefix}_cuda_init")), list(by_place), obj.path)
    return {prefix: by_place[where] for prefix, where in paired.items()}


def _binary(obj: ObjectFile, symbol) -> GpuBinary | None:
    if symbol is None or not symbol.defined:
        return None
    data, name = (symbol.data, symbol.name) if isinstance(symbol, _Laid) else (obj.symbol_bytes(symbol), BINARY_SYMBOL)
    try:
        return GpuBinary(symbol=name, size=len(data), fatbin=parse_fatbin(data), kernels=kernel_images(data))
    except FatbinError as error:
        return GpuBinary(symbol=name, size=len(data), fatbin=None, error=str(error))


def _undefined(obj: ObjectFile) -> list[UndefinedSymbol]:
    names = sorted({s.name for s in obj.symbols if s.name and not s.defined})
    result = []
    for name in names:
        model = model_of(name)
        handled = "stub" if model else "emu" if name in EMU_PROVIDED else "none"
        result.append(UndefinedSymbol(symbol=name, handled_by=handled, prototype=model.prototype if model else None))
    return result


def show_inspect(result: InspectResult) -> list[str]:
    """The human-readable report `python -m emu inspect` prints."""
    lines = [f"{result.object} ({result.arch}, prefix {result.prefix})",
             f"  exported by {result.generation.exported_by}",
             *[f"    {clause}" for clause in result.generation.evidence]]
    if result.tvm_ffi is not None:
        lines += tvm_ffi_lines(result.tvm_ffi)
    else:
        lines += [f"  format {result.generation.format}: loaders take the library "
                  + {"4.3": "handle by value", "4.4+": "by a pointer to its slot"}.get(result.generation.format,
                                                                                       "in a way the object does not say")
                  + f"; header wrapper {result.generation.launch_wrapper}",
                  f"  version: {result.version}   function: {result.function_name}"]
    lines.append("  entry points:")
    lines += [f"    {p.entry:<25} {p.symbol or '-'}{'' if p.present else '  (absent)'}" for p in result.entry_points]
    if result.tvm_ffi is not None:
        lines.append("  kernels (no kernel_info in a TVM-FFI export):")
        lines += [f"    {kernel.kernel}" for kernel in result.kernels]
        return lines + _binary_lines(result.binary) + _undefined_lines(result)
    lines.append("  kernels (kernel_info asks):")
    for kernel in result.kernels:
        asks = ", ".join(f"{a.attribute} {a.name or '?'}={a.value}" for a in kernel.attributes) or "nothing"
        missing = "not in kernel_info" if result.kernel_info is not None else f"no {result.prefix}_kernel_info in the object"
        lines.append(f"    {kernel.kernel}: {asks if kernel.in_kernel_info else missing}")
    if result.kernel_info_error:
        lines.append(f"    kernel_info error: {result.kernel_info_error}")
    lines.append("  launch signature (args_spec, not unpickled):")
    if result.signature is not None:
        lines += [f"    {p.name}: {p.annotation or '-'} [{p.kind}]" + (f" = {p.default}" if p.default else "")
                  for p in result.signature.parameters]
    else:
        absent = f"no {result.prefix}_args_spec" + (f" (the header's {result.generation.launch_wrapper} is the only "
                                                     "description of the launch)" if result.generation.format == "4.3" else "")
        lines.append(f"    {result.args_spec_error or absent}")
    return lines + _binary_lines(result.binary) + _undefined_lines(result)


def _undefined_lines(result: InspectResult) -> list[str]:
    """The undefined symbols and what answers each; for a shared library, what it needs and would run."""
    lines = ["  undefined symbols:", *[f"    {u.symbol:<34} {u.handled_by}" + (f"  {u.prototype}" if u.prototype else "")
                                       for u in result.undefined]]
    return lines + (_library_lines(result.library) if result.library is not None else [])


def _library_lines(library: SharedLibrary) -> list[str]:
    lines = [f"  shared library: needs {', '.join(library.needed) or 'nothing'}; symbols from {library.symbol_table}"
             + (" (stripped: GPU binaries found by their fatbin headers)" if library.symbol_table == ".dynsym" else "")]
    lines += [f"    {i.entry} {i.function or hex(i.address)}: {i.reason}" for i in library.initializers]
    return lines


def _binary_lines(binary: GpuBinary | None) -> list[str]:
    if binary is None:
        return ["  GPU binary: none"]
    lines = [f"  GPU binary: {binary.symbol}, {binary.size} bytes" + (f": {binary.error}" if binary.error else "")]
    for entry in binary.fatbin.entries if binary.fatbin else []:
        lines.append(f"    {entry.kind} {entry.sm_arch or '-'} v{entry.code_version}, {entry.payload_size} bytes"
                     + (" compressed" if entry.compressed else ""))
    if binary.kernels is not None:
        lines += kernel_image_lines(binary.kernels)
    return lines
