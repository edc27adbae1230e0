"""The CUDA model against the raw H200 measurements, read straight from tests/data/facts/h200-probe.jsonl.

`h200-probe.cu` (in the project's shared facts folder) loaded carveout_25.o through its header on a real
H200, set attribute 9 to 25, then tried 13 (attribute, value) pairs in order, each with
cudaKernelSetAttributeForDevice(device 0) and then cudaFuncSetAttribute, and read the kernel's attributes
back ("after_tries"), then launched through the wrapper.  The same sequence is played here through
emu's stubs and runtime (never through a profile built from these facts), and every number must agree:
each result code in order, and the attributes the kernel holds at the end.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from emu.cuda.config import RuntimeConfig
from emu.cuda.behaviours import BEHAVIOURS
from emu.cuda.runtime import CudaRuntime
from emu.dsl.entries import EntrySpec
from emu.run.session import run_object
from emu.support.hotpath import build_record
from stub_models import CATALOGUE

ROOT = Path(__file__).resolve().parents[2]
FACTS = [json.loads(line) for line in (ROOT / "tests" / "data" / "facts" / "h200-probe.jsonl").read_text().splitlines()
         if line.strip()]
KERNEL = "kernel_cutlass_rotate_tensorptrf32gmemalign16o1281_0"
SEED = ROOT / "tests" / "fixtures" / "cutlass-dsl-4.8.0" / "x86_64" / "carveout_25.o"


def _fact(key: str) -> dict:
    return next(row for row in FACTS if key in row or row.get("when") == key)


def _call(runtime: CudaRuntime, symbol: str, **args) -> int:
    return int(BEHAVIOURS[symbol](runtime, build_record(CATALOGUE[symbol], args))[0])


def _held(runtime: CudaRuntime, handle: int, row: dict) -> dict[str, int]:
    attributes = runtime.kernels[handle].attributes[row["device"]]
    return {key: attributes[int(key)] for key in row if key.isdigit()}


@pytest.mark.oracle("H200 facts")
def test_the_probe_sequence_gives_the_h200_result_codes_and_final_state():
    runtime = CudaRuntime(RuntimeConfig(device_count=_fact("device_count")["device_count"]), [KERNEL])
    handle = runtime.config.first_kernel_handle
    # Kernel_Module_Load's loader on device 0, as the object does it (FIELD_NOTES section 2)
    for attribute, value in ((8, runtime.device_attributes[97] - runtime.kernels[handle].attributes[0][1]), (14, 1)):
        assert _call(runtime, "_cudaKernelSetAttributeForDevice", kernel=handle, attr=attribute, value=value, device=0) == 0
    assert _held(runtime, handle, _fact("after_module_load")) == {k: v for k, v in _fact("after_module_load").items() if k.isdigit()}
    assert _call(runtime, "_cudaKernelSetAttributeForDevice", kernel=handle, attr=9, value=25, device=0) == \
        _fact("set_9_25_for_device")["set_9_25_for_device"]
    assert _held(runtime, handle, _fact("after_set_25")) == {k: v for k, v in _fact("after_set_25").items() if k.isdigit()}
    tries = [row for row in FACTS if "attr" in row and "value" in row]
    assert len(tries) == 13
    answered = []
    for row in tries:
        answered.append({"attr": row["attr"], "value": row["value"],
                         "kernel_set_for_device": _call(runtime, "_cudaKernelSetAttributeForDevice", kernel=handle,
                                                        attr=row["attr"], value=row["value"], device=0),
                         "func_set": _call(runtime, "_cudaFuncSetAttribute", func=handle, attr=row["attr"], value=row["value"])})
    assert answered == tries
    after = _fact("after_tries")
    assert _held(runtime, handle, after) == {k: v for k, v in after.items() if k.isdigit()}


@pytest.mark.oracle("H200 facts")
def test_the_seed_object_loads_and_launches_as_on_the_h200():
    """Kernel_Module_Load then the launch wrapper: every loader and the launch return what the H200 returned."""
    run = run_object(str(SEED), RuntimeConfig(device_count=_fact("device_count")["device_count"]),
                     [EntrySpec(name="module_load"), EntrySpec(name="launch")])
    assert [(e.entry, e.returned) for e in run.entries] == [
        ("mlir_cuda_init", 0), ("mlir_cuda_load_to_device", 0), ("launch", _fact("launch_ret")["launch_ret"])]
    lookups = [c.ret for c in run.calls if c.symbol == "_cudaLibraryGetKernel"]
    assert lookups == [_fact("get_kernel")["get_kernel"]]
    assert run.state.kernels[0].devices["0"]["PREFERRED_SHARED_MEMORY_CARVEOUT"] == _fact("after_module_load")["9"]
