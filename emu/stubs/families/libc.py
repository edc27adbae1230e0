"""The C library family: what DSL host code calls from libc (emu.stubs.libc), acting on emulated memory.

Its state (the heap, the calling convention variadic arguments are read by) is made at a run's
first libc call; most exports make none.  A call that ends the entry (abort, exit) is still
recorded.  Its text, if it writes any, joins the recorded arguments.
"""
from __future__ import annotations

from stub_models import LIBC_CATALOGUE

from ..family import StubFamily
from ..libc import LIBC_BEHAVIOURS, LibcState


class LibcFamily(StubFamily):
    name = "libc"
    models = LIBC_CATALOGUE
    behaviours = LIBC_BEHAVIOURS
    traces_failed_calls = True

    def new_state(self, dispatcher):
        return LibcState(dispatcher.convention)

    def answer(self, dispatcher, uc, plan, arguments, record):
        ret, extra = plan.behaviour(dispatcher.state(self), uc, arguments, plan.arity)
        if extra:                       # record["args"] is the call model's own dict: not changed
            record["args"] = {**record["args"], **extra}
        return ret


FAMILY = LibcFamily()
