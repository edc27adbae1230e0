"""Loading as the driver does: which image a device runs, and what fails when none runs.

Against the H200 (tests/data/cubin/measured_h200_loading.jsonl: the fatbins of the committed
carveout_25, sm80_carveout_25 and sm100a_carveout_25 exports loaded through cudaLibraryLoadData,
then cudaLibraryGetKernel, cuKernelGetAttribute, cudaKernelSetAttributeForDevice, cudaLaunchKernelEx).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import fixture
from tests.oracles.h200_measured import read_facts

from emu.cuda.config import RuntimeConfig
from emu.cuda.object_profile import profile_for_object
from emu.dsl.entries import EntrySpec
from emu.run.session import run_object

FACTS = read_facts(Path(__file__).parent.parent / "data" / "cubin" / "measured_h200_loading.jsonl")
ENTRIES = [EntrySpec(name=n) for n in ("cuda_init", "cuda_load", "cuda_load_to_device", "launch")]


def measured(fatbin: str, kind: str, **match) -> dict:
    return next(r for r in FACTS if r["object"] == fatbin and r["kind"] == kind
                and all(r.get(k) == v for k, v in match.items()))


@pytest.mark.parametrize("case, profile", [("sm80_carveout_25", "a100"), ("sm100a_carveout_25", "b200")])
def test_an_export_the_h200_cannot_run_fails_at_the_calls_the_h200_failed(case, profile):
    run = run_object(fixture("x86_64", case), RuntimeConfig(), ENTRIES)
    first = {}
    for call in run.calls:
        first.setdefault(call.symbol, call.ret)
    fatbin = f"{case}.fatbin"
    assert first["_cudaLibraryLoadData"] == measured(fatbin, "load")["result"] == 0
    assert first["_cudaLibraryGetKernel"] == measured(fatbin, "lookup")["result"] == 209
    assert first["_cudaLaunchKernelEx"] == measured(fatbin, "launch")["result"] == 98
    assert f"profile {profile} would run it" in run.state.load_error
    assert run.state.kernels == []


def test_attribute_queries_and_setters_on_the_handle_left_behind_answer_400():
    run = run_object(fixture("x86_64", "sm80_carveout_25"), RuntimeConfig(), ENTRIES)
    from emu.cuda.behaviours import BEHAVIOURS
    from emu.cuda.runtime import CudaRuntime
    from stub_models.runtime_api import CudaKernelSetAttributeForDevice
    runtime = CudaRuntime(RuntimeConfig(), ["k"], None)
    unknown = CudaKernelSetAttributeForDevice.model_construct(kernel=0, attr=8, value=1024, device=0)
    assert BEHAVIOURS["_cudaKernelSetAttributeForDevice"](runtime, unknown)[0] == \
        measured("sm80_carveout_25.fatbin", "setter")["result"] == 400
    assert measured("sm80_carveout_25.fatbin", "kernel_attribute", attribute=0)["result"] == 400
    assert run.state.load_error is not None


@pytest.mark.parametrize("case, profile", [("carveout_25", "h200"), ("sm80_carveout_25", "a100"),
                                           ("sm100a_carveout_25", "b200")])
def test_each_export_loads_on_the_profile_of_its_architecture(case, profile):
    assert profile_for_object(fixture("x86_64", case)) == profile
    run = run_object(fixture("x86_64", case), RuntimeConfig(profile=profile), ENTRIES)
    assert [e.returned for e in run.entries] == [0, 0, 0, 0] and run.state.load_error is None


def test_the_runnable_export_answers_like_the_h200_after_lookup():
    run = run_object(fixture("x86_64", "carveout_25"), RuntimeConfig(), ENTRIES)
    kernel, = run.state.kernels
    for row in (r for r in FACTS if r["object"] == "carveout_25.fatbin" and r["kind"] == "kernel_attribute"):
        held = kernel.attribute(0, row["attribute"])
        loader_set = row["attribute"] in (8, 14)          # the loaders set these after lookup
        if not loader_set:
            assert (0, held) == (row["result"], row["value"]) if row["result"] == 0 else held is None, row


DATA = Path(__file__).parent.parent / "data" / "cubin"


def test_ptx_only_binary_is_jit_compiled_for_newer_devices_with_its_attributes_unknown():
    from emu.cuda.kernel_images import kernel_images
    images = kernel_images((DATA / "kernels_compute90_ptx.fatbin").read_bytes())
    assert images.profile == "h200" and set(images.refused_by) == {"a100"}       # compute_90 PTX: not for sm_80
    assert "profile h200 or b200 would run it" in images.refused_by["a100"]
    kernel, = images.kernels
    assert kernel.kernel == "*" and "JIT" in kernel.unknown_reason
    assert {"NUM_REGS", "MAX_THREADS_PER_BLOCK", "SHARED_SIZE_BYTES"} <= set(kernel.unknown)
    assert (kernel.attributes["PTX_VERSION"], kernel.attributes["BINARY_VERSION"]) == (90, 90)
    assert "PTX_VERSION" not in kernel.unknown and "BINARY_VERSION" not in kernel.unknown


def test_a_cubin_compressed_with_zstd_loads_with_its_attributes_marked_unknown():
    from emu.cuda.kernel_images import kernel_images
    images = kernel_images((DATA / "kernels_sm90a_zstd.fatbin").read_bytes())
    kernel, = images.kernels
    assert images.profile == "h200" and "cannot decompress" in kernel.unknown_reason
    assert "NUM_REGS" in kernel.unknown and kernel.attributes["BINARY_VERSION"] == 90


def test_lz4_blocks_expand_as_the_format_says():
    from emu.gpu_binary.fatbin import FatbinError, lz4_block_decompress
    # token 0x34: 3 literals "abc", then a match of 4 + 4 = 8 bytes at offset 3 (overlapping copy)
    assert lz4_block_decompress(bytes([0x34]) + b"abc" + bytes([3, 0]) + bytes([0x10]) + b"!", 12) == b"abcabcabcab!"
    with pytest.raises(FatbinError, match="offset"):
        lz4_block_decompress(bytes([0x14]) + b"a" + bytes([9, 0]), 9)
