"""Stub families: each symbol answered by the family that provides it, each family with its own state per run.

The C library is looked up before CUDA; a family registered from outside (a test's here) answers its
own symbols through the same dispatcher, its state made at its first call and kept for the run.
"""
from __future__ import annotations

import struct
from typing import ClassVar

import pytest
from pydantic import Field
from unicorn import UC_ARCH_X86, UC_MODE_64, Uc

import emu.stubs.families as registry
from emu.arch.x86_64.calling_convention import SYSTEM_V_AMD64
from emu.cuda.config import RuntimeConfig
from emu.cuda.runtime import CudaRuntime
from emu.stubs import dispatch
from emu.stubs.dispatch import StubDispatcher, stub_model, symbol_plan
from emu.stubs.family import StubFamily
from emu.stubs.libc import LIBC_BEHAVIOURS, EntryEnded, LibcState
from stub_models import CATALOGUE, LIBC_REGISTRY, StubCall
from stub_models.fields import Int

PAGE = 0x10000


class Twice(StubCall):
    symbol: ClassVar[str] = "emu_test_twice"
    prototype: ClassVar[str] = "int emu_test_twice(int x)"
    api: ClassVar[str] = "test"
    x: Int = Field(description="the value doubled")


class DoublingFamily(StubFamily):
    name = "test"
    models = {Twice.symbol: Twice}
    behaviours = {Twice.symbol: lambda state, x: 2 * x}

    def new_state(self, dispatcher):
        return {"calls": 0}

    def answer(self, dispatcher, uc, plan, arguments, record):
        state = dispatcher.state(self)
        state["calls"] += 1
        return plan.behaviour(state, arguments.x)


def _run(config: RuntimeConfig | None = None):
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(PAGE, 0x1000)
    returned = []
    dispatcher = StubDispatcher(CudaRuntime(config or RuntimeConfig(), []), lambda _uc, value: returned.append(value),
                                SYSTEM_V_AMD64)
    return uc, dispatcher, returned


def test_each_symbol_belongs_to_one_family_libc_first():
    assert registry.REGISTRY[:2] == ("libc", "cuda")
    for symbol in LIBC_REGISTRY:
        family, model = registry.owner(symbol)
        assert family.name == "libc" and model.symbol == symbol and family.behaviour(symbol) is LIBC_BEHAVIOURS[symbol]
    for symbol in CATALOGUE:
        family, model = registry.owner(symbol)
        assert family.name == "cuda" and model is CATALOGUE[symbol] and stub_model(symbol) is model
    assert registry.owner("qsort") is None and stub_model("qsort") is None
    assert symbol_plan("printf").family.name == "libc" and symbol_plan("printf").behaviour is LIBC_BEHAVIOURS["printf"]
    assert symbol_plan("_cudaGetDevice").family.name == "cuda"


def test_a_registered_family_answers_its_symbol(monkeypatch):
    monkeypatch.setattr(registry, "_FAMILIES", list(registry.families()))     # undone after the test
    monkeypatch.setattr(dispatch, "_PLANS", {})
    family = DoublingFamily()
    registry.register(family)
    uc, dispatcher, returned = _run()
    dispatcher.call(uc, "emu_test_twice", [21], "caller+0x4")
    dispatcher.call(uc, "emu_test_twice", [0xFFFF_FFFF], "caller+0x8")         # an int: -1
    assert returned == [42, -2] and dispatcher.states == {family: {"calls": 2}}
    assert [(c.symbol, c.args, c.ret, c.caller) for c in dispatcher.calls] == [
        ("emu_test_twice", {"x": 21}, 42, "caller+0x4"), ("emu_test_twice", {"x": -1}, -2, "caller+0x8")]


def test_a_libc_and_a_cuda_call_in_one_run_each_get_their_state():
    uc, dispatcher, returned = _run()
    dispatcher.call(uc, "malloc", [24], "f+0x10")
    dispatcher.call(uc, "_cudaGetDevice", [PAGE], "f+0x20")
    libc, cuda = symbol_plan("malloc").family, symbol_plan("_cudaGetDevice").family
    assert set(dispatcher.states) == {libc}                 # the CUDA family reads the runtime the run made
    assert dispatcher.state(cuda) is dispatcher.runtime
    state = dispatcher.states[libc]
    assert isinstance(state, LibcState) and state.convention is SYSTEM_V_AMD64
    assert list(state.heap.blocks) == [dispatcher.calls[0].ret] == [returned[0]]
    assert dispatcher.calls[1].outputs == {"device": 0} and struct.unpack("<i", uc.mem_read(PAGE, 4))[0] == 0


def test_an_injected_error_answers_a_cuda_call_and_counts_only_that_symbol():
    uc, dispatcher, returned = _run(RuntimeConfig(errors=[{"symbol": "_cudaGetDevice", "call": 2, "error": "INVALID_VALUE"}]))
    for _ in range(3):
        dispatcher.call(uc, "_cudaGetDevice", [PAGE], "f")
    dispatcher.call(uc, "malloc", [8], "f")
    assert [(c.ret, c.injected, c.outputs) for c in dispatcher.calls[:3]] == [(0, False, {"device": 0}), (1, True, {}),
                                                                             (0, False, {"device": 0})]
    assert dispatcher.counts == {"_cudaGetDevice": 3}


def test_a_libc_call_that_ends_the_entry_is_still_recorded():
    uc, dispatcher, returned = _run()
    with pytest.raises(EntryEnded, match="called exit\\(3\\)"):
        dispatcher.call(uc, "exit", [3], "f+0x30")
    assert [(c.symbol, c.args, c.ret) for c in dispatcher.calls] == [("exit", {"status": 3}, 0)] and returned == []


def test_each_family_models_derive_from_its_own_base():
    from stub_models import MODELS, CudaCall
    from stub_models.libc import LIBC_MODELS, LibcCall

    assert all(issubclass(model, CudaCall) for model in MODELS)
    assert all(issubclass(model, LibcCall) and issubclass(model, StubCall) and not issubclass(model, CudaCall)
               for model in LIBC_MODELS)
