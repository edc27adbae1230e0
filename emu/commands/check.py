"""`python -m emu check OBJECT...|DIRECTORY`: do the loaders apply the export's own metadata?

`<prefix>_kernel_info` says which function attributes each kernel needs; NVIDIA/cutlass#3715
is a loader that silently drops one of them.  This runs cuda_init, cuda_load and
cuda_load_to_device for every device and compares, per kernel, attribute and loader entry,
what kernel_info asks with what that entry's setter calls applied (kernel handles named
through the `_cudaLibraryGetKernel` outputs), next to the runtime model's final state.
Exit 1 on any discrepancy, 0 when every entry applies every attribute.
"""
from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable, Literal

from pydantic import Field

from ..cuda.config import RuntimeConfig
from ..cuda.kernel_attributes import attribute_name
from ..cuda.profile import load_profile
from ..dsl.entries import EntrySpec, loaders_for_devices
from ..dsl.exports import choose
from ..dsl.generations import without_kernel_info
from ..errors import EXIT_BAD_INPUT, EXIT_EXPECTATION_FAILED, EXIT_FAULT, EXIT_OK, BadInput, EmuError
from ..cache.loaded import load_image
from ..support.hotpath import build_record
from ..support.model import Model, empty_list
from ..run.session import run_object
from ..run.trace import CallRecord, EntryRun, ObjectRun

# setter symbol -> (kernel handle argument, device argument or None for the current device)
SETTERS = {"_cudaFuncSetAttribute": ("func", None), "_cudaKernelSetAttributeForDevice": ("kernel", "device")}
LOADERS = ("cuda_load", "cuda_load_to_device")
EXIT_RANK = {EXIT_OK: 0, EXIT_EXPECTATION_FAILED: 1, EXIT_FAULT: 2, EXIT_BAD_INPUT: 3}


class SetCall(Model):
    kernel: str | None = Field(description="kernel name from the handle (null: a handle no cudaLibraryGetKernel gave)")
    attribute: int = Field(description="cudaFuncAttribute number")
    attribute_name: str | None = Field(description="its name, e.g. MAX_DYNAMIC_SHARED_SIZE_BYTES")
    value: int = Field(description="the value passed")
    device: int = Field(description="the device it applies to (the current device for cudaFuncSetAttribute)")
    ret: int = Field(description="what the stub returned (0: applied)")
    call: int = Field(description="index of the call in the object's trace")


class LoaderEntry(Model):
    entry: str = Field(description="cuda_load or cuda_load_to_device(device=N)")
    device: int = Field(description="the device this entry loads for")
    returned: int | None = Field(description="the entry's return value; null on a fault")
    fault: str | None = Field(default=None, description="why the entry stopped, if it faulted")
    sets: list[SetCall] = Field(description="every attribute setter call the entry made, in order")


class AttributeCheck(Model):
    kernel: str = Field(description="kernel name as kernel_info spells it")
    attribute: int = Field(description="cudaFuncAttribute number kernel_info asks for")
    attribute_name: str | None = Field(description="its name, e.g. PREFERRED_SHARED_MEMORY_CARVEOUT")
    entry: str = Field(description="the loader entry compared")
    device: int = Field(description="the device that entry loads for")
    expected: int = Field(description="the value kernel_info asks for")
    applied: int | None = Field(description="the value this entry's last successful setter call gave; null: missing")
    state: int | None = Field(description="the attribute on that device in the runtime model after every entry ran")
    status: Literal["ok", "missing", "different"] = Field(description="ok: applied == expected")
    error: int | None = Field(default=None, description="the error a setter call for it returned, if it failed")


class ObjectCheck(Model):
    """One export of an object, checked (an object holding several exports has one of these per export)."""

    object: str = Field(description="path of the object file")
    arch: str | None = Field(default=None, description="host architecture")
    prefix: str | None = Field(default=None, description="export prefix")
    version: str | None = Field(default=None, description="<prefix>_version")
    kernels: list[str] = Field(default_factory=empty_list, description="kernels the export names")
    kernel_info: dict[str, dict[int, int]] = Field(default_factory=dict, description="what the metadata asks")
    device_count: int = Field(description="devices the runtime model had")
    loaders: list[LoaderEntry] = Field(default_factory=empty_list, description="each loader entry and what it set")
    checks: list[AttributeCheck] = Field(default_factory=empty_list, description="one row per kernel, attribute and loader entry")
    discrepancies: int = Field(default=0, description="checks not ok plus loader entries that failed")
    error: str | None = Field(default=None, description="why the object could not be checked")
    exit_code: int = Field(description="0 clean, 1 discrepancies, 2 bad input, 3 a loader faulted")


class CheckResult(Model):
    device_count: int = Field(description="devices the runtime model had")
    objects: list[ObjectCheck] = Field(description="one result per object, in the order checked")
    exit_code: int = Field(description="the worst object's exit code (bad input over faults over discrepancies)")


def default_device_count(profile: str = "h200") -> int:
    return load_profile(profile).device_count


def check_file(path: str, device_count: int | None = None, profile: str = "h200") -> list[ObjectCheck]:
    """Every export of one object, checked (`check_object`); one error result when the object cannot be read."""
    count = default_device_count(profile) if device_count is None else device_count
    try:
        _image, exports = load_image(path)
    except EmuError as error:
        return [ObjectCheck(object=str(path), device_count=count, error=error.message, exit_code=error.exit_code)]
    return [check_object(path, count, profile, export.name if len(exports) > 1 else None) for export in exports]


def check_object(path: str, device_count: int | None = None, profile: str = "h200", export: str | None = None) -> ObjectCheck:
    """Run the loaders of one export of an object (`export`: its name; None: the object's only one) and compare
    them with its kernel_info; never raises EmuError.

    The rows are built from values emu made itself (the run's records, the export's
    metadata), so they are not validated again (`emu.support.hotpath.build_record`): a check
    of a directory builds dozens per object.
    """
    count = default_device_count(profile) if device_count is None else device_count
    try:
        _image, exports = load_image(path)
        chosen = choose(exports, export, path)
        if chosen.kernel_info_error:
            raise BadInput(chosen.kernel_info_error, path=str(path))
        run = run_object(path, _config(count, profile), list(_loaders(count)), export=export)
        export = chosen
    except EmuError as error:
        return ObjectCheck(object=str(path), device_count=count, error=error.message, exit_code=error.exit_code)
    names = kernel_handles(run.calls)
    loaders = loader_entries(run, names)
    checks = compare(export.kernel_info, loaders, run, names)
    failed = sum(e.returned != 0 for e in loaders)
    discrepancies = failed + sum(c.status != "ok" for c in checks)
    code = EXIT_FAULT if run.fault else EXIT_EXPECTATION_FAILED if discrepancies else EXIT_OK
    return build_record(ObjectCheck, dict(
        object=str(path), arch=run.arch, prefix=run.prefix, version=export.version, kernels=list(export.kernels),
        kernel_info={kernel: dict(attributes) for kernel, attributes in export.kernel_info.items()}, device_count=count,
        loaders=loaders, checks=checks, discrepancies=discrepancies, error=None, exit_code=code))


# The same configuration, entries and labels for every object of a directory: validated once each
# (nothing changes them: a run only reads its configuration and entries).
@lru_cache(maxsize=64)
def _config(device_count: int, profile: str) -> RuntimeConfig:
    return RuntimeConfig(device_count=device_count, profile=profile)


@lru_cache(maxsize=64)
def _loaders(device_count: int) -> tuple[EntrySpec, ...]:
    return tuple(loaders_for_devices(device_count))


@lru_cache(maxsize=256)
def _label(entry: str, device: int | None) -> str:
    return EntrySpec(name=entry, device=device).label()


def kernel_handles(calls: list[CallRecord]) -> dict[int, str]:
    """Kernel handle -> name, from every successful `_cudaLibraryGetKernel`."""
    return {c.outputs["pKernel"]: c.args["name"] for c in calls
            if c.symbol == "_cudaLibraryGetKernel" and c.ret == 0 and "pKernel" in c.outputs}


def loader_entries(run: ObjectRun, names: dict[int, str] | None = None) -> list[LoaderEntry]:
    """Each cuda_load / cuda_load_to_device entry with the setter calls it made (`names`: `kernel_handles`)."""
    names = kernel_handles(run.calls) if names is None else names
    return [_loader_entry(entry, run, names) for entry in run.entries if entry.entry in LOADERS]


def _loader_entry(entry: EntryRun, run: ObjectRun, names: dict[int, str]) -> LoaderEntry:
    calls = run.calls[entry.first_call:entry.end_call]
    device = entry.args.get("device", run.state.current_device)
    for call in calls:
        if call.symbol == "_cudaGetDevice" and call.ret == 0:
            device = call.outputs.get("device", device)
    sets = []
    for call in calls:
        if call.symbol in SETTERS:
            handle_arg, device_arg = SETTERS[call.symbol]
            attr = call.args["attr"]
            sets.append(build_record(SetCall, dict(
                kernel=names.get(call.args[handle_arg]), attribute=attr, attribute_name=attribute_name(attr),
                value=call.args["value"], device=call.args[device_arg] if device_arg else device, ret=call.ret,
                call=call.index)))
    label = _label(entry.entry, entry.args.get("device"))
    return build_record(LoaderEntry, dict(entry=label, device=device, returned=entry.returned,
                                          fault=f"{entry.fault.kind}: {entry.fault.message}" if entry.fault else None,
                                          sets=sets))


def compare(kernel_info: dict[str, dict[int, int]], loaders: list[LoaderEntry], run: ObjectRun,
            names: dict[int, str] | None = None) -> list[AttributeCheck]:
    names = kernel_handles(run.calls) if names is None else names
    checks = []
    for kernel, attributes in kernel_info.items():
        handles = {handle for handle, name in names.items() if name == kernel}
        record = run.state.kernel_with_handle(handles)
        for attribute, expected in attributes.items():
            for loader in loaders:
                state = record.attribute(loader.device, attribute) if record is not None else None
                checks.append(_check(kernel, attribute, expected, loader, state))
    return checks


def _check(kernel: str, attribute: int, expected: int, loader: LoaderEntry, state: int | None) -> AttributeCheck:
    tried = [s for s in loader.sets if s.kernel == kernel and s.attribute == attribute and s.device == loader.device]
    done = [s for s in tried if s.ret == 0]
    applied = done[-1].value if done else None
    status = "missing" if applied is None else "ok" if applied == expected else "different"
    error = tried[-1].ret if tried and not done else None
    return build_record(AttributeCheck, dict(
        kernel=kernel, attribute=attribute, attribute_name=attribute_name(attribute), entry=loader.entry,
        device=loader.device, expected=expected, applied=applied, state=state, status=status, error=error))


def find_objects(paths: list[str]) -> tuple[list[str], bool]:
    """The objects to check (DIRECTORY -> its *.o, recursively, sorted) and whether a directory was given."""
    found, directories = [], False
    for path in paths:
        if os.path.isdir(path):
            directories = True
            objects = sorted(str(p) for p in Path(path).rglob("*.o") if p.is_file())
            if not objects:
                raise BadInput("the directory holds no *.o files", path=path)
            found += objects
        else:
            found.append(path)
    return found, directories


def check_objects(objects: list[str], device_count: int | None = None,
                  progress: Callable[[int, int, str], None] | None = None, profile: str = "h200") -> CheckResult:
    """Check each object in turn (see `find_objects` for turning directories into objects)."""
    count = default_device_count(profile) if device_count is None else device_count
    results = []
    for index, path in enumerate(objects, 1):
        if progress:
            progress(index, len(objects), path)
        results.extend(check_file(path, count, profile))
    worst = max((r.exit_code for r in results), key=lambda code: EXIT_RANK.get(code, 4), default=EXIT_OK)
    return build_record(CheckResult, dict(device_count=count, objects=results, exit_code=worst))


def stderr_progress(index: int, total: int, path: str) -> None:
    """A counter line on stderr: rewritten in place on a terminal, one line per object otherwise."""
    tty = sys.stderr.isatty()
    start, end = ("\r", "\n" if index == total else "") if tty else ("", "\n")
    print(f"{start}check: [{index}/{total}] {path}", end=end, file=sys.stderr, flush=True)


def table(headers: list[str], rows: list[list[str]], indent: str = "") -> list[str]:
    widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows)]
    line = lambda cells: indent + "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows]


def show_object(result: ObjectCheck) -> list[str]:
    if result.error:
        return [f"{result.object}: cannot check: {result.error}"]
    head = f"{result.object} ({result.arch}, prefix {result.prefix}, {result.device_count} device(s)): "
    lines = [head + (f"{result.discrepancies} discrepancies" if result.discrepancies else "clean")]
    lines += [f"  {l.entry} returned {l.returned}" + (f" ({l.fault})" if l.fault else "")
              for l in result.loaders if l.returned != 0]
    rows = [[c.kernel, f"{c.attribute} {c.attribute_name or '?'}", c.entry, str(c.expected), _shown(c.applied, c.error),
             _shown(c.state), c.status.upper() if c.status != "ok" else "ok"]
            for c in result.checks]
    if rows:
        lines += table(["kernel", "attribute", "entry", "expected", "applied", "state", "status"], rows, "  ")
    elif result.version is None and not result.kernel_info:      # a 4.3 export: no metadata at all
        lines.append("  " + without_kernel_info(result.prefix))
    elif not result.checks:
        lines.append("  kernel_info asks nothing to compare")
    return lines


def _shown(value: int | None, error: int | None = None) -> str:
    if value is not None:
        return str(value)
    return "missing" if error is None else f"missing (error {error})"


def show_summary(result: CheckResult) -> list[str]:
    files = [o.object for o in result.objects]
    shown = lambda o: f"{o.object} ({o.prefix})" if files.count(o.object) > 1 else o.object     # noqa: E731 - an export of several
    rows = [[shown(o), o.arch or "-", str(len(o.kernels)), "error" if o.error else str(o.discrepancies), discrepancy_summary(o)]
            for o in result.objects]
    bad = sum(1 for o in result.objects if o.exit_code != EXIT_OK)
    counted = (f"{len(files)} objects" if len(set(files)) == len(files)
               else f"{len(files)} exports in {len(set(files))} objects")
    return table(["object", "arch", "kernels", "discrepancies", "details"], rows) + [
        f"{counted}, {bad} with discrepancies or errors"]


def discrepancy_summary(result: ObjectCheck) -> str:
    """`9 missing x2`: each attribute and status that is not ok, with how many rows have it."""
    if result.error:
        return result.error
    counts: dict[str, int] = {}
    for check in result.checks:
        if check.status != "ok":
            key = f"{check.attribute} {check.status}"
            counts[key] = counts.get(key, 0) + 1
    failed = [f"{l.entry} returned {l.returned}" for l in result.loaders if l.returned != 0]
    return ", ".join([f"{k} x{n}" for k, n in counts.items()] + failed)


def show_check(result: CheckResult, directories: bool) -> list[str]:
    """Every row of each object; for a directory, the summary table alone."""
    lines = []
    if not directories:
        for obj in result.objects:
            lines += show_object(obj)
    if directories or len(result.objects) > 1:
        lines += ([""] if lines else []) + show_summary(result)
    return lines
