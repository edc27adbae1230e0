"""An inert unpickler: the opcodes of a pickle walked on a symbolic stack machine, nothing imported or run.

`pickle.loads` would import and call whatever a pickle names, so a crafted object could run
code.  Here `pickletools.genops` yields each opcode and a tiny machine (the stack, metastack
and memo of pickle's Unpickler) executes it symbolically: GLOBAL/STACK_GLOBAL yield names
only, REDUCE/NEWOBJ/BUILD yield inert nodes, with bounds on size, opcodes and stack depth.
emu.dsl.args_spec.reader reads the resulting tree.
"""
from __future__ import annotations

import _compat_pickle
import base64
import binascii
import io
import pickletools
from dataclasses import dataclass, field
from typing import Any

MAX_PICKLE_BYTES = 1 << 20
MAX_OPS = 100_000
MAX_STACK = 10_000


class ArgSpecError(ValueError):
    """The args_spec is not a readable pickle of an inspect.Signature (or FullArgSpec)."""


@dataclass(frozen=True)
class Global:
    """A name from GLOBAL/STACK_GLOBAL; never resolved."""
    module: str
    name: str

    def dotted(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass(eq=False)
class Call:
    """A REDUCE/NEWOBJ/INST/OBJ result: `func(*args)`, plus any BUILD state; never evaluated."""
    func: Any
    args: tuple
    pos: int
    state: Any = None
    kwargs: dict = field(default_factory=dict)


class _Mark:
    pass


_MARK = _Mark()
_SCALARS = (str, int, float, bool, type(None), bytes, Global)


def fail(what: str, pos: int, detail: str = "") -> ArgSpecError:
    return ArgSpecError(f"{what} at byte {pos} of the args_spec pickle{f' ({detail})' if detail else ''}.")


class _Machine:
    """The symbolic unpickler: the stack/metastack/memo of pickle's Unpickler, with inert values."""

    def __init__(self) -> None:
        self.stack: list = []
        self.meta: list[list] = []
        self.memo: dict[int, Any] = {}
        self.pos = 0
        self.proto = 0

    def global_name(self, module: str, name: str) -> Global:
        """A name only; protocols < 3 spell Python 2 modules, which Unpickler maps (fix_imports)."""
        if self.proto < 3:
            module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
            module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        return Global(module, name)

    def push(self, obj: Any) -> None:
        if len(self.stack) + len(self.meta) >= MAX_STACK:
            raise fail(f"stack deeper than {MAX_STACK} entries", self.pos)
        self.stack.append(obj)

    def pop(self) -> Any:
        if not self.stack:
            raise fail("stack underflow", self.pos)
        return self.stack.pop()

    def top(self) -> Any:
        if not self.stack:
            raise fail("stack underflow", self.pos)
        return self.stack[-1]

    def pop_mark(self) -> list:
        if not self.meta:
            raise fail("no MARK to pop to", self.pos)
        items, self.stack = self.stack, self.meta.pop()
        return items

    def scalar(self, obj: Any, what: str) -> Any:
        if not isinstance(obj, _SCALARS):
            raise fail(f"{what} of type {type(obj).__name__} is not a plain scalar", self.pos)
        return obj

    def name(self, obj: Any) -> str:
        if not isinstance(obj, str):
            raise fail("STACK_GLOBAL operand is not a string", self.pos)
        return obj

    def step(self, op: str, arg: Any) -> None:
        handler = _HANDLERS.get(op)
        if handler is None:
            raise fail(f"unsupported pickle opcode {op}", self.pos)
        handler(self, arg)


def _set_items(m: _Machine, target: Any, items: list) -> None:
    if not isinstance(target, dict):
        raise fail("SETITEM(S) on something that is not a dict", m.pos)
    if len(items) % 2:
        raise fail("odd number of items for a dict", m.pos)
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
        raise fail("APPEND(S) on something that is not a list", m.pos)
    target.extend(items)


def _add_items(m: _Machine, items: list) -> None:
    target = m.top()
    if not isinstance(target, set):
        raise fail("ADDITEMS on something that is not a set", m.pos)
    target.update(m.scalar(i, "set item") for i in items)


def _reduce(m: _Machine, _arg: Any) -> None:
    args = m.pop()
    func = m.pop()
    if not isinstance(args, tuple):
        raise fail("REDUCE arguments are not a tuple", m.pos)
    m.push(Call(func, args, m.pos))


def _newobj_ex(m: _Machine, _arg: Any) -> None:
    kwargs, args, cls = m.pop(), m.pop(), m.pop()
    if not isinstance(args, tuple) or not isinstance(kwargs, dict):
        raise fail("NEWOBJ_EX operands are not a tuple and a dict", m.pos)
    m.push(Call(cls, args, m.pos, kwargs=kwargs))


def _obj(m: _Machine, _arg: Any) -> None:
    items = m.pop_mark()
    if not items:
        raise fail("OBJ without a class", m.pos)
    m.push(Call(items[0], tuple(items[1:]), m.pos))


def _build(m: _Machine, _arg: Any) -> None:
    state = m.pop()
    target = m.top()
    if not isinstance(target, Call):
        raise fail("BUILD on something that is not a constructed object", m.pos)
    if isinstance(target.state, dict) and isinstance(state, dict):
        target.state.update(state)
    else:
        target.state = state


def _memo_get(m: _Machine, key: Any) -> None:
    if key not in m.memo:
        raise fail(f"memo entry {key} read before it was written", m.pos)
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
    m.push(Call(m.global_name(module, name), tuple(m.pop_mark()), m.pos))


def _proto(m: _Machine, arg: int) -> None:
    if not 0 <= arg <= 5:
        raise fail(f"unsupported pickle protocol {arg}", m.pos)
    m.proto = arg


def _mark(m: _Machine, _arg: Any) -> None:
    if len(m.stack) + len(m.meta) >= MAX_STACK:
        raise fail(f"stack deeper than {MAX_STACK} entries", m.pos)
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


def pickle_bytes(data: bytes | str) -> bytes:
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


def run(raw: bytes) -> tuple[Any, int]:
    """Execute the opcodes symbolically; returns the object STOP returns and STOP's offset."""
    machine = _Machine()
    stream = io.BytesIO(raw)
    ops = pickletools.genops(stream)
    for _ in range(MAX_OPS):
        machine.pos = stream.tell()
        try:
            opcode, arg, _ = next(ops)
        except StopIteration:
            raise fail("pickle ends without a STOP opcode", machine.pos) from None
        except (ValueError, OverflowError, UnicodeDecodeError, EOFError, ArithmeticError) as exc:
            if machine.pos == len(raw):
                raise fail("pickle ends without a STOP opcode", machine.pos) from None
            raise fail("undecodable or truncated opcode", machine.pos, _short(exc)) from None
        if opcode.name == "STOP":
            if stream.tell() != len(raw):
                raise fail(f"{len(raw) - stream.tell()} trailing bytes after STOP", stream.tell())
            left = len(machine.stack) + sum(map(len, machine.meta)) + len(machine.meta)
            if left != 1:
                raise fail(f"{left} values left on the stack at STOP", machine.pos)
            return machine.pop(), machine.pos
        machine.step(opcode.name, arg)
    raise fail(f"more than {MAX_OPS} opcodes", machine.pos)


def _short(exc: BaseException) -> str:
    text = str(exc).split("\n", 1)[0]
    return text if len(text) <= 120 else text[:117] + "..."
