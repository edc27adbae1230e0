"""Real-world exports: emu's trace equals the committed native trace, call for call.

For every object of tests/fixtures/realworld/MANIFEST.json (upstream CUTLASS examples, quack-kernels,
flash-attn-4; x86-64, AArch64 and host-CPU builds), emu runs the entries the native recorder ran,
against a runtime that answers as the recording stubs did, and its trace, written as the recorder
writes it (tests/oracles/recorder_lines.py), must equal `<prefix>.calls.json`:
- the loaders: cuda_init, cuda_load, cuda_load_to_device(0), the header's Kernel_Module_Load path;
- the launch, with `<prefix>.args.json`'s arguments (contract 1, raw form): every cudaLaunchKernelEx
  with its grid, block, dynamic shared memory, stream and launch attributes, host printf output, and
  the wrapper's return; once with the header beside the object and once with the object alone.
"""
from __future__ import annotations

import shutil

import pytest

from tests.oracles.recorder_lines import LOADER_ENTRIES, OBJECTS, ROOT, first_difference, launch_args, native_lines, \
    normalise_native, phase_slice, recorder_config, stubs_c_emu_lines as emu_lines
from tests import oracles

IDS = [entry["path"].removeprefix("tests/fixtures/realworld/") for entry in OBJECTS]


def _entries(specs):
    from emu.dsl.entries import EntrySpec
    return [EntrySpec.model_validate(spec) for spec in specs]


def _run(path: str, specs):
    from emu.run.session import run_object
    return run_object(path, config=recorder_config(str(path)), entries=_entries(specs))


def _compare(emu: list[dict], native: list[dict], what: str) -> None:
    difference = first_difference(emu, native)
    assert difference is None, f"{what}: emu's trace differs from the native run\n{difference}"


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("entry", OBJECTS, ids=IDS)
def test_loaders_match_native(entry):
    native = normalise_native(native_lines(entry))
    emu = emu_lines(_run(str(ROOT / entry["path"]), LOADER_ENTRIES))
    _compare(emu, phase_slice(native, "cuda_init", "launch"), entry["path"])


def _check_launch(entry: dict, path: str) -> None:
    native = normalise_native(native_lines(entry))
    launch = {"launch": {"args": launch_args(entry)}}
    emu = emu_lines(_run(path, [*LOADER_ENTRIES, launch]))
    _compare(emu, native, f"{entry['path']} launched with {entry['args']}")


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("entry", OBJECTS, ids=IDS)
def test_launch_matches_native_with_header(entry):
    _check_launch(entry, str(ROOT / entry["path"]))


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("entry", OBJECTS, ids=IDS)
def test_launch_matches_native_without_header(entry, tmp_path):
    alone = tmp_path / (entry["prefix"] + ".o")
    shutil.copyfile(ROOT / entry["path"], alone)
    _check_launch(entry, str(alone))
