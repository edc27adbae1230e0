"""What a stub family is: the functions one library provides, answered by their models, their
behaviours and the family's own state for a run.

The dispatcher (emu.stubs.dispatch) finds a symbol's family once, when it builds the symbol's
plan, and hands each call to that family with its state for the run, made at the family's first
call.  The families are listed in emu.stubs.families.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping

from unicorn import Uc

if TYPE_CHECKING:
    from stub_models import StubCall

    from .dispatch import StubDispatcher, _Plan

# The call's record as the dispatcher starts it (emu.run.trace.CallRecord's fields: index, entry, symbol,
# args, outputs, ret, injected, caller): a family's answer fills in what it changes (`outputs` it wrote,
# `injected`, `args` with text it read) and returns the call's return value.
Record = dict[str, Any]


class StubFamily(ABC):
    """One library's stubs: its models and behaviours by symbol, its per-run state, how it answers."""

    name: ClassVar[str]
    models: ClassVar[Mapping[str, type[StubCall]]]       # by symbol; a look-up builds only that model
    behaviours: ClassVar[Mapping[str, Callable]]         # by symbol
    traces_failed_calls: ClassVar[bool] = False          # a call whose behaviour fails is still recorded

    def model(self, symbol: str) -> type[StubCall] | None:
        """The symbol's model when this family provides the symbol."""
        return self.models.get(symbol)

    def behaviour(self, symbol: str) -> Callable | None:
        """What the symbol's plan keeps for answering it (found once per symbol, never per call)."""
        return self.behaviours.get(symbol)

    @abstractmethod
    def new_state(self, dispatcher: StubDispatcher) -> Any:
        """The family's state for one object run, made when the family first asks for it (dispatcher.state)."""

    @abstractmethod
    def answer(self, dispatcher: StubDispatcher, uc: Uc, plan: _Plan, arguments: StubCall, record: Record) -> int:
        """Answer one call, whose arguments its plan decoded (`record["args"]`: the same values, for the trace),
        filling in the record; its state for the run is `dispatcher.state(self)`.  Every stub call runs
        this: it takes no more than it needs, and the record is filled in place, never copied."""
