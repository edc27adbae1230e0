"""What the machine knows of the calls it traps: a table of bound addresses and a dispatcher.

The machine is given the table, slot address -> (symbol, target), and a `Dispatcher`
(emu.stubs.dispatch's in a run).  At a call it reads `target.arity` arguments by the
calling convention and hands them over, with the symbol, which it uses only as a name in
faults; a target of None (no model) goes to `call_missing`.  A StubFailure the dispatcher
raises stops the entry with a fault.  `call` returns None, or, for a stub that calls guest code,
the steps of its answer (emu.emulator.guest_calls), which the machine runs.  So the emulator knows no symbol, model or CUDA rule.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .guest_calls import Steps


class Target(Protocol):
    arity: int           # integer arguments the call's answer reads


# slot address -> (symbol, what answers it, or None where nothing models the symbol)
BindingTable = dict[int, tuple[str, Any]]


class Dispatcher(Protocol):
    def call(self, uc, symbol: str, raw: tuple[int, ...], caller: str, target: Any) -> Steps | None:
        """Answer a call to `symbol` (`raw`: its arguments; `caller`: where it returns to, located); None when
        answered, else the steps of an answer that calls guest code."""

    def call_missing(self, uc, symbol: str, caller: str) -> None:
        """Answer a call to a symbol nothing models, or raise StubStop to end the entry."""
