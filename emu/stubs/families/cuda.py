"""The CUDA family: the wrappers of libcute_dsl_runtime.so, answered by the runtime model (emu.cuda).

Its state is the run's CudaRuntime, which the run makes (its snapshot is the trace's state);
an error injected by the scenario (`runtime.errors`) wins over the behaviour.
"""
from __future__ import annotations

from stub_models import CATALOGUE

from ...cuda.behaviours import BEHAVIOURS, default_behaviour
from ..family import StubFamily


class CudaFamily(StubFamily):
    name = "cuda"
    models = CATALOGUE
    behaviours = BEHAVIOURS

    def behaviour(self, symbol):
        return None      # looked up per call (answer): a patched BEHAVIOURS takes effect at once

    def new_state(self, dispatcher):
        return dispatcher.runtime

    def answer(self, dispatcher, state, uc, symbol, plan, arguments, shown):
        injected = dispatcher.injected(symbol) if dispatcher.injections else None
        if injected is not None:
            return injected, shown, {}, True
        ret, outputs = BEHAVIOURS.get(symbol, default_behaviour)(state, arguments)
        return ret, shown, dispatcher.write_outputs(uc, plan, shown, outputs) if outputs else {}, False


FAMILY = CudaFamily()
