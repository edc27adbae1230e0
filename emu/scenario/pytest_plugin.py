"""pytest plugin: every emu scenario becomes test items, one per object (and matrix variant).

Registered through the `pytest11` entry point.  Collected: any `.yaml`/`.yml` file given on the command
line (`pytest path/to/loader.yaml`), and every one under the folders the `emu_scenario_dirs` ini option
names (see `SCENARIO_DIRS_HELP`; default: every folder called `scenarios`).  A failure shows the scenario file and
line of each failed expectation with its diff.  A scenario marked `upstream_bug` is an
expected failure only when it fails exactly as the bug says (`upstream_bug.fails`: those
expectations fail, every other one holds, every entry returns): that failure is raised as
`UpstreamBugReproduced`, the only exception its xfail marker accepts.  A crash, a fault or
another expectation failing raises something else and is reported as a plain FAIL with its
own message; a fixed upstream turns a strict one into a failing XPASS.
"""
from __future__ import annotations

import os

import pytest

from ..errors import EmuError


SCENARIO_DIRS_HELP = ("emu: folders whose *.yaml and *.yml files (at any depth) are emu scenarios, one per line: a "
                     "plain name matches every folder so called (default: scenarios), a path with a / is one folder, "
                     "relative to the ini file's folder (rootdir without one). A .yaml file given on the command line "
                     "is collected wherever it is.")


def pytest_addoption(parser) -> None:
    parser.addini("emu_scenario_dirs", SCENARIO_DIRS_HELP, type="linelist", default=["scenarios"])


def pytest_collect_file(parent, file_path):
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    if parent.session.isinitpath(file_path) or in_scenario_dirs(parent.config, file_path):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


def in_scenario_dirs(config, file_path) -> bool:
    """Whether `file_path` lies under a folder `emu_scenario_dirs` names (a name anywhere, or a path from the ini's folder)."""
    base = config.inipath.parent if config.inipath else config.rootpath
    for entry in config.getini("emu_scenario_dirs"):
        folder = entry.strip().rstrip("/")
        if "/" not in folder and folder in file_path.parts[:-1]:
            return True
        if "/" in folder and (base / folder).resolve() in file_path.resolve().parents:
            return True
    return False


class ScenarioFile(pytest.File):
    def collect(self):
        from .load import load_scenarios
        try:
            variants = load_scenarios(str(self.path))
        except EmuError as error:
            yield BrokenScenario.from_parent(self, name="scenario", error=error)
            return
        for loaded in variants:
            names: dict[str, int] = {}
            for index, ref in enumerate(loaded.scenario.objects):
                label = ref.label()
                names[label] = names.get(label, 0) + 1
                name = label if names[label] == 1 else f"{label}#{names[label]}"
                if loaded.variant.id:
                    name = f"{name}[{loaded.variant.id}]"
                item = ScenarioItem.from_parent(self, name=name, loaded=loaded, index=index)
                bug = loaded.scenario.upstream_bug
                if bug is not None:
                    item.add_marker(pytest.mark.xfail(strict=bug.strict, raises=UpstreamBugReproduced,
                                                      reason=f"upstream bug {bug.issue or ''}: {bug.reason}".strip()))
                yield item


class ScenarioFailed(Exception):
    def __init__(self, lines: list[str]):
        super().__init__("\n".join(lines))
        self.lines = lines


class UpstreamBugReproduced(ScenarioFailed):
    """The scenario failed exactly as its upstream_bug documents: the only failure its xfail accepts."""


class UpstreamBugNotReproduced(ScenarioFailed):
    """An upstream_bug scenario failed in a way the bug does not explain: a real failure."""


class ScenarioItem(pytest.Item):
    def __init__(self, *, loaded, index: int, **kwargs):
        super().__init__(**kwargs)
        self.loaded, self.index = loaded, index

    def runtest(self) -> None:
        from ..errors import DslNotInstalled
        from .runner import run_scenario
        try:
            result = run_scenario(self.loaded, only=self.index)
        except DslNotInstalled as error:
            pytest.skip(str(error))
        if not result.passed:
            lines = []
            for check in result.results:
                if not check.passed:
                    lines.append(f"{self.loaded.path}:{check.line or '?'}: {check.kind} failed for {check.object}")
                    lines.append(f"  {check.summary}")
                    lines.extend(f"    {d}" for d in check.diff)
            if result.bug_reproduced:
                raise UpstreamBugReproduced(lines)
            if result.upstream_bug is not None:
                raise UpstreamBugNotReproduced(
                    [f"{self.loaded.path}: fails, but not (only) as upstream bug {result.upstream_bug} documents:",
                     *(f"  {problem}" for problem in result.unexplained), "", *lines])
            raise ScenarioFailed(lines)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (ScenarioFailed, EmuError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        ref_line = self.loaded.line("objects", self.index) or 0
        return self.path, ref_line - 1, f"scenario {os.path.basename(self.loaded.path)} object {self.name}"


class BrokenScenario(pytest.Item):
    """A scenario file that does not load: one failing item with the loader's message."""

    def __init__(self, *, error: EmuError, **kwargs):
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise self.error

    def repr_failure(self, excinfo, style=None):
        return str(excinfo.value)

    def reportinfo(self):
        return self.path, 0, f"invalid scenario {self.path.name}"
