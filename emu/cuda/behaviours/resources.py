"""Behaviours for things created and destroyed: streams, events, allocations.

Every created thing gets a distinct fake handle and is remembered, so destroying an unknown
handle fails the way the runtime does, and a scenario can see what leaked. Device pointers
are handles only: no memory is mapped behind them (host code in the exports never
dereferences them).
"""
from __future__ import annotations

from stub_models.enums import CudaError as E

from ..runtime import CudaRuntime, Result


def creator(kind: str, out: str):
    def create(rt: CudaRuntime, call) -> Result:
        return E.SUCCESS, {out: rt.create(kind, {name: value for name, value in call.arguments().items() if name != out})}
    create.__name__ = f"create_{kind}"
    create.__doc__ = f"A fresh {kind} handle, written through `{out}` and remembered."
    return create


def destroyer(kind: str, param: str, unknown: E):
    def destroy(rt: CudaRuntime, call) -> Result:
        handle = getattr(call, param)
        if handle == 0 and kind in ("device_memory", "host_memory"):
            return E.SUCCESS, {}                       # cudaFree(NULL) is a no-op
        return (E.SUCCESS if rt.destroy(kind, handle) else unknown), {}
    destroy.__name__ = f"destroy_{kind}"
    destroy.__doc__ = f"Forget a {kind} handle; an unknown one fails with {unknown.name}."
    return destroy
