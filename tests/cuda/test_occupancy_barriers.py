"""Named barriers limit resident blocks: the model against tests/data/cubin/barriers (measured on the H200)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from emu.gpu_binary.cubin import parse_cubin
from emu.cuda.kernel_attributes import kernel_attributes
from emu.cuda.loading import KernelFacts
from emu.cuda.occupancy import max_active_blocks
from emu.cuda.profile import load_profile

DATA = Path(__file__).resolve().parents[1] / "data" / "cubin" / "barriers"
MEASURED = [json.loads(line) for line in (DATA / "barriers_h200.jsonl").read_text().splitlines() if line.strip()]
BARRIERS = {"b1": 1, "b2": 2, "b4": 4, "b6": 6, "b8": 8, "b11": 11, "b12": 12, "b16": 16}


def test_the_cubin_reader_finds_each_kernels_barrier_count():
    kernels = {k.name: k for k in parse_cubin((DATA / "barriers.cubin").read_bytes()).kernels}
    assert {name: kernels[f"_Z{len(name)}{name}Pi"].barriers for name in BARRIERS} == BARRIERS


@pytest.mark.oracle("H200 facts")
@pytest.mark.parametrize("fact", MEASURED, ids=[f["kernel"] for f in MEASURED])
def test_occupancy_follows_the_barriers_like_the_h200(fact):
    h200 = load_profile("h200")
    name = fact["kernel"]
    cubin = {k.name: k for k in parse_cubin((DATA / "barriers.cubin").read_bytes()).kernels}[f"_Z{len(name)}{name}Pi"]
    attributes = kernel_attributes(KernelFacts(cubin, 90, 90), h200, h200.device_attributes, {}).values
    for block_size in (32, 64, 96, 128, 256):
        result, measured = fact[str(block_size)]
        assert result == 0
        assert max_active_blocks(attributes, block_size, 0, h200, h200.device_attributes,
                                 barriers=cubin.barriers) == measured, (name, block_size)
