"""emu: run the host loaders of CuTe DSL ahead-of-time exports on a CPU emulator.

The public Python API (see the README): `emu.trace`, `emu.inspect`, `emu.check`, `emu.occupancy`,
`emu.run_scenario` and `emu.run_scenarios`, which return the models `--json` prints
(`ObjectRun`, `Inspection`, `CheckResult`, `OccupancyResult`, `ScenarioResult`), and the errors of
`emu.errors`. The command line is `python -m emu`. Everything else is private.
"""
from __future__ import annotations

TYPE_CHECKING = False      # as typing.TYPE_CHECKING (type checkers read it so), without importing typing at start-up
from .errors import BadInput, BuildError, DslNotInstalled, EmuError, ObjectFormatError, ScenarioError, UnknownFormatWarning

if TYPE_CHECKING:
    from .api import check, exports, inspect, occupancy, run_scenario, run_scenarios, trace
    from .cuda.config import RuntimeConfig
    from .dsl.entries import EntrySpec
    from .commands.inspect import InspectResult as Inspection
    from .commands.check import CheckResult
    from .commands.occupancy import OccupancyResult
    from .run.trace import ObjectRun
    from .scenario.runner import ScenarioResult

__version__ = "0.1.0"
__all__ = ["trace", "exports", "inspect", "check", "occupancy", "run_scenario", "run_scenarios",
           "ObjectRun", "Inspection", "CheckResult", "OccupancyResult", "ScenarioResult", "RuntimeConfig", "EntrySpec",
           "EmuError", "BadInput", "ObjectFormatError", "ScenarioError", "BuildError", "DslNotInstalled", "UnknownFormatWarning"]

# The API functions and result models are imported on first use: `import emu` (which every
# `python -m emu` does first, server or not) should not pay for typing or pydantic.
_LAZY = {"trace": ("api", "trace"), "exports": ("api", "exports"), "inspect": ("api", "inspect"), "check": ("api", "check"),
           "occupancy": ("api", "occupancy"), "OccupancyResult": ("commands.occupancy", "OccupancyResult"),
           "run_scenario": ("api", "run_scenario"), "run_scenarios": ("api", "run_scenarios"),
           "ObjectRun": ("run.trace", "ObjectRun"), "Inspection": ("commands.inspect", "InspectResult"),
           "CheckResult": ("commands.check", "CheckResult"), "ScenarioResult": ("scenario.runner", "ScenarioResult"),
           "RuntimeConfig": ("cuda.config", "RuntimeConfig"), "EntrySpec": ("dsl.entries", "EntrySpec")}


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module
        module, attribute = _LAZY[name]
        return getattr(import_module(f"{__name__}.{module}"), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
