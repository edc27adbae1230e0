"""Which CuTe DSL exports of a binary are TVM-FFI exports, and what the object says of each.

`compiled.export_to_c(path, function_name=N)` of a function compiled with `--enable-tvm-ffi` writes
`__tvm_ffi_N` (the entry a framework calls), loaders under the internal prefix `__cute_internal_N`
(`_cuda_init`, `_cuda_load`, `_cuda_load_to_device`), the launch function
`__cute_internal_N_cutlass_<fn>_<mangled args>` and `kernels_binary`; no header, `kernel_info`,
`args_spec` or `_version` (FIELD_NOTES section 9).  emu.dsl.exports finds the loaders' prefix as for
every export; `tvm_ffi_fields` adds what makes it a TVM-FFI one, and the one device type its checks expect.
"""
from __future__ import annotations

from typing import Iterable

INTERNAL_PREFIX = "__cute_internal_"
SLOT_PREFIX = "kernels_"
BINARY = "kernels_binary"
ENTRY_PREFIX = "__tvm_ffi_"


def tvm_ffi_fields(obj, prefix: str, functions: Iterable[str]) -> dict | None:
    """The Export fields of a TVM-FFI export whose loaders have `prefix`, or None when it is not one:
    its name N, the internal launch function's mangled name and the signature the entry quotes."""
    if not prefix.startswith(INTERNAL_PREFIX):
        return None
    name = prefix[len(INTERNAL_PREFIX):]
    if f"{ENTRY_PREFIX}{name}" not in functions:
        return None
    from .signature import expected_device_type, signature_text
    launch = sorted(f for f in functions if f.startswith(f"{prefix}_cutlass_"))
    sections = [section.data for section in obj.sections if section.data and not section.name.startswith(".rela")]
    return {"ffi_name": name, "mangled_function": launch[0] if launch else None,
            "ffi_signature": signature_text(sections, name), "ffi_device_type": expected_device_type(sections),
            "kernels": _kernel_slots(obj)}


def _kernel_slots(obj) -> list[str]:
    """Every kernel whose handle slot `kernels_<kernel>` the object defines, in its order: with no kernel_info,
    the slots are the only list, and a kernel's name need not start with `kernel_` (a class's kernel is
    `cutlass_dsl_<class>_kernel_...`)."""
    names = (symbol.name for symbol in obj.symbols if symbol.defined and symbol.name.startswith(SLOT_PREFIX))
    return list(dict.fromkeys(name[len(SLOT_PREFIX):] for name in names if name != BINARY))


def own_kernels(slots: list[str], image, binary: int | None, prefix: str) -> list[str]:
    """The kernel slots that belong to one TVM-FFI export among several in a file (a library linked from
    several exports): those its own GPU binary's cubins define.  Slots carry no owner (the same kernel
    compiled for two architectures has the same slot name in each object), so the binary decides; where
    emu cannot read it, the export is refused rather than given another export's kernels."""
    from ...errors import ObjectFormatError
    from ...gpu_binary.cubin import CubinError, parse_cubin
    from ...gpu_binary.fatbin import FatbinError, container_at, entry_payload, parse_fatbin
    try:
        data = container_at(image.read, binary)
        names: set[str] = set()
        for entry in parse_fatbin(data).entries:
            payload = entry_payload(data, entry) if entry.kind == "elf" else None
            if payload is not None:
                names.update(kernel.name for kernel in parse_cubin(payload).kernels)
    except (TypeError, ValueError, FatbinError, CubinError) as error:
        raise ObjectFormatError(f"{prefix} is one of several TVM-FFI exports and its GPU binary at "
                                f"{binary if binary is None else hex(binary)} cannot be read ({error}): emu cannot tell "
                                "which kernels are its own", path=image.path) from None
    own = [slot for slot in slots if slot in names]
    if not own and slots:
        raise ObjectFormatError(f"{prefix} is one of several TVM-FFI exports and its GPU binary holds no cubin naming "
                                f"any of the file's kernels ({', '.join(slots)}): emu cannot tell which are its own",
                                path=image.path)
    return own


def exit_destructors(exports, functions) -> list[str]:
    """The destructors a process exit runs: each TVM-FFI export's unload destructor the binary defines, the last
    linked first.  `.fini_array` holds them in link order and exit runs it from its end, so in a file linked
    from several exports every export's unload runs (on an empty slot for an export never called)."""
    found = [(functions[symbol], symbol) for export in exports if export.ffi_name
             and (symbol := export.entry_symbol("process_exit")) in functions]
    return [symbol for _, symbol in sorted(found, reverse=True)]
