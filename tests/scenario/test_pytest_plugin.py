"""The pytest plugin collects a scenario given on the command line wherever it is, and every scenario under the
folders `emu_scenario_dirs` names (a folder name anywhere, or a path from the ini file's folder); the option
has a help text; a scenario whose names do not exist fails with the same message as `run`."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT, fixture

SEED = fixture("x86_64", "carveout_25")


def pytest_in(folder, *args: str, ini: str | None = None) -> subprocess.CompletedProcess:
    """pytest, with emu's plugin, in `folder` (its own pytest.ini), outside this repository's configuration."""
    if ini is not None:
        (folder / "pytest.ini").write_text("[pytest]\n" + ini)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def scenario(path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"objects: [{SEED}]\n{text}")


@pytest.fixture
def project(tmp_path):
    scenario(tmp_path / "loaders" / "loader.yaml")                 # in no configured folder
    scenario(tmp_path / "checks" / "emu" / "deep" / "a.yaml")     # under the configured path
    scenario(tmp_path / "other" / "emu" / "b.yaml")               # a folder named emu elsewhere: not that path
    scenario(tmp_path / "scenarios" / "c.yaml")                   # the default name, not configured here
    return tmp_path


def collected(result: subprocess.CompletedProcess) -> list[str]:
    return sorted(line.split("::")[0] for line in result.stdout.splitlines() if "::" in line)


def test_a_yaml_given_on_the_command_line_is_collected_anywhere(project):
    result = pytest_in(project, "--collect-only", "-q", "loaders/loader.yaml", ini="")
    assert result.returncode == 0, result.stdout + result.stderr
    assert collected(result) == ["loaders/loader.yaml"]
    ran = pytest_in(project, "-q", "loaders/loader.yaml")
    assert ran.returncode == 0 and "1 passed" in ran.stdout


def test_configured_folders_are_names_or_paths(project):
    by_path = pytest_in(project, "--collect-only", "-q", ini="emu_scenario_dirs = checks/emu\n")
    assert collected(by_path) == ["checks/emu/deep/a.yaml"], by_path.stdout + by_path.stderr
    by_name = pytest_in(project, "--collect-only", "-q", ini="emu_scenario_dirs =\n  emu\n  scenarios\n")
    assert collected(by_name) == ["checks/emu/deep/a.yaml", "other/emu/b.yaml", "scenarios/c.yaml"]
    default = pytest_in(project, "--collect-only", "-q", ini="")
    assert collected(default) == ["scenarios/c.yaml"]


def test_the_option_has_a_help_text(tmp_path):
    help_text = " ".join(pytest_in(tmp_path, "--help", ini="").stdout.split())
    assert "emu_scenario_dirs (linelist): emu: folders whose *.yaml and *.yml files" in help_text
    assert "A .yaml file given on the command line is collected wherever it is" in help_text


def test_a_name_that_does_not_exist_fails_the_item_with_runs_message(tmp_path):
    scenario(tmp_path / "scenarios" / "typo.yaml", "upstream_bug: {reason: r, fails: [no_calls]}\n"
                                                  "expect:\n  no_calls: [{symbol: _cudaLaunchKernelEX}]\n")
    result = pytest_in(tmp_path, "-q", "-rf", ini="")
    assert result.returncode == 1 and "1 failed" in result.stdout, result.stdout     # not an xfail, never a pass
    assert "line 4: field expect.no_calls.0.symbol: unknown symbol '_cudaLaunchKernelEX'" in result.stdout
