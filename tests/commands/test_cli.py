"""The command line: exit codes, human and JSON output, schemas."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT, fixture

SCENARIOS = ROOT / "scenarios"


def test_run_seed_scenario_passes(cli):
    result = cli("run", str(SCENARIOS / "seed_record_loader.yaml"))
    assert result.code == 0, result.out + result.err
    assert "PASS exact_calls" in result.out and "FAIL" not in result.out


def test_run_issue_3715_fails_and_names_the_missing_calls(cli):
    result = cli("run", "--quiet", str(SCENARIOS / "issue_3715_carveout.yaml"))
    assert result.code == 1
    assert "_cudaFuncSetAttribute(attr=9 PREFERRED_SHARED_MEMORY_CARVEOUT, value=25) in cuda_load   <- missing" in result.out
    assert "_cudaKernelSetAttributeForDevice(attr=9 PREFERRED_SHARED_MEMORY_CARVEOUT, value=75, device=0)" in result.out
    assert "holds -1" in result.out


def test_run_json_is_the_documented_contract(cli):
    result = cli("run", "--json", str(SCENARIOS / "seed_record_loader.yaml"))
    data = result.json()
    assert data["passed"] is True
    run = data["scenarios"][0]["runs"][0]
    assert run["trace_version"] == 2 and run["arch"] == "x86_64" and run["export"] == run["prefix"] == "carveout_25"
    setter = next(c for c in run["calls"] if c["symbol"] == "_cudaFuncSetAttribute")
    assert setter["args"] == {"func": 2, "attr": 8, "value": 232448} and setter["ret"] == 0


def test_bad_scenario_exits_2_with_one_paragraph(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("objects: 3\n")
    result = cli("run", str(bad))
    assert result.code == 2
    assert result.err.startswith(f"emu: error: {bad}: line 1: field objects") and "Traceback" not in result.err


def test_bad_object_exits_2(cli, tmp_path):
    bad = tmp_path / "bad.o"
    bad.write_bytes(b"hello")
    result = cli("trace", str(bad))
    assert result.code == 2 and "not an ELF file" in result.err


def test_trace_runs_loaders_for_every_device_and_the_launch(cli):
    result = cli("trace", "--devices", "2", "--json", fixture("x86_64", "cluster_2x1x1"))
    assert result.code == 0
    run = result.json()[0]
    assert [(e["entry"], e["args"]) for e in run["entries"]] == [
        ("cuda_init", {}), ("cuda_load", {}), ("cuda_load_to_device", {"device": 0}),
        ("cuda_load_to_device", {"device": 1}), ("launch", {"num_args": 3})]
    launch = run["calls"][-1]
    assert launch["symbol"] == "_cudaLaunchKernelEx"
    config = launch["args"]["config"]
    assert config["gridDim"] == [2, 1, 1] and config["blockDim"] == [128, 1, 1] and config["dynamicSmemBytes"] == 512
    assert {a["name"]: a["value"] for a in config["attrs"]} == {
        "PROGRAMMATIC_STREAM_SERIALIZATION": {"programmaticStreamSerializationAllowed": 0},
        "CLUSTER_DIMENSION": {"x": 2, "y": 1, "z": 1}, "COOPERATIVE": {"cooperative": 0}}


def test_trace_human_output_shows_enum_names(cli):
    result = cli("trace", fixture("x86_64", "carveout_25"))
    assert "attr=8 MAX_DYNAMIC_SHARED_SIZE_BYTES, value=232448) -> 0 SUCCESS  [carveout_25_cuda_load+0x" in result.out


def test_committed_schemas_are_current(cli):
    from emu.commands.schema import schemas
    for name, schema in schemas().items():
        committed = json.loads((ROOT / "emu" / "schemas" / f"{name}.schema.json").read_text())
        assert committed == schema, f"emu/schemas/{name}.schema.json is stale: run python -m emu.commands.schema"
    result = cli("schema", "scenario")
    assert result.code == 0 and "CallPattern" in result.out


def test_every_scenario_field_has_a_description():
    from emu.scenario.model import Scenario

    def walk(schema, where):
        for name, prop in schema.get("properties", {}).items():
            assert prop.get("description"), f"{where}.{name} has no description"
    schema = Scenario.model_json_schema()
    walk(schema, "Scenario")
    for name, definition in schema["$defs"].items():
        if definition.get("type") == "object":
            walk(definition, name)


def test_exit_after_a_lief_parse_reports_no_leaks(tmp_path):
    """nanobind prints 'leaked' reports when a LIEF object outlives LIEF's module at teardown;
    how modules tear down depends on the program (here: a wrapped Unicorn method, as test
    harnesses do).  emu must leave nothing of LIEF alive."""
    program = ("import unicorn\nfrom emu.run.session import run_object\n"
               "start = unicorn.Uc.emu_start\n"
               "unicorn.Uc.emu_start = lambda self, *args, **kwargs: start(self, *args, **kwargs)\n"
               f"print(len(run_object({fixture('x86_64', 'plain')!r}).calls))\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "EMU_CACHE_DIR": "off"}, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "leaked" not in result.stderr, result.stderr
