"""`python -m emu check OBJECT...|DIRECTORY`: do the loaders apply the export's own metadata?

`<prefix>_kernel_info` says which function attributes each kernel needs; NVIDIA/cutlass#3715
is a loader that silently drops one of them.  This runs cuda_init, cuda_load and
cuda_load_to_device for every device and compares, per kernel, attribute and loader entry,
what kernel_info asks with what that entry's setter calls applied (kernel handles named
through the `_cudaLibraryGetKernel` outputs), next to the runtime model's final state.
Each export runs on the device profile whose device runs its GPU binary (unless one is given).
The launch is not run: whether each device profile accepts the launch is `trace`'s (emu.cuda.feasibility).
What is wrong is reported as findings with stable ids (emu.commands.check_findings), which a
baseline file can acknowledge (emu.commands.baseline).  Exit 1 on a new finding (a discrepancy,
a loader that returns an error, metadata that cannot be checked) or a stale baseline entry,
3 on a new loader fault, 2 when an object cannot be read, 0 otherwise.
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
from ..cuda.object_profile import pick_profile
from ..cuda.profile import PROFILES, load_profile
from ..dsl.entries import TVM_FFI_ENTRIES, EntrySpec, loaders_for_devices
from ..dsl.exports import choose
from ..errors import EXIT_BAD_INPUT, EXIT_EXPECTATION_FAILED, EXIT_FAULT, EXIT_OK, BadInput, EmuError
from .baseline import Baseline, BaselineReport, apply_baseline
from .check_findings import (Finding, Metadata, cuda_error_label, cuda_error_name, fault_message, findings_of,
                             metadata_state)
from ..cache.loaded import load_image
from ..support.hotpath import build_record, record_factory
from ..support.model import Model, empty_list
from ..run.session import run_object
from ..run.trace import CallRecord, EntryRun, LaunchFeasibility, ObjectRun

# setter symbol -> (kernel handle argument, device argument or None for the current device)
SETTERS = {"_cudaFuncSetAttribute": ("func", None), "_cudaKernelSetAttributeForDevice": ("kernel", "device")}
LOADERS = ("cuda_load", "cuda_load_to_device", "tvm_ffi")      # tvm_ffi: a TVM-FFI export's call, its loads inside
EXIT_RANK = {EXIT_OK: 0, EXIT_EXPECTATION_FAILED: 1, EXIT_FAULT: 2, EXIT_BAD_INPUT: 3}
# check_objects reads this many objects' images, then runs their loaders, then compares what each ran: each step's
# code and data stay in the CPU's caches across the objects, where one object's translation and run would evict them
BATCH = 16


class SetCall(Model):
    kernel: str | None = Field(description="kernel name from the handle (null: a handle no cudaLibraryGetKernel gave)")
    attribute: int = Field(description="cudaFuncAttribute number")
    attribute_name: str | None = Field(description="its name, e.g. MAX_DYNAMIC_SHARED_SIZE_BYTES")
    value: int = Field(description="the value passed")
    device: int = Field(description="the device it applies to (the current device for cudaFuncSetAttribute)")
    ret: int = Field(description="what the stub returned (0: applied)")
    ret_name: str | None = Field(description="its cudaError name, e.g. INVALID_VALUE (SUCCESS for 0)")
    call: int = Field(description="index of the call in the object's trace")


class LoaderEntry(Model):
    entry: str = Field(description="cuda_load or cuda_load_to_device(device=N)")
    device: int = Field(description="the device this entry loads for")
    returned: int | None = Field(description="the entry's return value; null on a fault")
    returned_name: str | None = Field(default=None, description="its cudaError name, e.g. NO_KERNEL_IMAGE_FOR_DEVICE")
    fault: str | None = Field(default=None, description="why the entry stopped, if it faulted")
    fault_kind: str | None = Field(default=None, description="the fault's kind, e.g. missing_stub")
    fault_location: str | None = Field(default=None, description="where it stopped, as function+offset")
    sets: list[SetCall] = Field(description="every attribute setter call the entry made, in order")
    raised: dict[str, str] | None = Field(default=None, description="tvm_ffi: the error the call raised, {kind, message}")


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
    error_name: str | None = Field(default=None, description="its cudaError name, e.g. INVALID_VALUE")


class ObjectCheck(Model):
    """One export of an object, checked (an object holding several exports has one of these per export)."""

    object: str = Field(description="path of the object file")
    key: str = Field(description="the object's name in finding ids: its path under the folder checked, or its file name")
    arch: str | None = Field(default=None, description="host architecture")
    prefix: str | None = Field(default=None, description="export prefix")
    version: str | None = Field(default=None, description="<prefix>_version")
    kernels: list[str] = Field(default_factory=empty_list, description="kernels the export names")
    kernel_info: dict[str, dict[int, int]] = Field(default_factory=dict, description="what the metadata asks")
    device_count: int = Field(description="devices the runtime model had")
    profile: str = Field(description="the device profile the loaders ran on")
    profile_source: Literal["chosen", "given", "default"] = Field(
        description="chosen: the first profile whose device runs the export's GPU binary; given: --profile; default: "
        "no profile emu has runs it (or there is none), so the first (h200)")
    profile_measured: bool = Field(default=True, description="false when the profile's figures are published ones "
                                   "(a100, b200), not measured on the device: the verdicts rest on them")
    metadata: Metadata = Field(default="checked", description="whether kernel_info could be checked against: checked; "
                               "none by design (4.3), which is no finding; else why not, which is a finding")
    unchecked: str | None = Field(default=None, description="what could not be checked and why")
    loaders: list[LoaderEntry] = Field(default_factory=empty_list, description="each loader entry and what it set")
    checks: list[AttributeCheck] = Field(default_factory=empty_list, description="one row per kernel, attribute and loader entry")
    discrepancies: int = Field(default=0, description="checks not ok plus loader entries that failed")
    findings: list[Finding] = Field(default_factory=empty_list, description="what fails the check, each with a stable id")
    tvm_ffi_launches: list[LaunchFeasibility] = Field(default_factory=empty_list, description="TVM-FFI: each launch "
                                                        "the call made, judged on every device profile (as `trace` "
                                                        "shows it): whether each profile's device runs the GPU binary "
                                                        "and accepts the launch; empty for a CuTe-ABI export (check "
                                                        "runs its loaders, not its launch)")
    error: str | None = Field(default=None, description="why the object could not be checked")
    exit_code: int = Field(description="0 no finding (or only acknowledged ones), 1 a new finding, 2 bad input, "
                           "3 a loader faulted (a new finding)")


class CheckResult(Model):
    device_count: int | None = Field(description="devices the runtime model had (--devices); null: each profile's count")
    objects: list[ObjectCheck] = Field(description="one result per export of each object, in the order checked")
    baseline: BaselineReport | None = Field(default=None, description="what the baseline (--baseline) acknowledged")
    exit_code: int = Field(description="the worst object's exit code (bad input over faults over findings), and at "
                           "least 1 when a baseline entry is stale")


def default_device_count(profile: str | None = None) -> int:
    return load_profile(profile or PROFILES[0]).device_count


def check_file(path: str, device_count: int | None = None, profile: str | None = None, key: str | None = None,
               missing_symbols: str = "error") -> list[ObjectCheck]:
    """Every export of one object, checked (`check_object`); one error result when the object cannot be read."""
    return [_compared(ran) for ran in _run_file(path, _loaded(path), device_count, profile, key, missing_symbols)]


def check_object(path: str, device_count: int | None = None, profile: str | None = None, export: str | None = None,
                 key: str | None = None, missing_symbols: str = "error") -> ObjectCheck:
    """Run the loaders of one export of an object (`export`: its name; None: the object's only one) on `profile`
    (None: the profile whose device runs its GPU binary) and compare them with its kernel_info; never raises
    EmuError.  `key` names the object in finding ids (default: its file name).

    The rows are built from values emu made itself (the run's records, the export's
    metadata), so they are not validated again (`emu.support.hotpath.build_record`): a check
    of a directory builds dozens per object.
    """
    loaded = _loaded(path)
    if isinstance(loaded, EmuError):
        return _unreadable(path, key, device_count, profile, loaded)
    return _compared(_run_export(path, *loaded, device_count, profile, export, key, missing_symbols))


def _loaded(path: str) -> tuple | EmuError:
    """The object's image and exports (`load_image`), or why it cannot be read."""
    try:
        return load_image(path)
    except EmuError as error:
        return error


def _run_file(path: str, loaded: tuple | EmuError, device_count: int | None, profile: str | None, key: str | None,
              missing_symbols: str) -> list:
    """`_run_export` of every export of a loaded object; one error result when it could not be read."""
    if isinstance(loaded, EmuError):
        return [_unreadable(path, key, device_count, profile, loaded)]
    image, exports = loaded
    return [_run_export(path, image, exports, device_count, profile, export.name if len(exports) > 1 else None, key,
                        missing_symbols) for export in exports]


def _run_export(path: str, image, exports, device_count: int | None, profile: str | None, export: str | None,
                key: str | None, missing_symbols: str) -> ObjectCheck | tuple:
    """The first half of `check_object`: its error result, or what `_compared` compares (the run, and what it ran on)."""
    key = os.path.basename(path) if key is None else key
    try:
        chosen = choose(exports, export, path)
        used, source = pick_profile(image, chosen, profile)
        count = default_device_count(used) if device_count is None else device_count
        metadata, unchecked = metadata_state(chosen, image)
        entries = list(TVM_FFI_ENTRIES) if chosen.ffi_name else list(_loaders(count))
        run = None if metadata == "unknown format" else \
            run_object(path, _config(count, used, missing_symbols), entries, export=export)
    except EmuError as error:
        return _unreadable(path, key, device_count, profile, error)
    return path, key, image.arch, chosen, used, source, count, metadata, unchecked, run


def _compared(ran: ObjectCheck | tuple) -> ObjectCheck:
    """The second half of `check_object`: the run's loader entries and rows compared with kernel_info, and findings."""
    if isinstance(ran, ObjectCheck):
        return ran
    path, key, arch, chosen, used, source, count, metadata, unchecked, run = ran
    if run is not None:
        names = kernel_handles(run.calls)
        loaders = loader_entries(run, names)
        checks = compare(chosen.kernel_info, loaders, run, names)
    else:
        loaders, checks = [], []
    prefix = chosen.prefix
    findings = findings_of(key, prefix, arch, used, metadata, unchecked, loaders, checks)
    return build_record(ObjectCheck, dict(
        object=str(path), key=key, arch=arch, prefix=prefix, version=chosen.version,
        kernels=list(chosen.kernels), kernel_info={kernel: dict(attrs) for kernel, attrs in chosen.kernel_info.items()},
        device_count=count, profile=used, profile_source=source,
        profile_measured=load_profile(used).measured, metadata=metadata, unchecked=unchecked,
        loaders=loaders, checks=checks,
        discrepancies=sum(e.returned != 0 for e in loaders) + sum(c.status != "ok" for c in checks), findings=findings,
        tvm_ffi_launches=list(run.launch_feasibility) if run is not None and chosen.ffi_name else [], error=None,
        exit_code=findings_exit_code(findings)))


def _unreadable(path: str, key: str | None, device_count: int | None, profile: str | None, error: EmuError) -> ObjectCheck:
    return ObjectCheck(object=str(path), key=os.path.basename(path) if key is None else key,
                       device_count=default_device_count(profile) if device_count is None else device_count,
                       profile=profile or PROFILES[0], profile_source="default" if profile is None else "given",
                       error=error.message, exit_code=error.exit_code)


def object_exit_code(result: ObjectCheck) -> int:
    """2 when it could not be read; else 3 for a new fault, 1 for any other new finding, 0 when all are acknowledged."""
    return result.exit_code if result.error is not None else findings_exit_code(result.findings)


def findings_exit_code(findings: list[Finding]) -> int:
    """3 for a new fault, 1 for any other new finding, 0 when all are acknowledged (or there is none)."""
    new = [f for f in findings if not f.acknowledged]
    return EXIT_FAULT if any(f.kind == "fault" for f in new) else EXIT_EXPECTATION_FAILED if new else EXIT_OK


# The same configuration, entries and labels for every object of a directory: validated once each
# (nothing changes them: a run only reads its configuration and entries).
@lru_cache(maxsize=64)
def _config(device_count: int, profile: str, missing_symbols: str = "error") -> RuntimeConfig:
    return RuntimeConfig(device_count=device_count, profile=profile, missing_symbols=missing_symbols)


@lru_cache(maxsize=64)
def _loaders(device_count: int) -> tuple[EntrySpec, ...]:
    return tuple(loaders_for_devices(device_count))


# A check names every attribute of every setter call and every kernel_info row: by its number (bounded, as an
# object may pass any number)
_attribute_name = lru_cache(maxsize=256)(attribute_name)


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
    device = entry.args.get("device", run.state.current_device)
    setters = []
    for call in run.calls[entry.first_call:entry.end_call]:        # one pass: the setters, and the device last got
        symbol = call.symbol
        if symbol in SETTERS:
            setters.append(call)
        elif symbol == "_cudaGetDevice" and call.ret == 0:
            device = call.outputs.get("device", device)
    make = record_factory(SetCall)
    sets = []
    for call in setters:
        handle_arg, device_arg = SETTERS[call.symbol]
        args = call.args
        attr = args["attr"]
        sets.append(make(dict(kernel=names.get(args[handle_arg]), attribute=attr, attribute_name=_attribute_name(attr),
                              value=args["value"], device=args[device_arg] if device_arg else device, ret=call.ret,
                              ret_name=cuda_error_name(call.ret), call=call.index)))
    label = _label(entry.entry, entry.args.get("device"))
    fault = entry.fault
    return build_record(LoaderEntry, dict(
        entry=label, device=device, returned=entry.returned,
        returned_name=None if entry.entry == "tvm_ffi" else cuda_error_name(entry.returned),
        fault=f"{fault.kind}: {fault_message(fault.kind, fault.message, run.object)}" if fault else None,
        fault_kind=fault.kind if fault else None, fault_location=fault.location if fault else None, sets=sets,
        raised=entry.raised))


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
    applied = error = None          # the last successful setter call's value; else the last failed call's error
    for done in loader.sets:
        if done.kernel == kernel and done.attribute == attribute and done.device == loader.device:
            if done.ret == 0:
                applied, error = done.value, None
            elif applied is None:
                error = done.ret
    status = "missing" if applied is None else "ok" if applied == expected else "different"
    return record_factory(AttributeCheck)(dict(
        kernel=kernel, attribute=attribute, attribute_name=_attribute_name(attribute), entry=loader.entry,
        device=loader.device, expected=expected, applied=applied, state=state, status=status, error=error,
        error_name=cuda_error_name(error)))


def find_objects(paths: list[str]) -> tuple[list[str], bool]:
    """The objects to check (DIRECTORY -> its *.o and *.so shared libraries, recursively, sorted) and whether a
    directory was given."""
    found, directories = [], False
    for path in paths:
        if os.path.isdir(path):
            directories = True
            objects = sorted(str(p) for p in Path(path).rglob("*") if p.suffix in (".o", ".so") and p.is_file())
            if not objects:
                raise BadInput("the directory holds no *.o or *.so files", path=path)
            found += objects
        else:
            found.append(path)
    return found, directories


def check_objects(objects: list[str], device_count: int | None = None,
                  progress: Callable[[int, int, str], None] | None = None, profile: str | None = None, *,
                  keys: list[str] | None = None, baseline: Baseline | None = None, baseline_file: str = "",
                  missing_symbols: str = "error") -> CheckResult:
    """Check each object in turn (see `find_objects` for turning directories into objects, `object_keys` for
    `keys`; default: each file name), then hold the findings against `baseline` (read from `baseline_file`)."""
    keys = [os.path.basename(path) for path in objects] if keys is None else keys
    results = []
    for start in range(0, len(objects), BATCH):
        batch = list(zip(objects[start:start + BATCH], keys[start:start + BATCH]))
        loaded = [_loaded(path) for path, _key in batch]
        ran = []
        for index, ((path, key), image) in enumerate(zip(batch, loaded), start + 1):
            if progress:
                progress(index, len(objects), path)
            ran.append(_run_file(path, image, device_count, profile, key, missing_symbols))
        results.extend(_compared(export) for exports in ran for export in exports)
    report = None
    if baseline is not None:
        report = apply_baseline(baseline, baseline_file, results)
        for result in results:
            result.exit_code = object_exit_code(result)
    worst = max((r.exit_code for r in results), key=lambda code: EXIT_RANK.get(code, 4), default=EXIT_OK)
    if report is not None and report.stale and worst == EXIT_OK:
        worst = EXIT_EXPECTATION_FAILED
    return build_record(CheckResult, dict(device_count=device_count, objects=results, baseline=report, exit_code=worst))


def stderr_progress(index: int, total: int, path: str) -> None:
    """A counter line on stderr: rewritten in place on a terminal, one line per object otherwise."""
    tty = sys.stderr.isatty()
    start, end = ("\r", "\n" if index == total else "") if tty else ("", "\n")
    print(f"{start}check: [{index}/{total}] {path}", end=end, file=sys.stderr, flush=True)


def discrepancy_summary(result: ObjectCheck) -> str:
    """`9 missing x2`: each attribute and status that is not ok, with how many rows have it."""
    if result.error:
        return result.error
    counts: dict[str, int] = {}
    for check in result.checks:
        if check.status != "ok":
            key = f"{check.attribute} {check.status}"
            counts[key] = counts.get(key, 0) + 1
    return ", ".join([f"{k} x{n}" for k, n in counts.items()] + [loader_outcome(l) for l in result.loaders
                                                                  if l.returned != 0])


def loader_outcome(loader: LoaderEntry) -> str:
    """`cuda_load returned 209 NO_KERNEL_IMAGE_FOR_DEVICE`, or `cuda_load stopped (missing_stub)` for a fault."""
    if loader.returned is None:
        return f"{loader.entry} stopped ({loader.fault_kind})"
    if loader.entry == "tvm_ffi":
        raised = f", raising {loader.raised['kind']}: {loader.raised['message']}" if loader.raised else ""
        return f"tvm_ffi returned {loader.returned}{raised}"
    return f"{loader.entry} returned {cuda_error_label(loader.returned)}"
