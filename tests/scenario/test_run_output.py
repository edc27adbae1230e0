"""`python -m emu run` takes folders as `check` does; a stream prints one way everywhere."""
from __future__ import annotations

import re

import pytest

import emu
from conftest import fixture, run_cli
from emu.errors import ScenarioError

SEED = fixture("x86_64", "carveout_25")


def test_run_takes_a_folder_every_yaml_under_it_sorted(tmp_path):
    (tmp_path / "deep" / "er").mkdir(parents=True)
    for name in ("b.yaml", "a.yml", "deep/er/c.yaml"):
        (tmp_path / name).write_text(f"description: {name}\nobjects: [{SEED}]\n")
    (tmp_path / "notes.txt").write_text("not a scenario")
    result = run_cli("run", "--quiet", str(tmp_path))
    assert result.code == 0, result.err
    headers = [line for line in result.out.splitlines() if line.startswith("== ") and not line.startswith("== passed")]
    assert headers == [f"== {tmp_path / name}: {name}" for name in ("a.yml", "b.yaml", "deep/er/c.yaml")]
    assert [r.description for r in emu.run_scenarios(tmp_path)] == ["a.yml", "b.yaml", "deep/er/c.yaml"]


def test_a_folder_without_scenarios_is_bad_input(tmp_path):
    (tmp_path / "x.txt").write_text("")
    result = run_cli("run", str(tmp_path))
    assert result.code == 2 and result.out == ""
    assert result.err == f"emu: error: {tmp_path}: the directory holds no *.yaml or *.yml scenario files\n"
    with pytest.raises(ScenarioError, match="holds no"):
        emu.run_scenarios(tmp_path)


def test_a_stream_prints_one_way_in_the_launch_arguments_and_the_launch_call():
    out = run_cli("trace", SEED).out
    assert re.search(r"args \(header; ~ = default\): x~=\{data=0xd0000000\} stream~=0x5000$", out, re.M)
    assert "stream=0x5000 " in out and "20480" not in out
