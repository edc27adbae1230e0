"""The performance tricks, in one place: generated functions and unvalidated records.

Two things here trade plainness for speed, and only the hot paths use them (relocating
a never-seen object, answering a stub call, recording a run); each caller says why.

- `generated_function` turns lines of emu's own text (relocation formulas, stub
  argument decoders) into a Python function, so that a loop runs straight-line code
  instead of interpreting a table per item.  The text never comes from an object file.
- `record_factory` builds a pydantic model instance from values emu already trusts,
  without running its validator: pydantic's `model_construct` re-walks defaults and
  costs tens of microseconds, and the stub path builds a record per call.  It writes
  pydantic's private instance slots itself, so it first checks, once per installed pydantic
  (emu.cache.answers), that it keeps an instance the way it assumes (`records_built_directly`);
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
        setters = _slot_setters()
        setters["set_dict"](direct, dict(values))
        setters["set_fields"](direct, set(_Probe.model_fields))
        setters["set_extra"](direct, None)
        setters["set_private"](direct, None)
        slots = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
        return (all(getattr(direct, slot) == getattr(public, slot) for slot in slots)
                and direct.model_dump() == public.model_dump() == values and direct == public
                and direct.model_copy() == public)
    except Exception:                       # noqa: BLE001 - any failure means: use the public path
        return False


def _slot_setters() -> dict[str, Callable[[Any, Any], None]]:
    """The setters of the four instance slots pydantic keeps an instance in, by the names record_lines use:
    each slot's own descriptor (a third cheaper than object.__setattr__, which looks it up by name)."""
    slots = {"set_dict": "__dict__", "set_fields": "__pydantic_fields_set__", "set_extra": "__pydantic_extra__",
             "set_private": "__pydantic_private__"}
    return {name: BaseModel.__dict__[slot].__set__ for name, slot in slots.items()}


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
            f"set_dict({target}, {values})",
            f"set_fields({target}, every_field)",
            f"set_extra({target}, None)",
            f"set_private({target}, None)")


def record_names(cls: type[BaseModel]) -> dict[str, Any]:
    """What `record_lines` read, for records of `cls`."""
    every_field = _EVERY_FIELD.get(cls)
    if every_field is None:
        every_field = _EVERY_FIELD[cls] = set(cls.model_fields)
    names = {"record_class": cls, "record_new": cls.__new__, "every_field": every_field}
    if records_built_directly():
        names.update(_slot_setters())
    return names


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


_BATCHES: dict[type, Callable[[Iterable[dict[str, Any]]], list]] = {}


def records_factory(cls: type[M]) -> Callable[[Iterable[dict[str, Any]]], list[M]]:
    """`make_all(fields)`: a list of instances of `cls`, one per dict of `fields`, as `record_factory` makes each;
    for records kept as dicts and made together (emu.stubs.dispatch: a run's calls), in one loop, not a call each."""
    make_all = _BATCHES.get(cls)
    if make_all is None:
        body = ("made = []", "append = made.append", "for values in fields:",
                *(f"    {line}" for line in record_lines("instance", "values")), "    append(instance)", "return made")
        make_all = _BATCHES[cls] = generated_function("make_all", ("fields",), body, record_names(cls),
                                                      f"records {cls.__name__}")
    return make_all


def build_record(cls: type[M], values: dict[str, Any]) -> M:
    """One unvalidated instance of `cls` from every one of its fields (see `record_factory`)."""
    return record_factory(cls)(values)
