"""The performance tricks, in one place: generated functions and unvalidated records.

Two things here trade plainness for speed, and only the hot paths use them (relocating
a never-seen object, answering a stub call, recording a run); each caller says why.

- `generated_function` turns lines of emu's own text (relocation formulas, stub
  argument decoders) into a Python function, so that a loop runs straight-line code
  instead of interpreting a table per item.  The text never comes from an object file.
- `record_factory` builds a pydantic model instance from values emu already trusts,
  without running its validator: pydantic's `model_construct` re-walks defaults and
  costs tens of microseconds, and the stub path builds a record per call.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def generated_function(name: str, parameters: Iterable[str], body: Iterable[str], names: dict[str, Any],
                       label: str) -> Callable:
    """`def name(parameters): body`, compiled with `names` as its globals.

    `label` shows in tracebacks and profiles as `<emu label>`, so a generated frame says
    what generated it.
    """
    source = f"def {name}({', '.join(parameters)}):\n" + "".join(f"    {line}\n" for line in body)
    namespace = dict(names)
    exec(compile(source, f"<emu {label}>", "exec"), namespace)     # noqa: S102 - emu's own text, see the docstring
    return namespace[name]


_FACTORIES: dict[type, Callable[[dict[str, Any]], Any]] = {}


def record_factory(cls: type[M]) -> Callable[[dict[str, Any]], M]:
    """`make(values)`: an instance of `cls` holding `values`, which must give every field, unvalidated.

    The values become the instance's `__dict__` as they are, and every instance shares
    one fields-set (pydantic only ever adds a name to it, on assignment, and every name
    is there already).  Use it only where the values are already of the field types.
    """
    make = _FACTORIES.get(cls)
    if make is None:
        every_field, new, set_slot = set(cls.model_fields), cls.__new__, object.__setattr__

        def make(values: dict[str, Any]) -> M:
            instance = new(cls)
            set_slot(instance, "__dict__", values)
            set_slot(instance, "__pydantic_fields_set__", every_field)
            set_slot(instance, "__pydantic_extra__", None)
            set_slot(instance, "__pydantic_private__", None)
            return instance
        _FACTORIES[cls] = make
    return make


def build_record(cls: type[M], values: dict[str, Any]) -> M:
    """One unvalidated instance of `cls` from every one of its fields (see `record_factory`)."""
    return record_factory(cls)(values)
