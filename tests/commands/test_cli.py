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
    assert run["trace_version"] == 4 and run["arch"] == "x86_64" and run["export"] == run["prefix"] == "carveout_25"
    assert all(entry["raised"] is None for entry in run["entries"])      # 3 added it: null outside a TVM-FFI call
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


def test_committed_schemas_are_current():
    from emu.commands.schema import schemas
    for name, schema in schemas().items():
        committed = json.loads((ROOT / "emu" / "schemas" / f"{name}.schema.json").read_text())
        assert committed == schema, f"emu/schemas/{name}.schema.json is stale: run python -m emu.commands.schema"


def test_schema_name_prints_that_schema_itself_and_all_prints_the_mapping(cli):
    """`schema NAME` is the committed file byte for byte (what an editor points at); `schema` and `schema all`
    give {name: schema} for every one."""
    from emu.commands.cli import SCHEMAS
    from emu.commands.schema import schemas
    assert set(SCHEMAS) == set(schemas())
    for name in SCHEMAS:
        result = cli("schema", name)
        assert result.code == 0 and result.out == (ROOT / "emu" / "schemas" / f"{name}.schema.json").read_text(), name
    everything = {name: json.loads((ROOT / "emu" / "schemas" / f"{name}.schema.json").read_text()) for name in SCHEMAS}
    assert cli("schema").json() == cli("schema", "all").json() == everything
    bad = cli("schema", "scenarios")
    assert bad.code == 2 and "argument NAME: invalid choice: 'scenarios'" in bad.err


def _emu(*args: str, script: bool) -> subprocess.CompletedProcess:
    """`emu ARGS` through the console script installed beside this interpreter, or `python -m emu ARGS`."""
    command = [os.path.join(os.path.dirname(sys.executable), "emu")] if script else [sys.executable, "-m", "emu"]
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env={**os.environ, "EMU_NO_SERVER": "1", "PYTHONPATH": str(ROOT)})


def test_version_is_emus_in_the_command_line_and_the_metadata():
    """One source: emu.__version__, which pyproject.toml's dynamic version reads for the distribution's metadata."""
    from importlib import metadata

    import emu
    assert (ROOT / "pyproject.toml").read_text().count('version = {attr = "emu.__version__"}') == 1
    for script in (True, False):
        result = _emu("--version", script=script)
        assert (result.returncode, result.stdout, result.stderr) == (0, f"emu {emu.__version__}\n", ""), script
    installed = set(metadata.packages_distributions()["emu"])       # cute-emu (emu in a venv installed before the rename)
    assert len(installed) == 1, f"{sorted(installed)} all install the package emu: pip uninstall the old name, emu"
    assert metadata.version(installed.pop()) == emu.__version__


def test_the_program_name_is_what_the_user_typed(cli):
    from emu.commands.cli import program_name
    assert program_name("/venv/bin/emu") == program_name("/venv/Scripts/emu.exe") == "emu"
    assert program_name("/src/emu/__main__.py") == program_name("-c") == "python -m emu"
    assert _emu("--help", script=True).stdout.startswith("usage: emu [-h]")
    assert _emu("--help", script=False).stdout.startswith("usage: python -m emu [-h]")
    missing = _emu("trace", script=True)
    assert missing.returncode == 2 and "usage: emu trace " in missing.stderr and "emu trace: error:" in missing.stderr
    assert cli("trace").err.startswith("usage: python -m emu trace ")      # in-process, as a served child runs it


def test_command_line_values_are_reported_by_their_flag(cli):
    """`--devices 99` is bad input named as the user wrote it, not as the runtime field it becomes."""
    from emu.commands.cli import MAX_DEVICES
    from emu.cuda.config import RuntimeConfig
    bound = {type(m).__name__: m for m in RuntimeConfig.model_fields["device_count"].metadata}
    assert (bound["Ge"].ge, bound["Le"].le) == (0, MAX_DEVICES)
    for command in ("trace", "check"):
        for value, says in (("99", "99 is not a device count emu models (0 to 64)"), ("-1", "-1 is not a device count"),
                            ("two", "'two' is not a whole number of devices")):
            result = cli(command, "--devices", value, fixture("x86_64", "plain"))
            assert result.code == 2 and f"argument --devices: {says}" in result.err, (command, value, result.err)
            assert "device_count" not in result.err and "runtime" not in result.err


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


def test_a_plain_run_command_line_is_parsed_as_argparse_parses_it():
    """`run [--json] [--quiet] FILE...` is read without argparse (emu.commands.cli._plain_run); every command line it
    reads, argparse reads the same way, and each shape it leaves (help, options it does not know, `--`, files
    split by a flag) goes to argparse.  Every arrangement of these words, up to four of them after `run`."""
    import itertools

    from emu.commands.cli import _parser, _plain_run
    words = ["--json", "--quiet", "a.yaml", "b c.yml", "", "-5", "--", "-x", "--qu", "-h"]
    read = 0
    for count in range(5):
        for rest in itertools.product(words, repeat=count):
            argv = ["run", *rest]
            plain = _plain_run(argv)
            if plain is None:
                continue
            read += 1
            assert vars(_parser(False, only="run").parse_args(argv)) == vars(plain), argv
            assert not any(word.startswith("-") and word not in ("--json", "--quiet") for word in rest)
    assert read > 300
    assert _plain_run(["run", "a.yaml", "--json", "b.yaml"]) is None        # argparse: unrecognized arguments: b.yaml
    assert _plain_run(["run"]) is None and _plain_run(["trace", "a.o"]) is None
