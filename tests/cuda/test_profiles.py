"""Device profiles: h200 rebuilt from facts by the builder, a100/b200 cited and marked unmeasured,
and occupancy on the H200 profile as FIELD_NOTES section 7 reports it for the 10-register kernel."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from emu.cuda.kernel_attributes import kernel_attributes
from emu.cuda.occupancy import max_active_blocks
from emu.cuda.profile import PROFILES, load_profile
from emu.cuda.profiles.build import build, cluster_table

ROOT = Path(__file__).parent.parent.parent
H200 = load_profile("h200")


def test_h200_json_is_what_the_builder_makes_of_the_facts():
    facts = ROOT / "tests" / "data" / "facts" / "h200-probe.jsonl"
    built = build("h200", facts.read_text().splitlines(), "tests/data/facts/h200-probe.jsonl")
    grids = ["tests/data/facts/h200/cluster_grid/cluster_grid.jsonl.gz",
             "tests/data/facts/h200/cluster_grid/cluster_grid_extra.jsonl.gz"]
    built["cluster_occupancy"] = cluster_table([line for grid in grids for line in
                                                gzip.decompress((ROOT / grid).read_bytes()).decode().splitlines()],
                                               ", ".join(grids))
    committed = json.loads((ROOT / "emu" / "cuda" / "profiles" / "h200.json").read_text())
    assert json.loads(json.dumps(built)) == committed


@pytest.mark.parametrize("name", PROFILES)
def test_every_profile_says_where_it_comes_from(name):
    profile = load_profile(name)
    assert profile.measured == (name == "h200")
    assert "Programming Guide" in profile.source
    assert profile.compute_capability == {"h200": 90, "a100": 80, "b200": 100}[name]


@pytest.mark.parametrize("block, dynamic, blocks", [(32, 0, 32), (128, 0, 16), (1024, 0, 2),
                                                    (128, 49152, 4), (128, 100000, 2), (128, 232448, 1)])
def test_occupancy_of_the_ten_register_kernel_is_the_h200s(block, dynamic, blocks):
    attributes = dict(kernel_attributes(None, H200, H200.device_attributes, {}).values)  # the measured kernel: 10 regs
    attributes[8] = 232448                              # as its loader leaves it (FIELD_NOTES section 5)
    assert attributes[4] == 10
    assert max_active_blocks(attributes, block, dynamic, H200, H200.device_attributes) == blocks


def test_the_command_line_offers_every_profile():
    from emu.commands import cli
    assert cli.PROFILES == PROFILES


def test_the_builder_reads_the_contract_facts_format():
    measured = ROOT / "tests" / "data" / "cubin" / "measured_h200.jsonl"
    device = {"kind": "device", "object": None, "sha256": None, "device": 0, "name": "NVIDIA H200", "driver": 13000,
              "runtime": 13000, "attributes": {str(k): v for k, v in H200.device_attributes.items()}}
    built = build("h200", [json.dumps(device)] + measured.read_text().splitlines(), "facts")
    assert built["device_attributes"] == H200.device_attributes and built["measured"]
    assert built["kernel_unsupported"] == [16, 17]                       # every kernel answered 1 for them
    assert built["kernel_settable_defaults"] == {9: -1, 10: 0, 15: 0}
    assert built["kernel_read_only"][0] == 1024
