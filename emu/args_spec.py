"""Describe a CuTe DSL export's `<prefix>_args_spec` without unpickling it.

The DSL stores base64(pickle(inspect.Signature)) in the object. `pickle.loads` would import and
call whatever the pickle names, so a crafted object could run code. Instead the opcodes are walked
with `pickletools.genops` on a tiny symbolic stack machine: GLOBAL/STACK_GLOBAL yield names only,
REDUCE/NEWOBJ/BUILD yield inert nodes, and nothing named in the pickle is imported or called.
The resulting tree is then read as the shape `Signature.__reduce__` produces.
"""
from __future__ import annotations

import _compat_pickle
import base64
import binascii
import io
import pickletools
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_PICKLE_BYTES = 1 << 20
MAX_OPS = 100_000
MAX_STACK = 10_000
MAX_PARAMETERS = 512
RENDER_BUDGET = 256
RENDER_DEPTH = 16

KIND_NAMES = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "VAR_POSITIONAL", "KEYWORD_ONLY", "VAR_KEYWORD")


class ArgSpecError(ValueError):
    """The args_spec is not a readable pickle of an inspect.Signature."""


class ArgSpecParameter(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Parameter name as the DSL function declares it.")
    kind: str = Field(description="inspect.Parameter kind name, e.g. POSITIONAL_OR_KEYWORD or KEYWORD_ONLY.")
    annotation: str | None = Field(
        description="Dotted name of the annotation the pickle refers to (e.g. cutlass.cute.typing.Tensor), "
        "a string annotation verbatim, a symbolic rendering of anything else, or None when there is none.")
    default: str | None = Field(
        description="repr() of a plain default value, a symbolic rendering of a non-plain one, "
        "or None when the parameter has no default.")


class ArgSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    parameters: list[ArgSpecParameter] = Field(description="Runtime parameters in declaration order "
                                               "(the DSL drops Constexpr parameters before pickling).")
    return_annotation: str | None = Field(description="Return annotation rendered like a parameter "
                                          "annotation, or None when there is none.")


@dataclass(frozen=True)
class _Global:
    """A name from GLOBAL/STACK_GLOBAL; never resolved."""
    module: str
    name: str

    def dotted(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass(eq=False)
class _Call:
    """A REDUCE/NEWOBJ/INST/OBJ result: `func(*args)`, plus any BUILD state; never evaluated."""
    func: Any
    args: tuple
    pos: int
    state: Any = None
    kwargs: dict = field(default_factory=dict)


class _Mark:
    pass


_MARK = _Mark()
_SCALARS = (str, int, float, bool, type(None), bytes, _Global)


def _fail(what: str, pos: int, detail: str = "") -> ArgSpecError:
    return ArgSpecError(f"{what} at byte {pos} of the args_spec pickle{f' ({detail})' if detail else ''}.")


class _Machine:
    """The symbolic unpickler: the stack/metastack/memo of pickle's Unpickler, with inert values."""

    def __init__(self) -> None:
        self.stack: list = []
        self.meta: list[list] = []
        self.memo: dict[int, Any] = {}
        self.pos = 0
        self.proto = 0

    def global_name(self, module: str, name: str) -> _Global:
        """A name only; protocols < 3 spell Python 2 modules, which Unpickler maps (fix_imports)."""
        if self.proto < 3:
            module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
            module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        return _Global(module, name)

    def push(self, obj: Any) -> None:
        if len(self.stack) + len(self.meta) >= MAX_STACK:
            raise _fail(f"stack deeper than {MAX_STACK} entries", self.pos)
        self.stack.append(obj)

    def pop(self) -> Any:
        if not self.stack:
            raise _fail("stack underflow", self.pos)
        return self.stack.pop()

    def top(self) -> Any:
        if not self.stack:
            raise _fail("stack underflow", self.pos)
        return self.stack[-1]

    def pop_mark(self) -> list:
        if not self.meta:
            raise _fail("no MARK to pop to", self.pos)
        items, self.stack = self.stack, self.meta.pop()
        return items

    def scalar(self, obj: Any, what: str) -> Any:
        if not isinstance(obj, _SCALARS):
            raise _fail(f"{what} of type {type(obj).__name__} is not a plain scalar", self.pos)
        return obj

    def name(self, obj: Any) -> str:
        if not isinstance(obj, str):
            raise _fail("STACK_GLOBAL operand is not a string", self.pos)
        return obj

    def step(self, op: str, arg: Any) -> None:
        handler = _HANDLERS.get(op)
        if handler is None:
            raise _fail(f"unsupported pickle opcode {op}", self.pos)
        handler(self, arg)


def _set_items(m: _Machine, target: Any, items: list) -> None:
    if not isinstance(target, dict):
        raise _fail("SETITEM(S) on something that is not a dict", m.pos)
    if len(items) % 2:
        raise _fail("odd number of items for a dict", m.pos)
    for i in range(0, len(items), 2):
        target[m.scalar(items[i], "dict key")] = items[i + 1]


def _setitem(m: _Machine, _arg: Any) -> None:
    value = m.pop()
    key = m.pop()
    _set_items(m, m.top(), [key, value])


def _setitems(m: _Machine, _arg: Any) -> None:
    items = m.pop_mark()
    _set_items(m, m.top(), items)


def _append(m: _Machine, items: list) -> None:
    target = m.top()
    if not isinstance(target, list):
        raise _fail("APPEND(S) on something that is not a list", m.pos)
    target.extend(items)


def _add_items(m: _Machine, items: list) -> None:
    target = m.top()
    if not isinstance(target, set):
        raise _fail("ADDITEMS on something that is not a set", m.pos)
    target.update(m.scalar(i, "set item") for i in items)


def _reduce(m: _Machine, _arg: Any) -> None:
    args = m.pop()
    func = m.pop()
    if not isinstance(args, tuple):
        raise _fail("REDUCE arguments are not a tuple", m.pos)
    m.push(_Call(func, args, m.pos))


def _newobj_ex(m: _Machine, _arg: Any) -> None:
    kwargs, args, cls = m.pop(), m.pop(), m.pop()
    if not isinstance(args, tuple) or not isinstance(kwargs, dict):
        raise _fail("NEWOBJ_EX operands are not a tuple and a dict", m.pos)
    m.push(_Call(cls, args, m.pos, kwargs=kwargs))


def _obj(m: _Machine, _arg: Any) -> None:
    items = m.pop_mark()
    if not items:
        raise _fail("OBJ without a class", m.pos)
    m.push(_Call(items[0], tuple(items[1:]), m.pos))


def _build(m: _Machine, _arg: Any) -> None:
    state = m.pop()
    target = m.top()
    if not isinstance(target, _Call):
        raise _fail("BUILD on something that is not a constructed object", m.pos)
    if isinstance(target.state, dict) and isinstance(state, dict):
        target.state.update(state)
    else:
        target.state = state


def _memo_get(m: _Machine, key: Any) -> None:
    if key not in m.memo:
        raise _fail(f"memo entry {key} read before it was written", m.pos)
    m.push(m.memo[key])


def _global(m: _Machine, arg: str) -> None:
    module, _, name = arg.partition(" ")
    m.push(m.global_name(module, name))


def _stack_global(m: _Machine, _arg: Any) -> None:
    name = m.name(m.pop())
    m.push(m.global_name(m.name(m.pop()), name))


def _dict(m: _Machine, _arg: Any) -> None:
    target: dict = {}
    _set_items(m, target, m.pop_mark())
    m.push(target)


def _inst(m: _Machine, arg: str) -> None:
    module, _, name = arg.partition(" ")
    m.push(_Call(m.global_name(module, name), tuple(m.pop_mark()), m.pos))


def _proto(m: _Machine, arg: int) -> None:
    if not 0 <= arg <= 5:
        raise _fail(f"unsupported pickle protocol {arg}", m.pos)
    m.proto = arg


def _mark(m: _Machine, _arg: Any) -> None:
    if len(m.stack) + len(m.meta) >= MAX_STACK:
        raise _fail(f"stack deeper than {MAX_STACK} entries", m.pos)
    m.meta.append(m.stack)
    m.stack = []


def _pop(m: _Machine, _arg: Any) -> None:
    if m.stack:
        m.stack.pop()
    else:
        m.pop_mark()


def _push_arg(m: _Machine, arg: Any) -> None:
    m.push(arg)


_HANDLERS: dict[str, Any] = {
    "PROTO": _proto,
    "FRAME": lambda m, a: None,
    "MARK": _mark,
    "POP": _pop,
    "POP_MARK": lambda m, a: m.pop_mark(),
    "DUP": lambda m, a: m.push(m.top()),
    "NONE": lambda m, a: m.push(None),
    "NEWTRUE": lambda m, a: m.push(True),
    "NEWFALSE": lambda m, a: m.push(False),
    **{op: _push_arg for op in (
        "INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT", "BINFLOAT",
        "STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE",
        "BINUNICODE8", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8")},
    "EMPTY_TUPLE": lambda m, a: m.push(()),
    "TUPLE": lambda m, a: m.push(tuple(m.pop_mark())),
    "TUPLE1": lambda m, a: m.push((m.pop(),)),
    "TUPLE2": lambda m, a: m.push(tuple(reversed((m.pop(), m.pop())))),
    "TUPLE3": lambda m, a: m.push(tuple(reversed((m.pop(), m.pop(), m.pop())))),
    "EMPTY_LIST": lambda m, a: m.push([]),
    "LIST": lambda m, a: m.push(m.pop_mark()),
    "APPEND": lambda m, a: _append(m, [m.pop()]),
    "APPENDS": lambda m, a: _append(m, m.pop_mark()),
    "EMPTY_DICT": lambda m, a: m.push({}),
    "DICT": _dict,
    "SETITEM": _setitem,
    "SETITEMS": _setitems,
    "EMPTY_SET": lambda m, a: m.push(set()),
    "ADDITEMS": lambda m, a: _add_items(m, m.pop_mark()),
    "FROZENSET": lambda m, a: m.push(frozenset(m.scalar(i, "set item") for i in m.pop_mark())),
    "GLOBAL": _global,
    "STACK_GLOBAL": _stack_global,
    "INST": _inst,
    "OBJ": _obj,
    "REDUCE": _reduce,
    "NEWOBJ": _reduce,
    "NEWOBJ_EX": _newobj_ex,
    "BUILD": _build,
    "PUT": lambda m, a: m.memo.__setitem__(a, m.top()),
    "BINPUT": lambda m, a: m.memo.__setitem__(a, m.top()),
    "LONG_BINPUT": lambda m, a: m.memo.__setitem__(a, m.top()),
    "MEMOIZE": lambda m, a: m.memo.__setitem__(len(m.memo), m.top()),
    "GET": _memo_get,
    "BINGET": _memo_get,
    "LONG_BINGET": _memo_get,
}


def _pickle_bytes(data: bytes | str) -> bytes:
    """Base64 text (trailing NULs allowed, as in the object's .ldata) -> pickle bytes."""
    if isinstance(data, str):
        try:
            data = data.encode("ascii")
        except UnicodeEncodeError as exc:
            raise ArgSpecError(f"args_spec text is not ASCII base64 (non-ASCII character at text offset "
                               f"{exc.start}).") from None
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ArgSpecError(f"args_spec must be bytes or str, not {type(data).__name__}.")
    text = bytes(data).rstrip(b"\0")
    if len(text) > MAX_PICKLE_BYTES * 4 // 3 + 4:
        raise ArgSpecError(f"args_spec text of {len(text)} bytes is larger than the {MAX_PICKLE_BYTES}-byte "
                           "pickle limit.")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ArgSpecError(f"args_spec text is not valid base64 ({exc}).") from None
    if not raw:
        raise ArgSpecError("args_spec is empty.")
    return raw


def _run(raw: bytes) -> tuple[Any, int]:
    """Execute the opcodes symbolically; returns the object STOP returns and STOP's offset."""
    machine = _Machine()
    stream = io.BytesIO(raw)
    ops = pickletools.genops(stream)
    for _ in range(MAX_OPS):
        machine.pos = stream.tell()
        try:
            opcode, arg, _ = next(ops)
        except StopIteration:
            raise _fail("pickle ends without a STOP opcode", machine.pos) from None
        except (ValueError, OverflowError, UnicodeDecodeError, EOFError, ArithmeticError) as exc:
            if machine.pos == len(raw):
                raise _fail("pickle ends without a STOP opcode", machine.pos) from None
            raise _fail("undecodable or truncated opcode", machine.pos, _short(exc)) from None
        if opcode.name == "STOP":
            if stream.tell() != len(raw):
                raise _fail(f"{len(raw) - stream.tell()} trailing bytes after STOP", stream.tell())
            left = len(machine.stack) + sum(map(len, machine.meta)) + len(machine.meta)
            if left != 1:
                raise _fail(f"{left} values left on the stack at STOP", machine.pos)
            return machine.pop(), machine.pos
        machine.step(opcode.name, arg)
    raise _fail(f"more than {MAX_OPS} opcodes", machine.pos)


def _short(exc: BaseException) -> str:
    text = str(exc).split("\n", 1)[0]
    return text if len(text) <= 120 else text[:117] + "..."


class _Renderer:
    """Budgeted, depth-limited text for inert values: memo sharing can make DAGs and cycles."""

    def __init__(self) -> None:
        self.budget = RENDER_BUDGET

    def __call__(self, obj: Any, depth: int = 0) -> str:
        self.budget -= 1
        if self.budget < 0 or depth > RENDER_DEPTH:
            return "..."
        if isinstance(obj, _Global):
            return obj.dotted()
        if isinstance(obj, bool) or obj is None:
            return repr(obj)
        if isinstance(obj, int):
            return repr(obj) if obj.bit_length() <= 128 else f"<int of {obj.bit_length()} bits>"
        if isinstance(obj, (float, str, bytes, bytearray)):
            text = repr(obj)
            return text if len(text) <= 200 else text[:197] + "..."
        if isinstance(obj, _Call):
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
    return isinstance(obj, _Global) and obj.module == module and obj.name == name


def _is_call_of(obj: Any, module: str, name: str) -> bool:
    return isinstance(obj, _Call) and _is_global(obj.func, module, name)


def _state(call: _Call, key: str, pos: int) -> Any:
    state = call.state
    if isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], dict):
        state = state[1]  # (dict_state, slot_state) form
    if not isinstance(state, dict) or key not in state:
        raise _fail(f"object built here has no '{key}' in its state", pos)
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
    # some Python releases (3.11.2, Debian 12's) pickle an enum member by name: getattr(inspect._ParameterKind, "KEYWORD_ONLY")
    if (_is_call_of(obj, "builtins", "getattr") and len(obj.args) == 2 and not obj.kwargs
            and _is_global(obj.args[0], "inspect", "_ParameterKind") and obj.args[1] in KIND_NAMES):
        return obj.args[1]
    if isinstance(obj, int) and not isinstance(obj, bool) and 0 <= obj < len(KIND_NAMES):
        return KIND_NAMES[obj]
    raise _fail("parameter kind is not an inspect._ParameterKind of 0..4", pos)


def _parameter(obj: Any, index: int, pos: int) -> ArgSpecParameter:
    if not _is_call_of(obj, "inspect", "Parameter"):
        raise _fail(f"parameter {index} is not an inspect.Parameter", pos)
    if len(obj.args) != 2 or not isinstance(obj.args[0], str):
        raise _fail(f"parameter {index} is not built from (name, kind)", obj.pos)
    return ArgSpecParameter(
        name=obj.args[0],
        kind=_kind(obj.args[1], obj.pos),
        annotation=_annotation(_state(obj, "_annotation", obj.pos)),
        default=_default(_state(obj, "_default", obj.pos)),
    )


def _signature(obj: Any, stop_pos: int) -> ArgSpec:
    if not _is_call_of(obj, "inspect", "Signature"):
        raise _fail("pickled object is not an inspect.Signature", stop_pos)
    if len(obj.args) != 1 or not isinstance(obj.args[0], (tuple, list)):
        raise _fail("inspect.Signature is not built from one tuple of parameters", obj.pos)
    params = obj.args[0]
    if len(params) > MAX_PARAMETERS:
        raise _fail(f"signature claims {len(params)} parameters, more than {MAX_PARAMETERS}", obj.pos)
    parameters = [_parameter(p, i, obj.pos) for i, p in enumerate(params)]
    names = [p.name for p in parameters]
    if len(set(names)) != len(names):
        raise _fail("signature repeats a parameter name", obj.pos)
    returns = _annotation(_state(obj, "_return_annotation", obj.pos))
    return ArgSpec(parameters=parameters, return_annotation=returns)


def decode_args_spec(data: bytes | str) -> ArgSpec:
    """Describe the signature in an args_spec (base64 text, with or without trailing NULs).

    Raises ArgSpecError for anything that is not a plain pickle of an inspect.Signature.
    Never imports or calls anything the pickle names.
    """
    raw = _pickle_bytes(data)
    obj, stop_pos = _run(raw)
    return _signature(obj, stop_pos)
