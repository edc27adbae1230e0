"""Kernel attribute errors and the default behaviour of a catalogued wrapper with no rule of its own."""
from __future__ import annotations

import pytest
from conftest import fixture

from emu.cuda.config import RuntimeConfig
from emu.cuda.behaviours import BEHAVIOURS, default_behaviour
from emu.cuda.runtime import CudaRuntime
from emu.support.hotpath import build_record
from stub_models import CATALOGUE
from stub_models.enums import CudaError

KERNEL = "kernel_a"


@pytest.fixture
def rt():
    return CudaRuntime(RuntimeConfig(device_count=2, kernel_attributes={KERNEL: {"SHARED_SIZE_BYTES": 2048}}), [KERNEL])


def get_attribute(rt, kernel: int, attrib: int, dev: int = 0):
    code, outputs = BEHAVIOURS["_cuKernelGetAttribute"](rt, build_record(CATALOGUE["_cuKernelGetAttribute"],
                                                                         {"pi": 0x100, "attrib": attrib, "kernel": kernel, "dev": dev}))
    return int(code), outputs


def test_kernel_get_attribute_reads_the_configured_value_per_device(rt):
    handle = rt.config.first_kernel_handle
    assert get_attribute(rt, handle, 1, dev=0) == (0, {"pi": 2048})
    assert get_attribute(rt, handle, 1, dev=1) == (0, {"pi": 2048})


@pytest.mark.parametrize("kernel_offset, attrib, dev, error", [
    (0x777, 1, 0, CudaError.INVALID_RESOURCE_HANDLE),    # a handle no cudaLibraryGetKernel returned
    (0, 1, 2, CudaError.INVALID_DEVICE),                 # device 2 of 2
    (0, 18, 0, CudaError.INVALID_VALUE),                 # past CU_FUNC_ATTRIBUTE_MAX
    (0, -1, 0, CudaError.INVALID_VALUE),
])
def test_kernel_get_attribute_errors_write_nothing(rt, kernel_offset, attrib, dev, error):
    assert get_attribute(rt, rt.config.first_kernel_handle + kernel_offset, attrib, dev) == (error, {})


def test_an_unknown_kernel_attribute_name_in_a_scenario_is_bad_input(cli, tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"objects: [{fixture('x86_64', 'carveout_25')}]\n"
                        "runtime:\n  kernel_attributes: {'*': {NOT_AN_ATTRIBUTE: 1}}\n")
    result = cli("run", str(scenario))
    assert result.code == 2 and result.err.startswith(f"emu: error: {scenario}:"), result.err
    assert "NOT_AN_ATTRIBUTE" in result.err and "kernel_attributes" in result.err, result.err


def test_an_error_from_the_kernel_attribute_query_stops_the_loader_with_it():
    """The loader returns the error cuKernelGetAttribute gave and sets nothing for that kernel."""
    from emu.dsl.entries import EntrySpec
    from emu.run.session import run_object
    config = RuntimeConfig(errors=[{"symbol": "_cuKernelGetAttribute", "call": 1, "error": "INVALID_VALUE"}])
    run = run_object(fixture("x86_64", "carveout_25"), config, [EntrySpec(name="cuda_init"), EntrySpec(name="cuda_load")])
    assert [(e.entry, e.returned) for e in run.entries] == [("cuda_init", 0), ("cuda_load", 1)]
    assert [c.symbol for c in run.calls if c.entry == "cuda_load"][-1] == "_cuKernelGetAttribute"


def test_default_behaviour_succeeds_with_fresh_handles_and_zeros(rt):
    symbol = "_cudaLibraryGetGlobal"                       # out: dptr (a handle) and bytes (a size)
    assert symbol not in BEHAVIOURS
    call = build_record(CATALOGUE[symbol], {"dptr": 0x100, "bytes": 0x108, "library": rt.config.library_handle, "name": "g"})
    first, second = default_behaviour(rt, call), default_behaviour(rt, call)
    assert first[0] == second[0] == CudaError.SUCCESS
    assert first[1]["bytes"] == second[1]["bytes"] == 0
    assert first[1]["dptr"] != second[1]["dptr"] and rt.config.library_handle not in (first[1]["dptr"], second[1]["dptr"])
    assert first[1]["dptr"] not in rt.kernels and set(first[1]) == {"dptr", "bytes"}

