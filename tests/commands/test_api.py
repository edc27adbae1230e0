"""The public Python API returns what `--json` prints and raises what the CLI reports."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import emu
from conftest import ROOT, fixture, run_cli

CARVEOUT_25 = fixture("x86_64", "carveout_25")


def test_trace_returns_the_run_the_cli_prints():
    run = emu.trace(CARVEOUT_25)
    assert isinstance(run, emu.ObjectRun)
    printed = run_cli("trace", "--json", CARVEOUT_25).json()[0]
    assert run.model_dump(mode="json") == printed
    assert [e.entry for e in run.entries] == ["cuda_init", "cuda_load", "cuda_load_to_device", "launch"]


def test_trace_takes_entries_and_a_runtime_as_in_a_scenario():
    run = emu.trace(CARVEOUT_25, entries=["cuda_load", {"cuda_load_to_device": {"device": 1}}],
                    runtime={"device_count": 2, "device_attributes": {"MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 101376}})
    assert [(e.entry, e.args) for e in run.entries] == [("cuda_load", {}), ("cuda_load_to_device", {"device": 1})]
    values = [c.args["value"] for c in run.calls if c.symbol.endswith("SetAttribute") and c.args["attr"] == 8]
    assert values == [101376]


def test_trace_defaults_to_the_profiles_device_count():
    from emu.cuda.profile import load_profile
    count = load_profile("h200").device_count
    run = emu.trace(CARVEOUT_25)
    assert [e.args for e in run.entries if e.entry == "cuda_load_to_device"] == [{"device": d} for d in range(count)]
    assert [e.args for e in emu.trace(CARVEOUT_25, runtime={"device_count": 3}).entries if e.entry == "cuda_load_to_device"] == \
        [{"device": d} for d in range(3)]


def test_inspect_and_check_return_their_json_models(tmp_path):
    inspection = emu.inspect(CARVEOUT_25)
    assert isinstance(inspection, emu.Inspection)
    assert inspection.model_dump(mode="json") == run_cli("inspect", "--json", CARVEOUT_25).json()
    [(kernel, asks)] = inspection.kernel_info_parsed.items()         # kernel_info as data, the string kept beside it
    assert asks == {"9": 25} and json.loads(inspection.kernel_info) == {kernel: asks}
    result = emu.check([CARVEOUT_25, fixture("x86_64", "plain")])
    assert isinstance(result, emu.CheckResult)
    assert result.model_dump(mode="json") == run_cli("check", "--json", CARVEOUT_25, fixture("x86_64", "plain")).json()
    assert result.exit_code == 1        # NVIDIA/cutlass#3715: carveout_25 asks for attribute 9, which is never set
    assert emu.check(fixture("x86_64", "plain")).exit_code == 0


def test_run_scenario_and_run_scenarios():
    result = emu.run_scenario(ROOT / "scenarios" / "seed_record_loader.yaml")
    assert isinstance(result, emu.ScenarioResult) and result.passed
    assert result.model_dump(mode="json") == run_cli("run", "--json", str(ROOT / "scenarios" / "seed_record_loader.yaml")).json()["scenarios"][0]
    assert [r.passed for r in emu.run_scenarios(ROOT / "scenarios" / "issue_3715_carveout.yaml")] == [False]


def test_errors_are_the_cli_errors_with_the_same_message(tmp_path):
    garbage = tmp_path / "garbage.o"
    garbage.write_bytes(b"not an elf")
    with pytest.raises(emu.ObjectFormatError) as error:
        emu.trace(garbage)
    assert run_cli("trace", str(garbage)).err.strip() == f"emu: error: {error.value}"
    with pytest.raises(emu.BadInput, match=r"runtime: field device_count: Input should be less than or equal to 64"):
        emu.trace(CARVEOUT_25, runtime={"device_count": 65})
    with pytest.raises(emu.BadInput, match=r"entries: field name"):
        emu.trace(CARVEOUT_25, entries=["no_such_entry"])
    with pytest.raises(emu.ScenarioError, match=r"cannot read the scenario: No such file"):
        emu.run_scenario(tmp_path / "absent.yaml")


def test_import_emu_is_cheap_and_exports_only_the_api():
    """`import emu` must not import the emulator, LIEF or the pydantic models: a notebook pays for what it uses."""
    code = "import sys, emu; print(json.dumps(sorted(m for m in ('unicorn', 'lief', 'pydantic', 'emu.run.session') if m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []
    assert set(emu.__all__) >= {"trace", "inspect", "check", "run_scenario", "ObjectRun", "Inspection", "CheckResult", "ScenarioResult"}
    assert (ROOT / "emu" / "py.typed").is_file()
