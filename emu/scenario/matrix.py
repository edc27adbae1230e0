"""A scenario's `matrix:` block: one variant of the scenario per combination of its axes.

    matrix:
      carveout: [25, 50]
      target: [{gpu_arch: sm_90a, profile: h200}, {gpu_arch: sm_100a, profile: b200}]

expands into four variants. Every `${axis}` (or `${axis.key}` for a mapping value) in the
scenario's values is replaced by that variant's value: a string that is exactly one reference
takes the value itself (so `value: ${carveout}` stays a number), a longer string gets it as
text. Substitution happens on the YAML data before validation, so every error still names the
line it came from, and each variant is validated on its own.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from ..errors import ScenarioError
from .yaml_source import line_of

REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}")
MAX_VARIANTS = 4096


@dataclass(frozen=True)
class Variant:
    """One combination of the axes: its test id (`carveout=25-target=sm_90a-h200`) and values."""

    id: str | None
    values: dict[str, Any]


def variants(data: dict, lines: dict, path: str) -> list[Variant]:
    """The combinations a scenario's `matrix:` asks for (one id-less variant without a matrix)."""
    matrix = data.get("matrix")
    if matrix is None:
        return [Variant(None, {})]
    where = f"line {line_of(lines, ('matrix',))}: field matrix"
    if not isinstance(matrix, dict) or not matrix:
        raise ScenarioError(f"{where}: a matrix is a mapping from axis name to a list of values", path=path)
    for name, values in matrix.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ScenarioError(f"{where}: axis name {name!r} is not a name", path=path)
        if not isinstance(values, list) or not values:
            raise ScenarioError(f"line {line_of(lines, ('matrix', name))}: field matrix.{name}: an axis is a non-empty list of values", path=path)
    count = 1
    for values in matrix.values():
        count *= len(values)
    if count > MAX_VARIANTS:
        raise ScenarioError(f"{where}: the axes make {count} variants (more than {MAX_VARIANTS})", path=path)
    names = list(matrix)
    return [Variant("-".join(f"{name}={_id_text(value)}" for name, value in zip(names, combination)),
                    dict(zip(names, combination)))
            for combination in itertools.product(*(matrix[name] for name in names))]


def substitute(data: Any, variant: Variant, lines: dict, path: str, where: tuple = ()) -> Any:
    """`data` with every `${axis}` reference replaced by the variant's value (the matrix block itself kept)."""
    if isinstance(data, dict):
        return {key: value if where == () and key == "matrix" else substitute(value, variant, lines, path, where + (key,))
                for key, value in data.items()}
    if isinstance(data, list):
        return [substitute(value, variant, lines, path, where + (index,)) for index, value in enumerate(data)]
    if not isinstance(data, str) or "${" not in data:
        return data
    whole = REFERENCE.fullmatch(data)
    if whole:
        return _resolve(whole, variant, lines, path, where)
    return REFERENCE.sub(lambda match: str(_resolve(match, variant, lines, path, where)), data)


def _resolve(match: re.Match, variant: Variant, lines: dict, path: str, where: tuple) -> Any:
    axis, keys = match.group(1), [key for key in match.group(2).split(".") if key]
    field = ".".join(str(part) for part in where)
    if axis not in variant.values:
        known = ", ".join(variant.values) or "none: the scenario has no matrix"
        raise ScenarioError(f"line {line_of(lines, where)}: field {field}: {match.group(0)} names no matrix axis (axes: {known})", path=path)
    value = variant.values[axis]
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise ScenarioError(f"line {line_of(lines, where)}: field {field}: {match.group(0)}: the value of axis {axis} has no key {key!r}", path=path)
        value = value[key]
    return value


def _id_text(value: Any) -> str:
    """A value as it appears in a test id: mappings and lists by their values, joined."""
    if isinstance(value, dict):
        return "-".join(_id_text(v) for v in value.values())
    if isinstance(value, list):
        return "x".join(_id_text(v) for v in value)
    return str(value)
