"""The JSON Schemas of emu's contracts: scenario files, traces, scenario results.

They are generated from the pydantic models and committed under emu/schemas/; a test
fails when a committed file is stale.  Regenerate with `python -m emu.commands.schema`.
"""
from __future__ import annotations


def schemas() -> dict:
    from .check import CheckResult
    from .inspect import InspectResult
    from .occupancy import OccupancyResult
    from ..scenario.model import Scenario
    from ..scenario.runner import ScenarioResult
    from ..run.trace import ObjectRun
    return {
        "scenario": Scenario.model_json_schema(),
        "trace": ObjectRun.model_json_schema(),
        "result": ScenarioResult.model_json_schema(),
        "check": CheckResult.model_json_schema(),
        "inspect": InspectResult.model_json_schema(),
        "occupancy": OccupancyResult.model_json_schema(),
    }


def write(folder: str) -> None:
    import json
    import os
    for name, schema in schemas().items():
        with open(os.path.join(folder, f"{name}.schema.json"), "w") as handle:
            json.dump(schema, handle, indent=1, sort_keys=True)
            handle.write("\n")


if __name__ == "__main__":
    import os
    write(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "schemas"))     # emu/schemas
