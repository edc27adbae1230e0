"""emu's public Python API: the things the command line does, as functions returning models.

Each returns the same pydantic model that the matching command prints with `--json`, and
raises the same `emu.errors.EmuError` subclasses, with the same messages, that the command
prints as `emu: error: ...` (a `BadInput` for an unreadable object or scenario). A run that
faults is not an exception: the returned `ObjectRun` says where it stopped (`.fault`).
Everything outside this module and `emu.errors` is private and may change.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Union

from .errors import ScenarioError

if TYPE_CHECKING:
    from .cuda.config import RuntimeConfig
    from .dsl.entries import EntrySpec
    from .commands.inspect import InspectResult as Inspection
    from .commands.check import CheckResult
    from .commands.occupancy import OccupancyResult
    from .run.trace import ObjectRun
    from .scenario.runner import ScenarioResult

PathLike = Union[str, "os.PathLike[str]"]


def trace(path: PathLike, *, entries: Iterable[Union[str, Mapping, "EntrySpec"]] | None = None,
          runtime: Union["RuntimeConfig", Mapping[str, Any], None] = None,
          launch_args: Mapping[str, Any] | list | None = None, export: str | None = None) -> "ObjectRun":
    """Run an object's entries on the CUDA runtime model and return every call they made.

    `entries` defaults to what `python -m emu trace` runs: `cuda_init`, `cuda_load`,
    `cuda_load_to_device` for every device, then `launch`. Each entry is a name, a mapping as
    in a scenario (`{"cuda_load_to_device": {"device": 1}}`) or an `EntrySpec`. `runtime` is a
    `RuntimeConfig` or a mapping of its fields (the scenario's `runtime:` block). `launch_args`
    gives the launch wrapper its arguments by parameter name, as a scenario's `launch: {args: ...}`.
    `export` names the export to run in an object that holds several (`exports(path)` lists them).
    A TVM-FFI export (`__tvm_ffi_<name>`) runs one `tvm_ffi` entry by default, as a framework's first call
    (its library loads inside it), then `process_exit` (its destructor unloads the library); `launch_args` is then its positional argument list, and `entries` may
    call it several times: `[{"tvm_ffi": {"args": [{"tensor": {...}}, {"int": 3}, None]}}, "tvm_ffi"]`.

    An export whose format or metadata emu does not know is run, and flagged: the returned run's
    `format_warning` says why, and an `emu.errors.UnknownFormatWarning` is issued (`run_scenario` refuses such an export).
    """
    from .cuda.config import RuntimeConfig
    from .dsl.entries import EntrySpec, loaders_for_devices
    from .run.session import EntryNotRun, run_object
    from .cuda.profile import load_profile

    config = _model(RuntimeConfig, runtime, "runtime")
    if entries is None and _is_tvm_ffi(os.fspath(path), export):
        from .dsl.entries import TVM_FFI_ENTRIES
        specs = list(TVM_FFI_ENTRIES)
    elif entries is None:
        if "device_count" not in config.model_fields_set:         # as the CLI: every device of the profile
            config = config.model_copy(update={"device_count": load_profile(config.profile).device_count})
        specs = loaders_for_devices(config.device_count) + [EntrySpec(name="launch")]
    else:
        specs = [_model(EntrySpec, entry, "entries") for entry in entries]
    if launch_args is not None:
        specs = [_with_launch_args(spec, launch_args) for spec in specs]
    try:
        run = run_object(os.fspath(path), config, specs, export=export)
    except EntryNotRun as stopped:
        _flag(stopped.run)
        raise
    _flag(run)
    return run


def _flag(run: "ObjectRun") -> None:
    if run.format_warning:
        import warnings
        from .commands.render import format_warning
        from .errors import UnknownFormatWarning
        warnings.warn(f"{run.object}: {format_warning(run)}", UnknownFormatWarning, stacklevel=3)


def exports(path: PathLike) -> list[str]:
    """The names of the exports an object holds (one for an object `export_to_c` wrote), sorted."""
    from .cache.loaded import load_image
    return [export.name for export in load_image(os.fspath(path))[1]]


def inspect(path: PathLike, *, export: str | None = None) -> "Inspection":
    """What an export holds, read without running it (`python -m emu inspect --json`); `export` names one
    of several."""
    from .commands.inspect import inspect_object
    from .dsl.exports import chosen_name
    results = {result.tvm_ffi.name if result.tvm_ffi else result.prefix: result for result in inspect_object(os.fspath(path))}
    return results[chosen_name(list(results), export, os.fspath(path))]


def check(paths: PathLike | Iterable[PathLike], *, devices: int | None = None, profile: str | None = None,
          baseline: PathLike | None = None, write_baseline: PathLike | None = None,
          missing_symbols: str = "error") -> "CheckResult":
    """Do the loaders apply every attribute kernel_info asks for? (`python -m emu check --json`).

    `paths` is one object or folder, or several; a folder is searched for `*.o` and `*.so`. Each export runs on
    `profile` (h200, a100, b200), or by default on the first profile whose device runs its GPU binary.
    `baseline` names a baseline file whose findings are acknowledged (`exit_code` 0 when only those
    remain, 1 when a new one appears or an entry no longer does); `write_baseline` writes every
    current finding to that file. `missing_symbols="return_zero"` lets a call to a symbol emu has no
    stub for return 0. A bad baseline file or option is a `BadInput`.
    """
    from .commands.baseline import read_baseline, write_baseline as write
    from .commands.check import check_objects, find_objects
    from .commands.check_findings import object_keys
    from .cuda.profile import PROFILES
    from .errors import BadInput
    if profile is not None and profile not in PROFILES:
        raise BadInput(f"profile: {profile!r} is not one of {', '.join(PROFILES)}")
    if missing_symbols not in ("error", "return_zero"):
        raise BadInput(f"missing_symbols: {missing_symbols!r} is not error or return_zero")
    if baseline is not None and write_baseline is not None:
        raise BadInput("baseline and write_baseline: give one (the one to check against, or the one to write)")
    listed = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else [os.fspath(p) for p in paths]
    acknowledged = read_baseline(os.fspath(baseline)) if baseline is not None else None
    objects, _ = find_objects(listed)
    result = check_objects(objects, devices, profile=profile, keys=object_keys(listed, objects), baseline=acknowledged,
                           baseline_file=os.fspath(baseline) if baseline is not None else "",
                           missing_symbols=missing_symbols)
    if write_baseline is not None:
        write(os.fspath(write_baseline), result.objects)
    return result


def occupancy(path: PathLike, *, kernel: str | None = None, block_sizes: Iterable[int] | None = None,
              dynamic_smem: Iterable[int] | None = None, carveout: int | None = None,
              profile: str | None = None, cluster: Iterable[int] | None = None) -> "OccupancyResult":
    """Resident blocks per SM of every kernel of every export (`python -m emu occupancy --json`), with what limits them.

    `block_sizes` x `dynamic_smem` (bytes) default to the H200 probe's grid (32..1024 step 32; 0, 1024, 16384,
    49152, 100000, 232448); `carveout` sets PREFERRED_SHARED_MEMORY_CARVEOUT first (default: as the export's
    loaders left it); `profile` (h200, a100, b200) defaults, per export, to the first whose device runs its GPU
    binary. Answers on a profile with `measured` false rest on published figures. `cluster` ((x, y, z), or fewer
    dimensions) adds cudaOccupancyMaxActiveClusters for that cluster to every answer (default: the kernel's
    compile-time cluster, if any). An unknown `kernel` or a bad value is a `BadInput`.
    """
    from .commands.occupancy import occupancy_object
    return occupancy_object(os.fspath(path), kernel, None if block_sizes is None else list(block_sizes),
                            None if dynamic_smem is None else list(dynamic_smem), carveout, profile,
                            None if cluster is None else list(cluster))


def run_scenario(path: PathLike, *, variant: str | None = None) -> "ScenarioResult":
    """Run a scenario file and check its expectations (`python -m emu run --json`).

    A scenario with a `matrix:` has one variant per combination: name one with `variant`
    (its id, e.g. `"carveout=25-host=x86_64"`), or use `run_scenarios` for all of them.
    """
    from .scenario.load import load_scenarios
    from .scenario.runner import run_scenario as run_loaded
    loaded = load_scenarios(os.fspath(path))
    if variant is None and len(loaded) == 1:
        return run_loaded(loaded[0])
    chosen = [item for item in loaded if item.variant.id == variant]
    if not chosen:
        ids = ", ".join(str(item.variant.id) for item in loaded)
        wanted = f"no variant {variant!r}" if variant is not None else f"{len(loaded)} variants; choose one with variant="
        raise ScenarioError(f"the scenario has {wanted} (its variants: {ids})", path=os.fspath(path))
    return run_loaded(chosen[0])


def run_scenarios(path: PathLike) -> "list[ScenarioResult]":
    """Every variant of a scenario file (one for a scenario without a matrix), run and checked; a folder: every
    variant of every *.yaml and *.yml under it, sorted (`python -m emu run DIRECTORY`). Every file is loaded and
    every object checked before any runs."""
    from .scenario.load import load_scenarios, scenario_files
    from .scenario.names import check_objects
    from .scenario.runner import run_scenario as run_loaded
    loaded = [variant for file in scenario_files([os.fspath(path)]) for variant in load_scenarios(file)]
    for scenario in loaded:
        check_objects(scenario)
    return [run_loaded(scenario) for scenario in loaded]


def _model(model, value, what: str):
    """A model from itself, a mapping or (for entries) a name; a bad value is a BadInput naming `what`."""
    from pydantic import ValidationError
    from .errors import BadInput
    if value is None:
        return model()
    if isinstance(value, model):
        return value
    try:
        return model.model_validate(value)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise BadInput(f"{what}: field {field}: {first['msg'].removeprefix('Value error, ')}") from None


def _with_launch_args(spec: "EntrySpec", launch_args: Mapping[str, Any] | list) -> "EntrySpec":
    if spec.name not in ("launch", "tvm_ffi") or spec.args is not None:
        return spec
    from .errors import BadInput
    if (spec.name == "tvm_ffi") != isinstance(launch_args, list):
        raise BadInput("a TVM-FFI export takes its arguments as one positional list ([{tensor: {...}}, {int: N}, ...]: "
                       "--args FILE holding it), a CuTe-ABI launch by parameter name (--arg NAME=VALUE, {args: {...}}); "
                       f"the {spec.name} entry was given {'a list' if isinstance(launch_args, list) else 'names'}")
    given = list(launch_args) if isinstance(launch_args, list) else dict(launch_args)
    return spec.model_validate({**spec.model_dump(exclude_unset=True), "args": given})


def _is_tvm_ffi(path: str, export: str | None) -> bool:
    """Whether the export a run of `path` would run is a TVM-FFI one (the object's load is cached)."""
    from .cache.loaded import load_image
    from .dsl.exports import choose
    return choose(load_image(path)[1], export, path).ffi_name is not None
