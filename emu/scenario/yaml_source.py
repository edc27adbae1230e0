"""Load YAML keeping the line of every value, so errors can point at the file and line."""
from __future__ import annotations

from typing import Any

import yaml

from ..errors import ScenarioError

Path_ = tuple[Any, ...]
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)   # libyaml: about 10x faster, same nodes and marks


def load_with_lines(text: str, path: str) -> tuple[Any, dict[Path_, int]]:
    """The YAML data and a map from each value's path (keys and indexes) to its 1-based line."""
    try:
        node = yaml.compose(text, Loader=_LOADER)
        data = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ScenarioError(f"not valid YAML{where}: {problem}", path=path) from None
    except RecursionError:
        raise ScenarioError("the YAML nests too deeply to read", path=path) from None
    lines: dict[Path_, int] = {}
    if node is not None:
        try:
            size = _expanded_size(node, {}, path)
            if size > MAX_VALUES:
                raise ScenarioError(f"the YAML expands to {size} values through anchors and aliases (more than {MAX_VALUES}); "
                                    "a scenario is never that large", path=path)
            _walk(node, (), lines)
        except RecursionError:
            raise ScenarioError("the YAML nests too deeply to read", path=path) from None
    return data, lines


MAX_VALUES = 100_000


def _expanded_size(node: yaml.Node, memo: dict[int, int], path: str) -> int:
    """How many values the document holds once aliases are expanded (linear time: aliases share nodes)."""
    known = memo.get(id(node))
    if known is not None:
        if known < 0:
            raise ScenarioError(f"line {node.start_mark.line + 1}: an alias refers to a value that contains itself", path=path)
        return known
    memo[id(node)] = -1                     # in progress: meeting it again is a recursive alias (&a [*a])
    if isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded_size(k, memo, path) + _expanded_size(v, memo, path) for k, v in node.value)
    elif isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_size(item, memo, path) for item in node.value)
    else:
        size = 1
    memo[id(node)] = size = min(size, 1 << 62)
    return size


def _walk(node: yaml.Node, path: Path_, lines: dict[Path_, int]) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag.endswith(":int"):
                key = int(key)
            _walk(value_node, path + (key,), lines)
            lines[path + (key,)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, path + (index,), lines)


def line_of(lines: dict[Path_, int], path: Path_) -> int | None:
    """The line of the deepest known prefix of `path`."""
    path = tuple(path)
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return lines.get(())
