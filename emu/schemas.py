"""The JSON Schemas of emu's contracts: scenario files, traces, scenario results."""
from __future__ import annotations


def schemas() -> dict:
    from .scenario.model import Scenario
    from .scenario.runner import ScenarioResult
    from .trace import ObjectRun
    return {
        "scenario": Scenario.model_json_schema(),
        "trace": ObjectRun.model_json_schema(),
        "result": ScenarioResult.model_json_schema(),
    }
