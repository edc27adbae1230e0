"""The CUDA runtime model answers like the real H200 did (tests/data/facts/h200-probe.jsonl)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import fixture

from emu.cuda.config import RuntimeConfig
from emu.cuda.behaviours.attributes import func_set_attribute, kernel_set_attribute_for_device
from emu.cuda.behaviours.library import library_get_kernel
from emu.cuda.runtime import CudaRuntime
from emu.dsl.entries import EntrySpec
from emu.run.session import run_object
from stub_models.enums import FuncAttribute
from stub_models.runtime_api import CudaFuncSetAttribute, CudaKernelSetAttributeForDevice, CudaLibraryGetKernel
from tests import oracles

FACTS = [json.loads(line) for line in (Path(__file__).parent.parent / "data" / "facts" / "h200-probe.jsonl").read_text().splitlines() if line.strip()]
SETTER_ROWS = [row for row in FACTS if "attr" in row and "value" in row]
KERNEL = "kernel_cutlass_rotate_tensorptrf32gmemalign16o1281_0"


def fresh_runtime(**overrides) -> CudaRuntime:
    return CudaRuntime(RuntimeConfig(**overrides), [KERNEL])


@pytest.mark.oracle(oracles.H200)
@pytest.mark.parametrize("row", SETTER_ROWS, ids=lambda r: f"attr{r['attr']}={r['value']}")
def test_setters_validate_like_the_h200(row):
    runtime = fresh_runtime()
    handle = runtime.config.first_kernel_handle
    for_device = CudaKernelSetAttributeForDevice.model_construct(kernel=handle, attr=row["attr"], value=row["value"], device=0)
    assert kernel_set_attribute_for_device(runtime, for_device)[0] == row["kernel_set_for_device"]
    func = CudaFuncSetAttribute.model_construct(func=handle, attr=row["attr"], value=row["value"])
    assert func_set_attribute(runtime, func)[0] == row["func_set"]


@pytest.mark.oracle(oracles.H200)
def test_absent_device_and_unknown_kernel():
    runtime = fresh_runtime()
    bad = next(r["bad_device"] for r in FACTS if "bad_device" in r)
    call = CudaKernelSetAttributeForDevice.model_construct(kernel=runtime.config.first_kernel_handle, attr=9, value=25, device=7)
    assert kernel_set_attribute_for_device(runtime, call)[0] == bad == 101
    unknown = next(r["unknown_kernel"] for r in FACTS if "unknown_kernel" in r)
    lookup = CudaLibraryGetKernel.model_construct(pKernel=0x100, library=runtime.config.library_handle, name="no_such_kernel")
    assert library_get_kernel(runtime, lookup)[0] == unknown == 500


@pytest.mark.oracle(oracles.H200)
def test_state_after_module_load_matches_the_h200():
    """The header path (init, then load_to_device per device) leaves what the real H200 reported."""
    measured = next(r for r in FACTS if r.get("when") == "after_module_load")
    run = run_object(fixture("x86_64", "carveout_25"), RuntimeConfig(), [EntrySpec(name="module_load")])
    assert all(e.returned == 0 for e in run.entries)
    kernel, = run.state.kernels
    for attribute, value in measured.items():
        if attribute.isdigit():
            assert kernel.attribute(0, int(attribute)) == value, FuncAttribute(int(attribute)).name


@pytest.mark.oracle(oracles.H200)
def test_setting_carveout_afterwards_reads_back_like_the_h200():
    measured = next(r for r in FACTS if r.get("when") == "after_set_25")
    runtime = fresh_runtime()
    handle = runtime.config.first_kernel_handle
    for attr, value in ((8, 232448), (14, 1), (9, 25)):
        call = CudaKernelSetAttributeForDevice.model_construct(kernel=handle, attr=attr, value=value, device=0)
        assert kernel_set_attribute_for_device(runtime, call)[0] == 0
    held = runtime.kernels[handle].attributes[0]
    assert {str(a): held[a] for a in (0, 1, 4, 8, 9, 10, 14, 15)} == {k: v for k, v in measured.items() if k.isdigit()}


@pytest.mark.oracle(oracles.H200)
def test_device_profile_is_the_measured_h200():
    runtime = fresh_runtime()
    measured = next(r["device_attributes"] for r in FACTS if "device_attributes" in r)
    assert runtime.device_attributes == {int(k): v for k, v in measured.items()}
    assert runtime.device_attributes[97] == 232448 and runtime.device_attributes[16] == 132


def test_dynamic_shared_memory_limit_depends_on_static_shared_memory():
    runtime = fresh_runtime(kernel_attributes={"*": {"SHARED_SIZE_BYTES": 1024}})
    handle = runtime.config.first_kernel_handle
    ok = CudaFuncSetAttribute.model_construct(func=handle, attr=8, value=232448 - 1024)
    too_big = CudaFuncSetAttribute.model_construct(func=handle, attr=8, value=232448 - 1023)
    assert func_set_attribute(runtime, ok)[0] == 0 and func_set_attribute(runtime, too_big)[0] == 1
