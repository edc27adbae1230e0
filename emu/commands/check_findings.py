"""What `check` reports as findings, each with a stable id, and what it could not check.

A finding is one thing a CI gate fails on: an attribute a loader entry does not apply as kernel_info
asks, a loader entry that returns an error, a loader entry that faults, or an export whose metadata
cannot be checked against.  Its id is derived from what it is, never from where the object lies on
this machine, the order of the run or a handle: the object's key (its path under the folder checked,
or its file name: `object_keys`), its host architecture, the export, and then the kernel, attribute,
loader entry, device and status (or the entry and its error, the fault's kind and place, the reason the
metadata cannot be checked).  The same finding in a later run, or in a copy of the folder, has the same id.
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import Literal

from pydantic import Field

from stub_models.enums import CudaError, enum_label

from ..dsl.generations import KNOWN_VERSIONS, UNKNOWN_CONVENTION, without_kernel_info
from ..support.hotpath import build_record
from ..support.model import Model

Kind = Literal["attribute", "loader", "fault", "unchecked"]
Metadata = Literal["checked", "none by design (4.3)", "none by design (TVM-FFI)", "missing", "unreadable", "unknown format", "unknown version"]


class Finding(Model):
    id: str = Field(description="stable id: the same finding in a later run (or a moved folder) has the same id")
    kind: Kind = Field(description="attribute: a loader entry does not apply what kernel_info asks; loader: a loader "
                       "entry returned an error; fault: a loader entry stopped; unchecked: the metadata cannot be checked")
    object: str = Field(description="the object's key: its path under the folder checked, or its file name")
    export: str | None = Field(description="the export (its prefix)")
    description: str = Field(description="what the finding is, in words")
    acknowledged: bool = Field(default=False, description="true when the baseline (--baseline) lists its id")


def cuda_error_name(code: int | None) -> str | None:
    """`NO_KERNEL_IMAGE_FOR_DEVICE` for 209 (stub_models.enums.CudaError, as traces name it); None for a number it lacks."""
    member = None if code is None else CudaError._value2member_map_.get(code)    # as CudaError(code), never raising
    return None if member is None else member.name


def cuda_error_label(code: int) -> str:
    """`209 NO_KERNEL_IMAGE_FOR_DEVICE`: the number and its name, as `trace` prints return values."""
    return enum_label(CudaError, code)


SCENARIO_HINT = "; set runtime.missing_symbols"      # how emu.stubs.dispatch ends a missing stub's message
UNDER_CHECK = "; under check: "
MISSING_STUB_HINT = (UNDER_CHECK + "`--missing-symbols return_zero` lets such a call return 0 and checks the rest, "
                     "`python -m emu inspect {path}` lists which undefined symbols have a stub, and a symbol the "
                     "CUDA runtime exports that emu lacks is worth reporting to emu")


def fault_message(kind: str, message: str, path: str) -> str:
    """The fault's message, with what a `check` user can do about a missing stub (not the scenario's setting)."""
    if kind != "missing_stub":
        return message
    return message.split(SCENARIO_HINT, 1)[0] + MISSING_STUB_HINT.format(path=path)


_COMPACT_JSON = json.JSONEncoder(separators=(",", ":")).encode     # json.dumps(..., separators=...) makes one per call


def finding_id(kind: str, *identity: object) -> str:
    """`attribute-3f9a1c2b7d4e`: the kind and a digest of what identifies the finding."""
    text = _COMPACT_JSON([kind, *identity])
    return f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def object_keys(given: list[str], objects: list[str]) -> list[str]:
    """Each object's key: its path (with `/`) relative to the deepest folder holding every path given (a
    folder given counts as itself, a file as its folder): `x86_64/carveout_25.o` for `check exports/`,
    `carveout_25.o` for `check exports/x86_64/carveout_25.o`, wherever `exports/` lies."""
    folders = [os.path.abspath(p) if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in given]
    if not folders:
        return []
    try:
        root = os.path.commonpath(folders)
    except ValueError:                      # different drives: no common folder, each object by its file name
        return [os.path.basename(o) for o in objects]
    return [os.path.relpath(os.path.abspath(o), root).replace(os.sep, "/") for o in objects]


BY_DESIGN = ("checked", "none by design (4.3)", "none by design (TVM-FFI)")     # no finding of its own


def metadata_state(export, image) -> tuple[Metadata, str | None]:
    """Whether the export's metadata can be checked against, and if not, why (in words)."""
    prefix = export.prefix
    if export.ffi_name:
        return "none by design (TVM-FFI)", (f"a TVM-FFI export carries no {prefix}_kernel_info: the attributes its "
                                            "loaders set cannot be compared with requested ones")
    if export.format == "unknown":
        return "unknown format", ("the export's format is unknown, so its loaders were not run: "
                                  + UNKNOWN_CONVENTION.format(symbol=f"{prefix}_cuda_load", prefix=prefix))
    if export.format == "4.3":
        return "none by design (4.3)", without_kernel_info(prefix)
    if export.kernel_info_error:
        return "unreadable", f"{export.kernel_info_error}; what each kernel needs cannot be checked"
    if f"{prefix}_kernel_info" not in image.data_symbols:
        return "missing", (f"no {prefix}_kernel_info in the object, although its format (4.4 and later) carries one: "
                           "what each kernel needs cannot be checked; checked: only what each loader returned")
    if export.version is not None and export.version not in KNOWN_VERSIONS:
        return "unknown version", (f"{prefix}_version is {export.version!r}, not one emu knows "
                                   f"({', '.join(KNOWN_VERSIONS)}): kernel_info may not mean what emu reads it as")
    return "checked", None


def findings_of(key: str, export: str | None, arch: str | None, profile: str, metadata: Metadata, unchecked: str | None,
                loaders: list, checks: list) -> list[Finding]:
    """Every finding of one checked export, in report order, from the parts of its `ObjectCheck` (`check` has them
    before it builds the record, which then holds them as they are)."""
    where = f"{key} ({export})"
    found = []

    def add(kind: str, identity: tuple, description: str) -> None:     # emu's own values: built unvalidated (hotpath)
        found.append(build_record(Finding, dict(id=finding_id(kind, key, arch, export, *identity), kind=kind, object=key,
                                                export=export, description=f"{where}: {description}", acknowledged=False)))

    if metadata not in BY_DESIGN:
        add("unchecked", (metadata,), f"not checked: {unchecked}")
    for loader in loaders:
        if loader.fault is not None:
            add("fault", (loader.entry, loader.device, loader.fault_kind, loader.fault_location),
                f"{loader.entry} stopped: {loader.fault.split(UNDER_CHECK)[0]}")   # what it is, not what to do
        elif loader.returned != 0:
            said = (f"{loader.returned}, raising {loader.raised['kind']}: {loader.raised['message']}" if loader.raised
                    else str(loader.returned) if loader.entry == "tvm_ffi" else cuda_error_label(loader.returned))
            add("loader", (loader.entry, loader.device, loader.returned),
                f"{loader.entry} returned {said} on profile {profile}")
    for check in checks:
        if check.status != "ok":
            attribute = f"{check.attribute} {check.attribute_name or '?'}"
            did = (f"does not apply {attribute}={check.expected}, which kernel_info asks" if check.status == "missing"
                   else f"applies {attribute}={check.applied} where kernel_info asks {check.expected}")
            error = f", its setter returned {cuda_error_label(check.error)}" if check.error is not None else ""
            add("attribute", (check.kernel, check.attribute, check.entry, check.device, check.status),
                f"{check.entry} {did} for {check.kernel} on device {check.device} ({check.status}{error})")
    return found
