"""Stub dispatch: from a trapped call to a recorded, answered call.

For each call into a stub slot (whose raw arguments the machine read by the calling
convention): decode them by the stub model's markers, hand them to the family that provides the
symbol (emu.stubs.families: the C library, CUDA) with its state for the run, set the return
register and append a CallRecord.
"""
from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Callable

from stub_models import StubCall
from unicorn import Uc, UcError

from ..errors import StubFailure, StubStop
from ..emulator.backed_regions import backed_region
from ..emulator.guest_calls import Steps, StubLocals
from ..emulator.unicorn_c import mem_read, mem_write, reg_read64
from ..support.hotpath import generated_function, record_lines, record_names, records_factory
from ..binary.memory_map import stub_address
from ..run.trace import CallRecord
from .cuda_structs import DECODERS
from .families import owner

if TYPE_CHECKING:
    from ..arch.base import CallingConvention
    from ..cuda.runtime import CudaRuntime
    from .family import StubFamily

# How an out-parameter's pointee is stored: its packing, and the mask an unsigned one is cut to
# (a signed one is packed as it is: struct refuses a value out of its range).
_STORE = {"i32": ("<i", None), "u32": ("<I", 0xFFFFFFFF), "i64": ("<q", None), "u64": ("<Q", (1 << 64) - 1),
          "size": ("<Q", (1 << 64) - 1), "handle": ("<Q", (1 << 64) - 1)}
MAX_CSTRING = 4096


def stub_model(symbol: str) -> type[StubCall] | None:
    """The model of a stubbed symbol, from the family that provides it (emu.stubs.families)."""
    found = owner(symbol)
    return found[1] if found is not None else None


def read_c_string(uc: Uc, address: int) -> str | None:
    if address == 0:
        return None
    chunks = []
    for offset in range(0, MAX_CSTRING, 64):
        try:
            chunk = mem_read(uc, address + offset, 64)
        except UcError:
            chunk = b""
            for i in range(64):          # the string may end just before unmapped memory
                try:
                    chunk += mem_read(uc, address + offset + i, 1)
                except UcError:
                    raise StubFailure(f"C string at {address:#x} runs into unmapped memory at {address + offset + i:#x}") from None
                if chunk.endswith(b"\0"):
                    break
        end = chunk.find(b"\0")
        if end >= 0:
            chunks.append(chunk[:end])
            return b"".join(chunks).decode("utf-8", "replace")
        chunks.append(chunk)
    raise StubFailure(f"C string at {address:#x} is longer than {MAX_CSTRING} bytes")


class _Plan:
    """What answering one symbol needs, worked out once per model (the hot path runs it)."""

    __slots__ = ("symbol", "model", "params", "arity", "stores", "decode", "family", "answer", "behaviour", "calls_back",
                 "respond")

    def __init__(self, symbol: str, model: type[StubCall], family: StubFamily):
        self.symbol = symbol
        self.model = model
        self.params = tuple((p.name, p.c.kind, p.c.struct) for p in model.params())
        self.arity = len(self.params)
        self.stores = {p.name: _store(p.c.pointee or "u64") for p in model.params() if p.c.kind == "out"}
        self.decode = _compile_decoder(self.params, model)
        self.family = family                            # who answers the symbol's calls
        self.answer = family.answer                     # bound once: the hot path calls it
        self.behaviour = family.behaviour(model.symbol)
        self.calls_back = getattr(model, "calls_back", False)    # its behaviour runs guest code: see _steps
        self.respond = None if self.calls_back else _compile_responder(self)


# How each argument kind turns a raw 64-bit register or stack value into its JSON value;
# kinds not listed (pointers, handles, sizes, out-parameters) pass through unchanged.
_CONVERSIONS = {
    "i32": "((({v}) & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000",
    "u32": "({v}) & 0xFFFFFFFF",
    "i64": "(({v}) ^ 0x8000000000000000) - 0x8000000000000000",
    "cstr": "read_c_string(uc, {v})",
    "struct": "read_struct({name!r}, {struct!r}, {v}, uc)",
}


# Kinds whose value reads guest memory: a decode of them depends on more than the raw words.
_READS_MEMORY = frozenset({"cstr", "struct"})
DECODED_MAX = 1024         # decodes kept per symbol (raw words differ from object to object; the set is bounded)


def _compile_decoder(params: tuple[tuple[str, str, str | None], ...], model: type[StubCall] | None = None):
    """`decode(raw, uc) -> {name: value}` for one model, as straight-line code.

    A stub call decodes its arguments on every call; one generated expression per
    argument (see hotpath) costs a third of a loop that tests each argument's kind.
    Given the model, decode returns `(arguments, values)` instead (`_decode_lines`).
    """
    lines, names = _decode_lines(params, model)
    return generated_function("decode", ("raw", "uc"), (*lines, "return arguments, values" if model else "return values"),
                              names, f"decoder {', '.join(n for n, _, _ in params)}")


def _decode_lines(params: tuple[tuple[str, str, str | None], ...], model: type[StubCall] | None) -> tuple[list[str], dict]:
    """Lines of generated code that set `values` (the JSON-ready arguments for the trace) from `raw`, and, given
    the model, `arguments`: the model instance for behaviours, built without validation, inline
    (hotpath.record_lines: the values are the decoder's own, and call models are frozen).

    Where no argument reads guest memory the decode depends on the raw words alone, and the same words come
    back run after run (stack addresses, handles, enums): the instance is then kept by its words (a frozen
    model, only read by behaviours) and each call gets a fresh copy of its values for the trace.  Where one
    does, the instance and the trace share the one dict (decoded values neither side changes).
    """
    items = []
    for index, (name, kind, struct_name) in enumerate(params):
        template = _CONVERSIONS.get(kind, "{v}")
        items.append(f"{name!r}: " + template.format(v=f"raw[{index}]", name=name, struct=struct_name))
    values = "values = {" + ", ".join(items) + "}"
    names = {"read_c_string": read_c_string, "read_struct": _read_struct}
    if model is None:
        return [values], names
    names.update(record_names(model))
    if any(kind in _READS_MEMORY for _, kind, _ in params):
        return [values, *record_lines("arguments", "values")], names
    names.update(decoded={}, decoded_max=DECODED_MAX, copy=dict.copy, as_tuple=tuple)
    return ["key = raw if type(raw) is tuple else as_tuple(raw)",
            "arguments = decoded.get(key)",
            "if arguments is None:",
            f"    {values}",
            *(f"    {line}" for line in record_lines("arguments", "values")),
            "    if len(decoded) >= decoded_max:",
            "        decoded.clear()",
            "    decoded[key] = arguments",
            "values = copy(arguments.__dict__)"], names


def _compile_responder(plan: _Plan):
    """`respond(dispatcher, uc, raw, caller)`: one call of the plan's symbol answered and recorded
    (StubDispatcher.call), as one generated function: the decode's lines, the record's dict, the family's
    answer, the return value.  A stub call costs the hook a few microseconds; each call saved here is a
    tenth of one."""
    lines, names = _decode_lines(plan.params, plan.model)
    names.update(plan=plan, answer=plan.answer, StubFailure=StubFailure, as_int=int)
    body = [*lines,
            "pending = dispatcher._pending",
            f"record = {{'index': len(dispatcher._made) + len(pending), 'entry': dispatcher.entry, 'symbol': {plan.symbol!r}, "
            "'args': values, 'outputs': {}, 'ret': 0, 'injected': False, 'caller': caller, 'inner_calls': 0}",
            "try:",
            "    ret = answer(dispatcher, uc, plan, arguments, record)",
            "except StubFailure:",       # abort/exit: the call is in the trace (returning 0), then the entry ends
            *(["    pending.append(record)"] if plan.family.traces_failed_calls else []),
            "    raise",
            "dispatcher.set_return(uc, ret)",
            "record['ret'] = as_int(ret)",
            "pending.append(record)"]
    return generated_function("respond", ("dispatcher", "uc", "raw", "caller"), body, names, f"stub {plan.symbol}")


def _store(pointee: str) -> tuple[struct.Struct, int | None]:
    fmt, mask = _STORE[pointee]
    return struct.Struct(fmt), mask


def _read_struct(name: str, struct_name: str | None, value: int, uc: Uc):
    decoder = DECODERS.get(struct_name or "")
    if decoder is None or not value:
        return value
    try:
        return decoder(lambda a, n: mem_read(uc, a, n), value)
    except (UcError, ValueError) as error:
        raise StubFailure(f"cannot read {struct_name} at {value:#x} for {name}: {error}") from None


_PLANS: dict[str, _Plan] = {}


def symbol_plan(symbol: str) -> _Plan | None:
    """The plan for a stubbed symbol (built on first use), or None for a symbol without a model."""
    plan = _PLANS.get(symbol)
    if plan is None:
        found = owner(symbol)
        if found is None:
            return None              # not cached: object files may name any number of these
        family, model = found
        plan = _PLANS[symbol] = _Plan(symbol, model, family)
    return plan


_SLOT_PLANS: dict[tuple[str, ...], dict[int, tuple[str, _Plan | None]]] = {}
_SLOT_PLANS_MAX = 256


def slot_plans(stub_symbols: list[str]) -> dict[int, tuple[str, _Plan | None]]:
    """(symbol, plan or None) by the address of each stub slot but the sentinel's.

    Keyed by the exact slot address, so that one lookup both finds a call's plan and
    tells a jump into the middle of a slot (no entry) from a call.  Exports of one DSL
    version import the same set of wrappers, so the table is kept per set of names
    (bounded: object files may name anything).
    """
    key = tuple(stub_symbols)
    plans = _SLOT_PLANS.get(key)
    if plans is None:
        if len(_SLOT_PLANS) >= _SLOT_PLANS_MAX:
            _SLOT_PLANS.clear()
        plans = _SLOT_PLANS[key] = {stub_address(slot): (name, symbol_plan(name))
                                    for slot, name in enumerate(key) if slot}
    return plans


# CallRecords of the stub calls, from values the dispatcher made itself: unvalidated (see hotpath).
_records = records_factory(CallRecord)


class StubDispatcher:
    """Answers the calls of one object run; holds each family's state for the run and the call log.

    A stub call's record is kept as the dict of its fields (`_pending`) while the guest runs, and becomes
    its CallRecord (built around that very dict, see hotpath) when the log is read (`calls`): the hook
    then only fills in a dict, and the records are made together, out of the emulation's way.
    """

    def __init__(self, runtime: CudaRuntime, set_return: Callable[[Uc, int], None], convention: CallingConvention):
        self.runtime = runtime
        self.set_return = set_return
        self.convention = convention     # where a variadic call's further arguments are
        self._made: list[CallRecord] = []
        self._pending: list[dict] = []   # fields of the calls recorded since the log was last read, in order
        self.counts: dict[str, int] = {}
        self.entry = ""
        self.states: dict[StubFamily, object] = {}      # each family's, made at its first call
        self.injections: dict[str, list] = {}
        for injected in runtime.config.errors:
            self.injections.setdefault(injected.symbol, []).append(injected)

    @property
    def calls(self) -> list[CallRecord]:
        """Every call recorded so far, in order (the list the run's ObjectRun holds)."""
        if self._pending:
            self._made.extend(_records(self._pending))
            self._pending.clear()
        return self._made

    def recorded(self) -> int:
        """How many calls are recorded so far (the next call's index)."""
        return len(self._made) + len(self._pending)

    def record(self, fields: dict) -> None:
        """Add a call's record, every CallRecord field given (a call's index is `recorded()` when it is made)."""
        self._pending.append(fields)

    def call(self, uc: Uc, symbol: str, raw: list[int], caller: str, plan: _Plan | None = None) -> None:
        """Answer one call whose raw arguments the machine read by the calling convention: its family fills in
        the record (emu.stubs.family), the return value goes back, the record joins the trace.  A stub that calls
        guest code is answered by the steps returned instead (`_steps`); None otherwise."""
        plan = plan or symbol_plan(symbol)
        if plan.calls_back:
            return self._steps(uc, symbol, caller, plan, *plan.decode(raw, uc),
                               _StubGuest(uc, self, symbol, reg_read64(uc, self.convention.stack_pointer)))
        return plan.respond(self, uc, raw, caller)      # decode, record, the family's answer (_compile_responder)

    def _steps(self, uc: Uc, symbol: str, caller: str, plan: _Plan, arguments: StubCall, shown: dict, guest: _StubGuest) -> Steps:
        """The answer of a stub that calls guest code (the model's `calls_back`), as steps the machine runs
        (emu.emulator.guest_calls): its family's behaviour for the symbol is a generator taking the guest, which
        yields each GuestCall and returns `(error, outputs)`.  An injected error answers at once, calling nothing.
        The call is recorded when it returns, after the calls made inside it (`inner_calls` of them), as the native
        runs print it."""
        record = {"index": 0, "entry": self.entry, "symbol": symbol, "args": shown, "outputs": {},
                  "ret": 0, "injected": False, "caller": caller, "inner_calls": 0}
        injected = self.injected(symbol) if self.injections else None
        start = self.recorded()
        if injected is not None:
            record["injected"], ret = True, injected
        else:
            ret, outputs = yield from plan.family.behaviours[symbol](self.state(plan.family), arguments, guest)
            if outputs:
                record["outputs"] = self.write_outputs(uc, plan, shown, outputs)
            if guest.told:
                record["args"] = {**shown, **guest.told}
        self.set_return(uc, ret)
        record["ret"], record["index"] = int(ret), self.recorded()
        record["inner_calls"] = record["index"] - start
        self.record(record)

    def state(self, family: StubFamily):
        """`family`'s state for this run, made at its first call that asks."""
        found = self.states.get(family)
        if found is None:
            found = self.states[family] = family.new_state(self)
        return found

    def call_missing(self, uc: Uc, symbol: str, caller: str) -> None:
        """A call to an undefined symbol without a model: 0 under the return_zero policy, else the entry stops."""
        if self.runtime.config.missing_symbols != "return_zero":
            raise StubStop("missing_stub", f"{caller} calls {symbol}, an undefined symbol emu has no stub for; "
                           "set runtime.missing_symbols: return_zero in the scenario to let it return 0")
        self.set_return(uc, 0)
        self.record(dict(index=self.recorded(), entry=self.entry, symbol=symbol,
                         args={}, outputs={}, ret=0, injected=False, caller=caller, inner_calls=0))

    def injected(self, symbol: str) -> int | None:
        """The error injected into this call of `symbol` (scenario runtime.errors), counting it."""
        count = self.counts[symbol] = self.counts.get(symbol, 0) + 1
        for injected in self.injections.get(symbol, ()):
            if count == injected.call or (injected.every and count >= injected.call):
                return injected.error
        return None

    def write_outputs(self, uc: Uc, plan: _Plan, shown: dict, outputs: dict[str, int]) -> dict[str, int]:
        """Store each output through its out-parameter (`shown` holds the pointers as the call passed them)."""
        written = {}
        stores = plan.stores
        for name, value in outputs.items():
            pointer = shown[name]
            if not pointer:
                continue
            layout, mask = stores[name]
            stored = value & mask if mask else value
            region = backed_region(uc, pointer, layout.size)     # mostly the stack: packed in place
            if region is not None:
                layout.pack_into(region.view, pointer - region.address, stored)
            else:
                try:
                    mem_write(uc, pointer, layout.pack(stored))
                except UcError:
                    raise StubFailure(f"{plan.model.symbol} cannot write {name} through {pointer:#x}: unmapped or protected memory") from None
            written[name] = value
        return written


class _StubGuest(StubLocals):
    """What a calling-back behaviour reaches: guest memory and its locals, calls into the guest, and the
    plain runtime calls it makes itself (recorded with the stub as their caller)."""

    def __init__(self, uc: Uc, dispatcher: StubDispatcher, symbol: str, stack_pointer: int):
        super().__init__(uc, stack_pointer, symbol)
        self.dispatcher = dispatcher
        self.told: dict[str, str] = {}      # what the call's record shows beside its arguments (printf's text, say)

    def tell(self, name: str, text: str) -> None:
        """Show `text` as `name` beside the call's arguments in its record (the error a helper raised)."""
        self.told[name] = text

    def injected(self, symbol: str) -> int | None:
        """The error injected into this inner call of `symbol` (scenario runtime.errors), counting it."""
        return self.dispatcher.injected(symbol) if self.dispatcher.injections else None

    def record(self, symbol: str, args: dict, ret: int, outputs: dict[str, int] | None = None, injected: bool = False) -> None:
        """Record a call the stub made inside itself, as a call from the stub."""
        dispatcher = self.dispatcher
        dispatcher.record(dict(index=dispatcher.recorded(), entry=dispatcher.entry, symbol=symbol, args=args,
                               outputs=outputs or {}, ret=int(ret), injected=injected, caller=self.symbol, inner_calls=0))
