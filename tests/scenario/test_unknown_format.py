"""An export whose format or metadata emu does not know: `run` refuses it (exit 2, before anything runs),
`trace` and the API run it and flag it where it cannot be missed (the text, `--json`, stderr, a Python
warning), in the words `inspect` uses."""
from __future__ import annotations

import re

import pytest

from conftest import ROOT, run_cli
from tests.dsl.test_generations import _without_slot_names
from tests.fuzz import elf

import emu
from emu.commands.inspect import inspect_object
from emu.errors import ScenarioError, UnknownFormatWarning


def _newer_version(tmp_path):
    """The seed export with `carveout_25_version` "9.9": a release emu has not seen."""
    raw = elf.fixture_bytes()
    at = elf.function_file_offset(raw, "carveout_25_version")
    assert raw[at:at + 4] == b"1.1\0"
    raw[at:at + 4] = b"9.9\0"
    path = tmp_path / "carveout_25.o"
    path.write_bytes(bytes(raw))
    return path


def _renamed_kernel_info(tmp_path):
    path = tmp_path / "carveout_25.o"
    path.write_bytes(bytes(elf.rename_symbol(elf.fixture_bytes(), "carveout_25_kernel_info", "carveout_25_kernel_infx")))
    return path


CASES = {"version": (_newer_version, "carveout_25_version is '9.9', not the '1.1' of 4.4.2-4.8.1: exported by "
                                     "a nvidia-cutlass-dsl release newer than 4.8.1 (an export format emu has not seen)"),
         "kernel_info": (_renamed_kernel_info, "no carveout_25_kernel_info, which every export of nvidia-cutlass-dsl "
                                               "4.4.2-4.8.1 defines: its metadata is of a form emu does not know")}


@pytest.mark.parametrize("case", CASES)
def test_run_refuses_it_before_anything_runs(tmp_path, case):
    make, reason = CASES[case]
    path = make(tmp_path)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"objects:\n  - {ROOT / 'tests/fixtures/cutlass-dsl-4.8.0/x86_64/carveout_75.o'}\n  - {path}\n")
    result = run_cli("run", str(scenario))
    assert result.code == 2 and result.out == ""
    assert result.err.startswith(f"emu: error: {scenario}: line 3: field objects.1: {path}: emu does not know "
                                 f"this export's format or metadata: {reason}")
    assert "`run` refuses it" in result.err and len(result.err.strip().splitlines()) == 1
    with pytest.raises(ScenarioError, match="emu does not know this export's format"):
        emu.run_scenario(scenario)


@pytest.mark.parametrize("case", CASES)
def test_trace_runs_it_and_flags_it_everywhere(tmp_path, case):
    make, reason = CASES[case]
    path = make(tmp_path)
    text = run_cli("trace", str(path))
    assert text.code == 0
    assert text.out.splitlines()[1] == f"  WARNING: emu does not know this export's format or metadata: {reason}" \
        "; what it recorded may not be what the loaders do on a GPU"
    assert text.err == f"emu: warning: {path}: {text.out.splitlines()[1].removeprefix('  WARNING: ')}\n"
    as_json = run_cli("trace", "--json", str(path))
    assert as_json.json()[0]["format_warning"] == reason
    assert as_json.err == text.err
    with pytest.warns(UnknownFormatWarning, match=re.escape(reason)):
        run = emu.trace(path)
    assert run.format_warning == as_json.json()[0]["format_warning"]


def test_the_wording_is_inspects(tmp_path):
    path = _newer_version(tmp_path)
    exported_by = inspect_object(str(path))[0].generation.exported_by
    assert exported_by in run_cli("trace", "--json", str(path)).json()[0]["format_warning"]


def test_an_export_that_does_not_say_its_format(tmp_path):
    path = _without_slot_names(tmp_path)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"objects: [{path}]\nentries: [cuda_init]\n")
    refused = run_cli("run", str(scenario))
    assert refused.code == 2 and "the export format is unknown, an unknown nvidia-cutlass-dsl release" in refused.err
    traced = run_cli("trace", "--json", str(path))
    assert traced.code == 2                                       # its cuda_load is refused, as before
    assert traced.json()[0]["format_warning"].startswith("the export format is unknown")
    assert traced.err.startswith(f"emu: warning: {path}: emu does not know") and "entry cuda_load was not run" in traced.err


def test_a_known_export_is_not_flagged():
    traced = run_cli("trace", "--json", str(ROOT / "tests/fixtures/cutlass-dsl-4.8.0/x86_64/carveout_25.o"))
    assert traced.code == 0 and traced.err == "" and traced.json()[0]["format_warning"] is None
