"""Run a loaded scenario: every object on a fresh runtime, then every expectation."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..images import load_image
from ..run import run_object
from ..records import ObjectRun
from .expect import Checker, ExpectationResult
from .load import LoadedScenario
from .model import Expectations

EXPECTATION_KINDS = ("calls_in_order", "calls_any_order", "no_calls", "exact_calls", "returns", "state", "fault")


class ScenarioResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario: str = Field(description="path of the scenario file")
    variant: str | None = Field(default=None, description="the matrix combination this result is for (axis=value-...), if the scenario has a matrix")
    description: str = Field(description="the scenario's description")
    runs: list[ObjectRun] = Field(description="one run per object")
    results: list[ExpectationResult] = Field(description="every expectation checked, per object")
    passed: bool = Field(description="every expectation holds")
    faulted: bool = Field(description="some run stopped with a fault the scenario did not expect")
    upstream_bug: str | None = Field(default=None, description="the upstream bug this scenario documents, if any")


def run_scenario(loaded: LoadedScenario, only: int | None = None) -> ScenarioResult:
    """Run every object of the scenario (or just object number `only`) and check expectations."""
    scenario = loaded.scenario
    runs, results = [], []
    for index, ref in enumerate(scenario.objects):
        if only is not None and index != only:
            continue
        path = loaded.object_path(index)
        run = run_object(path, scenario.runtime, scenario.entries, scenario.budget, scenario.timeout_s)
        runs.append(run)
        _, export = load_image(path)
        expect: Expectations = scenario.expect.merged(ref.expect)
        lines = {kind: _line(loaded, index, ref, kind) for kind in EXPECTATION_KINDS}
        results.extend(Checker(run, export.kernel_info, lines).check(expect))
    passed = all(r.passed for r in results)
    faulted = any(r.kind == "fault" and not r.passed and scenario.expect.fault is None for r in results)
    bug = scenario.upstream_bug
    return ScenarioResult(scenario=loaded.path, variant=loaded.variant.id, description=scenario.description, runs=runs, results=results,
                          passed=passed, faulted=faulted, upstream_bug=(bug.issue or bug.reason) if bug else None)


def _line(loaded: LoadedScenario, index: int, ref, kind: str) -> int | None:
    if ref.expect is not None and getattr(ref.expect, kind, None):
        return loaded.line("objects", index, "expect", kind)
    return loaded.line("expect", kind) if ("expect", kind) in loaded.lines else loaded.line("objects", index)
