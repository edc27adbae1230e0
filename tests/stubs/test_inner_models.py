"""The plain CUDA runtime calls the cuda_dialect helpers make inside themselves (stub_models/inner.py): modelled for
showing and matching, never stubbed, and injectable exactly where the helpers' behaviours honour an injection."""
from __future__ import annotations

import inspect
import re

import pytest

from stub_models import INNER_CATALOGUE, INNER_REGISTRY, model_of, recorded_model
from tests.stubs.test_stub_models import allowed_kinds, split_prototype

INNER = [INNER_CATALOGUE[symbol] for symbol in INNER_REGISTRY]


@pytest.mark.parametrize("model", INNER, ids=lambda m: m.symbol)
def test_each_models_the_public_prototype_and_is_shown_not_stubbed(model):
    from emu.stubs.families import owner, provides
    name, params = split_prototype(model.prototype)
    assert name == model.symbol and [p.name for p in model.params()] == [p for _, p in params]
    for field, (ctype, _) in zip(model.params(), params):
        assert field.c.kind in allowed_kinds(ctype)
    assert recorded_model(model.symbol) is model
    # no family answers it: a binary that imports the name (a static-runtime library's PLT) still has it unanswered,
    # its defined functions are not bound by it (emu.binary.bindings asks `provides`), inspect does not call it stubbed
    assert model_of(model.symbol) is None and not provides(model.symbol) and owner(model.symbol) is None


def test_injectable_is_what_the_helper_behaviours_honour():
    from emu.cuda.behaviours import helpers
    honoured = set(re.findall(r'injected\("(\w+)"\)', inspect.getsource(helpers)))
    assert honoured == {m.symbol for m in INNER if m.injectable} == {"cudaGetDeviceCount", "cudaLibraryUnload"}
    recorded = {s for pair in re.findall(r'record\("(\w+)"|_error_text\(guest, "(\w+)"', inspect.getsource(helpers))
                for s in pair if s}
    assert recorded == set(INNER_REGISTRY), "every runtime call a helper records has a model, and no other"


def test_the_text_functions_show_the_text_they_returned():
    from emu.commands.render import show_call
    from emu.run.trace import CallRecord
    call = CallRecord(index=0, entry="tvm_ffi", symbol="cudaGetErrorName", args={"error": 209, "text": "cudaErrorNoKernelImageForDevice"},
                      ret=0x7F0F_F000, caller="cuda_dialect_init_library_once")
    assert show_call(call) == ("cudaGetErrorName(error=209 NO_KERNEL_IMAGE_FOR_DEVICE) -> 'cudaErrorNoKernelImageForDevice'"
                               "  [cuda_dialect_init_library_once]")
    count = CallRecord(index=1, entry="tvm_ffi", symbol="cudaGetDeviceCount", args={"count": 2131753296},
                       outputs={"count": 2}, ret=0, caller="cuda_dialect_init_library_once")
    assert show_call(count, with_caller=False) == "cudaGetDeviceCount() -> 0 SUCCESS  => *count=2"
