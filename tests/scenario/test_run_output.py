"""`python -m emu run` takes folders as `check` does."""
from __future__ import annotations

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
