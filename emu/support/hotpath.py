"""The performance tricks, in one place: generated functions and unvalidated records.

Two things here trade plainness for speed, and only the hot paths use them (relocating
a never-seen object, answering a stub call, recording a run); each caller says why.

- `generated_function` turns lines of emu's own text (relocation formulas, stub
  argument decoders) into a Python function, so that a loop runs straight-line code
  instead of interpreting a table per item.  The text never comes from an object file.
- `record_factory` builds a pydantic model instance from values emu already trusts,
  without running its validator: pydantic's `model_construct` re-walks defaults and
  costs tens of microseconds, and the stub path builds a record per call.  It writes
  pydantic's private instance slots itself, so it first checks, once per process, that
  the installed pydantic keeps an instance the way it assumes (`records_built_directly`);
  where it does not, every record is built with the public `model_construct` instead.
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
    from ..cache.class_code import cached_compile        # kept between `python -m emu` processes
    exec(cached_compile(source, f"<emu {label}>", "exec"), namespace)     # noqa: S102 - emu's own text, see the docstring
    return namespace[name]


_EVERY_FIELD: dict[type, set[str]] = {}
_FACTORIES: dict[type, Callable[[dict[str, Any]], Any]] = {}


def _direct_matches_public() -> bool:
    """Whether a record built by writing pydantic's instance slots is the record `model_construct` builds.

    Checked against the instance `model_construct` makes for the same values: the same
    `__dict__`, fields set, extra and private slots, and the same dump, equality and copy.
    """
    class _Probe(BaseModel):            # the kinds of field records have: required, defaulted, a container
        name: str
        count: int = 0
        items: list[int] = []

    values = {"name": "probe", "count": 3, "items": [1, 2]}
    try:
        public = _Probe.model_construct(**values)
        direct = _Probe.__new__(_Probe)
        object.__setattr__(direct, "__dict__", dict(values))
        object.__setattr__(direct, "__pydantic_fields_set__", set(_Probe.model_fields))
        object.__setattr__(direct, "__pydantic_extra__", None)
        object.__setattr__(direct, "__pydantic_private__", None)
        slots = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
        return (all(getattr(direct, slot) == getattr(public, slot) for slot in slots)
                and direct.model_dump() == public.model_dump() == values and direct == public
                and direct.model_copy() == public)
    except Exception:                       # noqa: BLE001 - any failure means: use the public path
        return False


_DIRECT: list[bool] = []                    # the check's answer, made on first use


def records_built_directly() -> bool:
    """True when records are built by writing the instance slots (checked once per installed pydantic), False when the
    installed pydantic keeps instances otherwise and `model_construct` builds them."""
    if not _DIRECT:                         # worked out once per installed pydantic (emu.cache.answers)
        import sys

        import pydantic_core
        from pydantic import VERSION

        from ..cache.answers import remembered
        _DIRECT.append(remembered(f"pydantic records built directly: pydantic {VERSION}, pydantic-core "
                                  f"{pydantic_core.__version__}, Python {sys.version}", _direct_matches_public))
    return _DIRECT[0]


def record_lines(target: str, values: str) -> tuple[str, ...]:
    """Lines of generated code that set `target` to an unvalidated record of `values` (see `record_factory`).

    For generated code that builds a record per call: inline, they save the call into
    `make`.  They read the names `record_names(cls)` gives.
    """
    if not records_built_directly():
        return (f"{target} = record_class.model_construct(**{values})",)
    return (f"{target} = record_new(record_class)",
            f"set_slot({target}, '__dict__', {values})",
            f"set_slot({target}, '__pydantic_fields_set__', every_field)",
            f"set_slot({target}, '__pydantic_extra__', None)",
            f"set_slot({target}, '__pydantic_private__', None)")


def record_names(cls: type[BaseModel]) -> dict[str, Any]:
    """What `record_lines` read, for records of `cls`."""
    every_field = _EVERY_FIELD.get(cls)
    if every_field is None:
        every_field = _EVERY_FIELD[cls] = set(cls.model_fields)
    return {"record_class": cls, "record_new": cls.__new__, "set_slot": object.__setattr__, "every_field": every_field}


def record_factory(cls: type[M]) -> Callable[[dict[str, Any]], M]:
    """`make(values)`: an instance of `cls` holding `values`, which must give every field, unvalidated.

    The values become the instance's `__dict__` as they are, and every instance shares
    one fields-set (pydantic only ever adds a name to it, on assignment, and every name
    is there already).  Use it only where the values are already of the field types.
    """
    make = _FACTORIES.get(cls)
    if make is None:
        make = _FACTORIES[cls] = generated_function("make", ("values",), (*record_lines("instance", "values"), "return instance"),
                                                    record_names(cls), f"record {cls.__name__}")
    return make


def build_record(cls: type[M], values: dict[str, Any]) -> M:
    """One unvalidated instance of `cls` from every one of its fields (see `record_factory`)."""
    return record_factory(cls)(values)
