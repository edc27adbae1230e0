"""Run a loaded scenario: every object on a fresh runtime, then every expectation."""
# No `from __future__ import annotations`: pydantic reads these annotations as objects, not strings to evaluate.

from pydantic import BaseModel, ConfigDict, Field

from ..cache.loaded import load_image
from ..dsl.exports import choose
from ..support.model import empty_list
from ..run.session import run_object
from ..run.trace import ObjectRun
from .expect import Checker, ExpectationResult
from .load import LoadedScenario
from .names import check_objects
from .model import Expectations

EXPECTATION_KINDS = ("calls_in_order", "calls_any_order", "no_calls", "exact_calls", "returns", "raises", "state", "fault")


class ScenarioResult(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    scenario: str = Field(description="path of the scenario file")
    variant: str | None = Field(default=None, description="the matrix combination this result is for (axis=value-...), if the scenario has a matrix")
    description: str = Field(description="the scenario's description")
    runs: list[ObjectRun] = Field(description="one run per object")
    results: list[ExpectationResult] = Field(description="every expectation checked, per object")
    passed: bool = Field(description="every expectation holds")
    faulted: bool = Field(description="some run stopped with a fault the scenario did not expect")
    upstream_bug: str | None = Field(default=None, description="the upstream bug this scenario documents, if any")
    bug_reproduced: bool | None = Field(default=None, description="for a failed upstream_bug scenario: whether it failed exactly as upstream_bug.fails says (else None)")
    unexplained: list[str] = Field(default_factory=empty_list, description="for a failed upstream_bug scenario: each failure the documented bug does not explain")


def run_scenario(loaded: LoadedScenario, only: int | None = None) -> ScenarioResult:
    """Run every object of the scenario (or just object number `only`) and check expectations; a name that does
    not exist or an export emu does not know is a ScenarioError before any object runs (emu.scenario.names)."""
    scenario = loaded.scenario
    check_objects(loaded, only)                 # every name and export valid before anything runs
    runs, results = [], []
    for index, ref in enumerate(scenario.objects):
        if only is not None and index != only:
            continue
        path = loaded.object_path(index)
        run = run_object(path, scenario.runtime, scenario.entries, scenario.budget, scenario.timeout_s, ref.export)
        runs.append(run)
        export = choose(load_image(path)[1], run.export, path)
        expect: Expectations = scenario.expect.merged(ref.expect)
        lines = {kind: _line(loaded, index, ref, kind) for kind in EXPECTATION_KINDS}
        results.extend(Checker(run, export.kernel_info, lines).check(expect))
    passed = all(r.passed for r in results)
    faulted = any(r.kind == "fault" and not r.passed and scenario.expect.fault is None for r in results)
    bug = scenario.upstream_bug
    unexplained = unexplained_failures(runs, results, bug.fails) if bug and not passed else []
    # model_construct: every value is emu's own (the runs and results are models already), so
    # re-validating them checks nothing, and a run that prints no JSON never builds this model.
    return ScenarioResult.model_construct(scenario=loaded.path, variant=loaded.variant.id, description=scenario.description, runs=runs, results=results,
                          passed=passed, faulted=faulted, upstream_bug=(bug.issue or bug.reason) if bug else None,
                          bug_reproduced=(not unexplained) if bug and not passed else None, unexplained=unexplained)


def unexplained_failures(runs: list[ObjectRun], results: list[ExpectationResult], documented: list[str]) -> list[str]:
    """What a documented upstream bug does not explain, per object: an entry that did not return (a fault,
    a crash), an expectation outside `documented` that failed, or a documented one that held."""
    problems = []
    for run in runs:
        expected_fault = any(r.kind == "fault" and r.passed for r in results if r.object == run.object)
        for entry in run.entries:
            if (entry.returned is None or entry.fault is not None) and not expected_fault:
                why = f"{entry.fault.kind}: {entry.fault.message}" if entry.fault else "it did not return"
                problems.append(f"{run.object}: entry {entry.entry} did not run to the end ({why})")
        mine = [r for r in results if r.object == run.object]
        failed = {r.kind for r in mine if not r.passed}
        problems += [f"{run.object}: {r.kind} (line {r.line or '?'}) failed, which the bug does not explain: {r.summary}"
                     for r in mine if not r.passed and r.kind not in documented]
        problems += [f"{run.object}: {kind} holds, but the bug says it fails (fixed upstream, or a different failure?)"
                     for kind in documented if kind not in failed]
    return problems


def _line(loaded: LoadedScenario, index: int, ref, kind: str) -> int | None:
    if ref.expect is not None and getattr(ref.expect, kind, None):
        return loaded.line("objects", index, "expect", kind)
    return loaded.line("expect", kind) if ("expect", kind) in loaded.lines else loaded.line("objects", index)
