"""Devices, libraries, streams, events and allocations are state, not canned answers."""
from __future__ import annotations

import pytest

from emu.cuda.config import RuntimeConfig
from emu.cuda.behaviours import BEHAVIOURS
from emu.cuda.runtime import CudaRuntime
from emu.support.hotpath import build_record
from stub_models import CATALOGUE


@pytest.fixture
def rt():
    return CudaRuntime(RuntimeConfig(device_count=2), ["kernel_a", "kernel_b"])


def call(rt, symbol, **args):
    code, outputs = BEHAVIOURS[symbol](rt, build_record(CATALOGUE[symbol], args))
    return int(code), outputs


def test_set_device_changes_what_get_device_reports(rt):
    assert call(rt, "_cudaSetDevice", device=1) == (0, {})
    assert call(rt, "_cudaGetDevice", device=0x100) == (0, {"device": 1})
    assert call(rt, "_cudaSetDevice", device=2)[0] == 101


def test_streams_events_allocations_get_distinct_handles_and_are_tracked(rt):
    handles = {call(rt, "_cudaStreamCreate", pStream=1)[1]["pStream"], call(rt, "_cudaEventCreate", event=1)[1]["event"],
               call(rt, "_cudaMalloc", devPtr=1, size=256)[1]["devPtr"], call(rt, "_cudaMallocHost", ptr=1, size=16)[1]["ptr"]}
    assert len(handles) == 4
    live = rt.snapshot().live
    assert set(live) == {"stream", "event", "device_memory", "host_memory"}


def test_destroying_twice_or_unknown_fails(rt):
    stream = call(rt, "_cudaStreamCreate", pStream=1)[1]["pStream"]
    assert call(rt, "_cudaStreamDestroy", stream=stream)[0] == 0
    assert call(rt, "_cudaStreamDestroy", stream=stream)[0] == 400
    pointer = call(rt, "_cudaMalloc", devPtr=1, size=8)[1]["devPtr"]
    assert call(rt, "_cudaFree", devPtr=pointer)[0] == 0
    assert call(rt, "_cudaFree", devPtr=pointer)[0] == 1
    assert call(rt, "_cudaFree", devPtr=0)[0] == 0                    # cudaFree(NULL) is a no-op


def test_library_unload_forgets_its_kernels(rt):
    library = rt.config.library_handle
    assert call(rt, "_cudaLibraryGetKernelCount", count=1, lib=library) == (0, {"count": 2})
    assert call(rt, "_cudaLibraryUnload", library=library)[0] == 0
    assert call(rt, "_cudaLibraryGetKernel", pKernel=1, library=library, name="kernel_a")[0] == 400
    assert call(rt, "_cudaLibraryUnload", library=library)[0] == 400


def test_plain_launch_is_recorded_and_validated(rt):
    kernel = rt.config.first_kernel_handle
    args = dict(func=kernel, gridDimX=4, gridDimY=1, gridDimZ=1, blockDimX=128, blockDimY=1, blockDimZ=1, args=0, sharedMem=0, stream=0)
    assert call(rt, "_cudaLaunchKernel", **args)[0] == 0
    assert rt.launches[-1].gridDim == [4, 1, 1] and rt.launches[-1].kernel == "kernel_a"
    # too many threads per block: the H200 answers cudaErrorInvalidValue (tests/data/cubin/measured_h200_directives.jsonl),
    # not the cudaErrorInvalidConfiguration (9) this test asserted before it was measured
    assert call(rt, "_cudaLaunchKernel", **{**args, "blockDimX": 2048})[0] == 1


def test_occupancy_follows_the_h200_limits(rt):
    kernel = rt.config.first_kernel_handle
    # as the loaders leave it: dynamic shared memory up to the opt-in (a larger query answers 0 blocks)
    assert call(rt, "_cudaKernelSetAttributeForDevice", kernel=kernel, attr=8, value=232448, device=0)[0] == 0
    query = dict(numBlocks=1, func=kernel, blockSize=128, dynamicSMemSize=0)
    assert call(rt, "_cudaOccupancyMaxActiveBlocksPerMultiprocessor", **query)[1] == {"numBlocks": 16}        # 2048 threads / 128
    assert call(rt, "_cudaOccupancyMaxActiveBlocksPerMultiprocessor", **{**query, "blockSize": 32})[1] == {"numBlocks": 32}   # 32 blocks per SM
    assert call(rt, "_cudaOccupancyMaxActiveBlocksPerMultiprocessor", **{**query, "dynamicSMemSize": 100_000})[1] == {"numBlocks": 2}  # 233472 B per SM
