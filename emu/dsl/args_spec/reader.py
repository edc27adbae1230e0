"""Describe a CuTe DSL export's `<prefix>_args_spec` without unpickling it.

The DSL stores base64(pickle(inspect.Signature)) in the object (4.4.x: an inspect.FullArgSpec). `pickle.loads` would import and
call whatever the pickle names, so a crafted object could run code. Instead emu.dsl.args_spec.pickle_walk walks its
opcodes on an inert stack machine (nothing named in the pickle is imported or called). The resulting tree is then read as the shape `Signature.__reduce__` (or FullArgSpec's namedtuple
`__reduce__`) produces.  CPython spells a parameter kind `_ParameterKind(1)` or, since the 3.11 point
releases that pickle enums by name (Debian's 3.11.2), `getattr(_ParameterKind, 'POSITIONAL_OR_KEYWORD')`.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from .model import ArgSpec, ArgSpecParameter
from .pickle_walk import ArgSpecError, Call, Global, fail, pickle_bytes, run

__all__ = ["ArgSpec", "ArgSpecError", "ArgSpecParameter", "decode_args_spec"]

MAX_PARAMETERS = 512
RENDER_BUDGET = 256
RENDER_DEPTH = 16

KIND_NAMES = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "VAR_POSITIONAL", "KEYWORD_ONLY", "VAR_KEYWORD")


class _Renderer:
    """Budgeted, depth-limited text for inert values: memo sharing can make DAGs and cycles."""

    def __init__(self) -> None:
        self.budget = RENDER_BUDGET

    def __call__(self, obj: Any, depth: int = 0) -> str:
        self.budget -= 1
        if self.budget < 0 or depth > RENDER_DEPTH:
            return "..."
        if isinstance(obj, Global):
            return obj.dotted()
        if isinstance(obj, bool) or obj is None:
            return repr(obj)
        if isinstance(obj, int):
            return repr(obj) if obj.bit_length() <= 128 else f"<int of {obj.bit_length()} bits>"
        if isinstance(obj, (float, str, bytes, bytearray)):
            text = repr(obj)
            return text if len(text) <= 200 else text[:197] + "..."
        if isinstance(obj, Call):
            args = ", ".join(self(a, depth + 1) for a in obj.args[:16])
            return f"{self(obj.func, depth + 1)}({args})"
        return self.container(obj, depth)

    def container(self, obj: Any, depth: int) -> str:
        if isinstance(obj, tuple):
            inner = ", ".join(self(a, depth + 1) for a in obj[:16])
            return f"({inner}{',' if len(obj) == 1 else ''})"
        if isinstance(obj, list):
            return "[" + ", ".join(self(a, depth + 1) for a in obj[:16]) + "]"
        if isinstance(obj, dict):
            items = list(obj.items())[:16]
            return "{" + ", ".join(f"{self(k, depth + 1)}: {self(v, depth + 1)}" for k, v in items) + "}"
        if isinstance(obj, (set, frozenset)):
            return "{" + ", ".join(sorted(self(a, depth + 1) for a in list(obj)[:16])) + "}"
        return f"<{type(obj).__name__}>"


def _is_global(obj: Any, module: str, name: str) -> bool:
    return isinstance(obj, Global) and obj.module == module and obj.name == name


def _is_call_of(obj: Any, module: str, name: str) -> bool:
    return isinstance(obj, Call) and _is_global(obj.func, module, name)


def _state(call: Call, key: str, pos: int) -> Any:
    state = call.state
    if isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], dict):
        state = state[1]  # (dict_state, slot_state) form
    if not isinstance(state, dict) or key not in state:
        raise fail(f"object built here has no '{key}' in its state", pos)
    return state[key]


def _annotation(obj: Any) -> str | None:
    if _is_global(obj, "inspect", "_empty"):
        return None
    return obj if isinstance(obj, str) else _Renderer()(obj)


def _default(obj: Any) -> str | None:
    return None if _is_global(obj, "inspect", "_empty") else _Renderer()(obj)


def _kind(obj: Any, pos: int) -> str:
    if _is_call_of(obj, "inspect", "_ParameterKind") and len(obj.args) == 1:
        obj = obj.args[0]
    elif (_is_call_of(obj, "builtins", "getattr") and len(obj.args) == 2 and not obj.kwargs
          and _is_global(obj.args[0], "inspect", "_ParameterKind") and obj.args[1] in KIND_NAMES):
        return obj.args[1]                 # by-name enum pickling (CPython 3.11.2, Debian 12's)
    if isinstance(obj, int) and not isinstance(obj, bool) and 0 <= obj < len(KIND_NAMES):
        return KIND_NAMES[obj]
    raise fail("parameter kind is not an inspect._ParameterKind of 0..4", pos)


def _parameter(obj: Any, index: int, pos: int) -> ArgSpecParameter:
    if not _is_call_of(obj, "inspect", "Parameter"):
        raise fail(f"parameter {index} is not an inspect.Parameter", pos)
    if len(obj.args) != 2 or not isinstance(obj.args[0], str):
        raise fail(f"parameter {index} is not built from (name, kind)", obj.pos)
    return ArgSpecParameter(
        name=obj.args[0],
        kind=_kind(obj.args[1], obj.pos),
        annotation=_annotation(_state(obj, "_annotation", obj.pos)),
        default=_default(_state(obj, "_default", obj.pos)),
    )


def _signature(obj: Any, stop_pos: int) -> ArgSpec:
    if _is_call_of(obj, "inspect", "FullArgSpec"):
        return _full_arg_spec(obj, obj.args)
    if (_is_call_of(obj, "copyreg", "_reconstructor") and len(obj.args) == 3   # protocols 0 and 1
            and _is_global(obj.args[0], "inspect", "FullArgSpec") and _is_global(obj.args[1], "builtins", "tuple")
            and isinstance(obj.args[2], tuple)):
        return _full_arg_spec(obj, obj.args[2])
    if not _is_call_of(obj, "inspect", "Signature"):
        raise fail("pickled object is not an inspect.Signature", stop_pos, "nor an inspect.FullArgSpec, the 4.4 form")
    if len(obj.args) != 1 or not isinstance(obj.args[0], (tuple, list)):
        raise fail("inspect.Signature is not built from one tuple of parameters", obj.pos)
    params = obj.args[0]
    if len(params) > MAX_PARAMETERS:
        raise fail(f"signature claims {len(params)} parameters, more than {MAX_PARAMETERS}", obj.pos)
    parameters = [_parameter(p, i, obj.pos) for i, p in enumerate(params)]
    names = [p.name for p in parameters]
    if len(set(names)) != len(names):
        raise fail("signature repeats a parameter name", obj.pos)
    returns = _annotation(_state(obj, "_return_annotation", obj.pos))
    return ArgSpec(parameters=parameters, return_annotation=returns)


FULL_ARG_SPEC_FIELDS = ("args", "varargs", "varkw", "defaults", "kwonlyargs", "kwonlydefaults", "annotations")


def _full_arg_spec(obj: Call, fields: tuple) -> ArgSpec:
    """`FullArgSpec(args, varargs, varkw, defaults, kwonlyargs, kwonlydefaults, annotations)` as parameters."""
    if len(fields) != len(FULL_ARG_SPEC_FIELDS):
        raise fail(f"inspect.FullArgSpec is not built from its {len(FULL_ARG_SPEC_FIELDS)} fields", obj.pos)
    args, varargs, varkw, defaults, kwonly, kwdefaults, annotations = fields

    def names(value: Any, what: str) -> list[str]:
        if value is None:
            return []
        if not isinstance(value, (list, tuple)) or not all(isinstance(n, str) for n in value):
            raise fail(f"FullArgSpec.{what} is not a list of names", obj.pos)
        return list(value)

    def optional_name(value: Any, what: str) -> list[str]:
        if value is not None and not isinstance(value, str):
            raise fail(f"FullArgSpec.{what} is not a name or None", obj.pos)
        return [] if value is None else [value]

    for value, what in ((defaults, "defaults"), (kwdefaults, "kwonlydefaults"), (annotations, "annotations")):
        if value is not None and not isinstance(value, (tuple, list, dict)):
            raise fail(f"FullArgSpec.{what} is neither None nor a container", obj.pos)
    positional, keyword_only = names(args, "args"), names(kwonly, "kwonlyargs")
    defaults = list(defaults or ())
    if isinstance(defaults, dict) or len(defaults) > len(positional):
        raise fail("FullArgSpec.defaults is longer than its args", obj.pos)
    kwdefaults = kwdefaults if isinstance(kwdefaults, dict) else {}
    annotations = annotations if isinstance(annotations, dict) else {}
    by_name = dict(zip(positional[len(positional) - len(defaults):], defaults))
    by_name.update(kwdefaults)
    order = ([(n, "POSITIONAL_OR_KEYWORD") for n in positional] + [(n, "VAR_POSITIONAL") for n in optional_name(varargs, "varargs")]
             + [(n, "KEYWORD_ONLY") for n in keyword_only] + [(n, "VAR_KEYWORD") for n in optional_name(varkw, "varkw")])
    if len(order) > MAX_PARAMETERS:
        raise fail(f"FullArgSpec claims {len(order)} parameters, more than {MAX_PARAMETERS}", obj.pos)
    if len({n for n, _ in order}) != len(order):
        raise fail("FullArgSpec repeats a parameter name", obj.pos)
    empty = Global("inspect", "_empty")
    parameters = [ArgSpecParameter(name=name, kind=kind, annotation=_annotation(annotations.get(name, empty)),
                                   default=_default(by_name[name]) if name in by_name else None)
                  for name, kind in order]
    return ArgSpec(parameters=parameters, return_annotation=_annotation(annotations.get("return", empty)))


def decode_args_spec(data: bytes | bytearray | str) -> ArgSpec:
    """Describe the signature in an args_spec (base64 text, with or without trailing NULs).

    Raises ArgSpecError for anything that is not a plain pickle of an inspect.Signature or FullArgSpec.
    Never imports or calls anything the pickle names.  Kept per text: every launch of an export reads it
    (callers do not change the result).
    """
    return _decode(bytes(data) if isinstance(data, bytearray) else data)


@lru_cache(maxsize=256)
def _decode(data: bytes | str) -> ArgSpec:
    raw = pickle_bytes(data)
    obj, stop_pos = run(raw)
    return _signature(obj, stop_pos)
