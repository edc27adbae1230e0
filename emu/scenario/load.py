"""Read and validate a scenario file; every error names the file, the line and the field.

The models (and with them pydantic and the CUDA enums) are imported only once the file has
been read and parsed, so that a missing or malformed file is reported without paying for them.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import ScenarioError
from .matrix import Variant, substitute, variants
from .names import check_names
from .yaml_source import line_of, load_with_lines

if TYPE_CHECKING:
    from .model import Scenario


@dataclass
class LoadedScenario:
    path: str
    scenario: Scenario
    lines: dict
    object_paths: list[str | None]   # files resolved against the scenario's folder; None for an object to build
    variant: Variant = Variant(None, {})
    checked: set[int] = field(default_factory=set)   # objects emu.scenario.names.check_object found valid

    def line(self, *path) -> int | None:
        return line_of(self.lines, path)

    def object_path(self, index: int) -> str:
        """The file of object `index`, exporting it first when the scenario builds it (cached)."""
        path = self.object_paths[index]
        if path is None:
            from ..build.cache import build_object
            where = f"{self.path}: line {self.line('objects', index)}"
            path = self.object_paths[index] = build_object(self.scenario.objects[index].build,
                                                           os.path.dirname(os.path.abspath(self.path)), where=where)
        return path

    def name(self) -> str:
        """The scenario file, with the matrix variant when there is one: `x.yaml[carveout=25]`."""
        return f"{self.path}[{self.variant.id}]" if self.variant.id else self.path


SUFFIXES = (".yaml", ".yml")


def scenario_files(paths: list[str]) -> list[str]:
    """The scenario files `paths` name: a file itself, a folder every *.yaml and *.yml under it (sorted), as
    `check` takes folders of objects; a folder without any is bad input."""
    found: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            found.append(path)
            continue
        files = sorted(os.path.join(folder, name) for folder, _, names in os.walk(path) for name in names
                       if name.endswith(SUFFIXES))
        if not files:
            raise ScenarioError("the directory holds no *.yaml or *.yml scenario files", path=path)
        found += files
    return found


def load_scenarios(path: str) -> list[LoadedScenario]:
    """Every variant of a scenario file: one without a `matrix:`, one per combination with one."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise ScenarioError(f"cannot read the scenario: {getattr(error, 'strerror', None) or error}", path=path) from None
    data, lines = load_with_lines(text, path)
    if not isinstance(data, dict):
        raise ScenarioError(f"a scenario must be a YAML mapping with at least `objects:`, not {type(data).__name__}", path=path)
    return [_validated(path, substitute(data, variant, lines, path), lines, variant) for variant in variants(data, lines, path)]


def load_scenario(path: str) -> LoadedScenario:
    """A scenario file without a matrix (use `load_scenarios` for one that may have one)."""
    loaded = load_scenarios(path)
    if len(loaded) != 1:
        raise ScenarioError(f"the scenario's matrix makes {len(loaded)} variants; load it with load_scenarios", path=path)
    return loaded[0]


def _validated(path: str, data: dict, lines: dict, variant: Variant) -> LoadedScenario:
    from pydantic import ValidationError
    from .model import Scenario
    path_shown = f"{path}[{variant.id}]" if variant.id else path
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        loc = tuple(part for part in first["loc"] if not (isinstance(part, str) and part.startswith("function-")))
        field = ".".join(str(p) for p in loc) or "(top level)"
        line = line_of(lines, loc)
        more = f" ({error.error_count() - 1} more error(s))" if error.error_count() > 1 else ""
        message = first["msg"].removeprefix("Value error, ")
        raise ScenarioError(f"line {line}: field {field}: {message}{more}", path=path_shown) from None
    except (TypeError, AttributeError, KeyError, RecursionError) as error:   # a validator met a shape it does not expect
        loc = _failing_field(data)
        field = ".".join(str(p) for p in loc) or "(top level)"
        raise ScenarioError(f"line {line_of(lines, loc)}: field {field}: invalid value ({type(error).__name__}: {error})", path=path_shown) from None
    _check_ranges(scenario, lines, path_shown)
    check_names(scenario, lines, path_shown)
    base = os.path.dirname(os.path.abspath(path))
    object_paths: list[str | None] = []
    for index, ref in enumerate(scenario.objects):
        if ref.path is None:
            object_paths.append(None)
            continue
        resolved = os.path.normpath(os.path.join(base, ref.path))
        if not os.path.isfile(resolved):
            raise ScenarioError(f"line {line_of(lines, ('objects', index))}: field objects.{index}: object file {ref.path} not found (looked for {resolved})", path=path_shown)
        object_paths.append(resolved)
    return LoadedScenario(path, scenario, lines, object_paths, variant)


def _check_ranges(scenario: Scenario, lines: dict, path: str) -> None:
    """Numbers that end up in guest memory must fit their C types (the models leave them unbounded)."""
    limits = [(("runtime", name), getattr(scenario.runtime, name), 0, (1 << 64) - 1, "a 64-bit handle")
              for name in ("library_handle", "first_kernel_handle")]
    limits.append((("runtime", "current_device"), scenario.runtime.current_device, 0, (1 << 31) - 1, "an int device ordinal"))
    limits += [(("entries", index, "device"), entry.device, 0, (1 << 31) - 1, "an int device ordinal")
               for index, entry in enumerate(scenario.entries) if entry.device is not None]
    for where, value, low, high, what in limits:
        if not low <= value <= high:
            field = ".".join(str(p) for p in where)
            raise ScenarioError(f"line {line_of(lines, where)}: field {field}: {value} does not fit {what} ({low}..{high})", path=path)


def _failing_field(data: dict) -> tuple:
    """The top-level key (and list index) whose value makes validation raise something other than ValidationError."""
    from pydantic import ValidationError
    from .model import Scenario

    def raises(candidate: dict) -> bool:
        try:
            Scenario.model_validate(candidate)
        except ValidationError:
            return False
        except Exception:   # noqa: BLE001 - exactly what we are looking for
            return True
        return False

    for key, value in data.items():
        base = {"objects": ["x.o"]} if key != "objects" else {}
        if not raises({**base, key: value}):
            continue
        if isinstance(value, list):
            for index, item in enumerate(value):
                if raises({**base, key: [item]}):
                    return (key, index)
        return (key,)
    return ()
