"""The CUDA family: the wrappers of libcute_dsl_runtime.so, answered by the runtime model (emu.cuda).

Its state is the run's CudaRuntime, which the run makes (its snapshot is the trace's state), read
straight from the dispatcher on every call; an error injected by the scenario (`runtime.errors`)
wins over the behaviour.
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

    def answer(self, dispatcher, uc, plan, arguments, record):
        if dispatcher.injections:
            injected = dispatcher.injected(record["symbol"])
            if injected is not None:
                record["injected"] = True
                return injected
        ret, outputs = BEHAVIOURS.get(record["symbol"], default_behaviour)(dispatcher.runtime, arguments)
        if outputs:
            record["outputs"] = dispatcher.write_outputs(uc, plan, record["args"], outputs)
        return ret


FAMILY = CudaFamily()
