"""Stub dispatch: from a trapped call to a recorded, answered call.

For each call into a stub slot (whose raw arguments the machine read by the calling
convention): decode them by the stub model's markers, apply an injected error or run the runtime
model's behaviour, write out-parameters into emulated memory, set the return register
and append a CallRecord.
"""
from __future__ import annotations

import struct
from typing import Callable

from stub_models import CATALOGUE, CudaCall
from unicorn import Uc, UcError

from .cuda.runtime import BEHAVIOURS, CudaRuntime, default_behaviour
from .fast_uc import mem_read, mem_write
from .structs import DECODERS
from .trace import CallRecord, fast_model

_PACK = {"i32": "<i", "u32": "<I", "i64": "<q", "u64": "<Q", "size": "<Q", "handle": "<Q"}
_MASK = {"i32": 0xFFFFFFFF, "u32": 0xFFFFFFFF, "i64": (1 << 64) - 1, "u64": (1 << 64) - 1,
         "size": (1 << 64) - 1, "handle": (1 << 64) - 1}
MAX_CSTRING = 4096


class StubFailure(Exception):
    """A stub could not do its job (an unreadable argument, an unwritable out-pointer)."""


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
    """What decoding a model's arguments needs, worked out once per model (the hot path runs it)."""

    __slots__ = ("params", "fields_set", "pointees")

    def __init__(self, model: type[CudaCall]):
        self.params = tuple((p.name, p.c.kind, p.c.struct) for p in model.params())
        self.fields_set = frozenset(name for name, _, _ in self.params)
        self.pointees = {p.name: p.c.pointee or "u64" for p in model.params() if p.c.kind == "out"}


_PLANS: dict[type, _Plan] = {}


def plan_of(model: type[CudaCall]) -> _Plan:
    plan = _PLANS.get(model)
    if plan is None:
        plan = _PLANS[model] = _Plan(model)
    return plan


def decode_call(model: type[CudaCall], raw: list[int], uc: Uc) -> tuple[CudaCall, dict]:
    """The model instance (for behaviours) and the JSON-ready arguments (for the trace).

    Both share one dict: arguments are decoded values that neither side changes.
    """
    plan = plan_of(model)
    values = {}
    for (name, kind, struct_name), value in zip(plan.params, raw):
        if kind == "i32":
            value &= 0xFFFFFFFF
            if value & 0x80000000:
                value -= 1 << 32
        elif kind == "u32":
            value &= 0xFFFFFFFF
        elif kind == "i64":
            if value & (1 << 63):
                value -= 1 << 64
        elif kind == "cstr":
            value = read_c_string(uc, value)
        elif kind == "struct":
            decoder = DECODERS.get(struct_name or "")
            if decoder is not None and value:
                try:
                    value = decoder(lambda a, n: mem_read(uc, a, n), value)
                except (UcError, ValueError) as error:
                    raise StubFailure(f"cannot read {struct_name} at {value:#x} for {name}: {error}") from None
        values[name] = value
    instance = model.__new__(model)
    object.__setattr__(instance, "__dict__", values)
    object.__setattr__(instance, "__pydantic_fields_set__", set(plan.fields_set))
    object.__setattr__(instance, "__pydantic_extra__", None)
    object.__setattr__(instance, "__pydantic_private__", None)
    return instance, values


class StubDispatcher:
    """Answers the calls of one object run; holds the runtime model and the call log."""

    def __init__(self, runtime: CudaRuntime, set_return: Callable[[Uc, int], None]):
        self.runtime = runtime
        self.set_return = set_return
        self.calls: list[CallRecord] = []
        self.counts: dict[str, int] = {}
        self.entry = ""
        config = runtime.config
        self._injections = {}
        for injected in config.errors:
            self._injections.setdefault(injected.symbol, []).append(injected)

    def known(self, symbol: str) -> bool:
        return symbol in CATALOGUE

    def arity(self, symbol: str) -> int:
        """How many arguments the symbol's stub model takes (0 for a symbol without one)."""
        model = CATALOGUE.get(symbol)
        return len(plan_of(model).params) if model is not None else 0

    def call(self, uc: Uc, symbol: str, raw: list[int], caller: str) -> None:
        """Answer one call whose raw arguments the machine read by the calling convention."""
        model = CATALOGUE[symbol]
        count = self.counts[symbol] = self.counts.get(symbol, 0) + 1
        call, shown = decode_call(model, raw, uc)
        injected = self._injected(symbol, count)
        if injected is not None:
            ret, outputs = injected, {}
        else:
            ret, outputs = self._behave(symbol, call)
        written = self._write_outputs(uc, model, call, outputs) if ret == 0 or outputs else {}
        self.set_return(uc, ret)
        self.calls.append(fast_model(CallRecord, dict(
            index=len(self.calls), entry=self.entry, symbol=symbol, args=shown, outputs=written,
            ret=int(ret), injected=injected is not None, caller=caller)))

    def call_missing(self, uc: Uc, symbol: str, caller: str) -> None:
        """A call to an undefined symbol without a model, under the return_zero policy."""
        self.set_return(uc, 0)
        self.calls.append(fast_model(CallRecord, dict(index=len(self.calls), entry=self.entry, symbol=symbol,
                                                      args={}, outputs={}, ret=0, injected=False, caller=caller)))

    def _injected(self, symbol: str, count: int) -> int | None:
        for injected in self._injections.get(symbol, ()):
            if count == injected.call or (injected.every and count >= injected.call):
                return injected.error
        return None

    def _behave(self, symbol: str, call: CudaCall):
        behaviour = BEHAVIOURS.get(symbol, default_behaviour)
        return behaviour(self.runtime, call)

    def _write_outputs(self, uc: Uc, model: type[CudaCall], call: CudaCall, outputs: dict[str, int]) -> dict[str, int]:
        written = {}
        pointees = plan_of(model).pointees
        for name, value in outputs.items():
            pointer = getattr(call, name)
            if not pointer:
                continue
            pointee = pointees[name]
            try:
                mem_write(uc, pointer, struct.pack(_PACK[pointee], value & _MASK[pointee] if pointee[0] != "i" else value))
            except UcError:
                raise StubFailure(f"{model.symbol} cannot write {name} through {pointer:#x}: unmapped or protected memory") from None
            written[name] = value
        return written
