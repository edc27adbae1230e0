"""cudaOccupancyMaxActiveClusters against the H200: every answer of emu/probe/cluster_grid.cu
(tests/data/facts/h200/cluster_grid/: the default run's 8,394 lines and the `extra` run's 385) reproduced by
emu.cuda.cluster_occupancy, with the blocks per SM of the grid's kernels from emu's own occupancy model; the probe's `cluster_occupancy` lines (544, real exports and
toys) through tests/oracles/h200_facts.py; the builder's refusals of a grid that makes no table."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from emu.commands.occupancy import _cluster_fields
from emu.cuda.cluster_occupancy import max_active_clusters
from emu.cuda.kernel_attributes import CLUSTER_DERIVED, kernel_attributes
from emu.cuda.launch_checks import NO_LIMITS
from emu.cuda.loading import decode_library, load_verdict
from emu.cuda.occupancy import occupancy_limit
from emu.cuda.profile import load_profile
from emu.cuda.profiles.build import GridError, cluster_table
from stub_models.enums import CudaError, DeviceAttribute, FuncAttribute
from tests import oracles
from tests.oracles.h200_facts import compare, fact_files

ROOT = Path(__file__).resolve().parent.parent.parent
GRID = ROOT / "tests" / "data" / "facts" / "h200" / "cluster_grid" / "cluster_grid.jsonl.gz"
EXTRA = GRID.with_name("cluster_grid_extra.jsonl.gz")
H200 = load_profile("h200")
A = FuncAttribute
D = DeviceAttribute


def grid_lines(path: Path = GRID) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode().splitlines()


def both_runs() -> list[str]:
    return grid_lines(GRID) + grid_lines(EXTRA)


def grid_kernel(record: dict, nonportable: int = 0) -> dict[int, int]:
    """A kernel of the grid as cluster_grid.cu leaves it: its registers and static shared memory (its `kernel`
    line), attribute 8 set to 232448 (grid_kernel; heavy_kernel's default is no less than the 0 bytes it is asked
    with), attribute 14 as the line says, the rest as loaded (no compile-time cluster)."""
    return {A.MAX_THREADS_PER_BLOCK: record.get("max_threads", 1024), A.SHARED_SIZE_BYTES: record["static_smem"],
            A.NUM_REGS: record["num_regs"], A.MAX_DYNAMIC_SHARED_SIZE_BYTES: 232448, A.PREFERRED_SHARED_MEMORY_CARVEOUT: -1,
            A.CLUSTER_SIZE_MUST_BE_SET: 0, A.REQUIRED_CLUSTER_WIDTH: 0, A.REQUIRED_CLUSTER_HEIGHT: 0,
            A.REQUIRED_CLUSTER_DEPTH: 0, A.NON_PORTABLE_CLUSTER_SIZE_ALLOWED: nonportable}


BARRIERS = {"grid_kernel": 1, "heavy_kernel": 0}         # grid_kernel's __syncthreads: barrier 0; heavy_kernel none


@pytest.mark.oracle(oracles.H200)
@pytest.mark.parametrize("path, lines", [(GRID, 8394), (EXTRA, 385)], ids=["default", "extra"])
def test_every_cluster_grid_line_is_reproduced(path, lines):
    records = [json.loads(line) for line in grid_lines(path)]
    kernels = {r.get("kernel", "grid_kernel"): r for r in records if r["kind"] == "kernel"}
    kernels.setdefault("grid_kernel", {"num_regs": 10, "static_smem": 0})     # the default run's kernel line (checked there)
    assert kernels["grid_kernel"]["num_regs"] == 10 and kernels["heavy_kernel" if path == EXTRA else "grid_kernel"]
    wrong, compared = [], 0
    for r in records:
        name = r.get("kernel", "grid_kernel")
        if r["kind"] == "kernel":
            got = measured = None
            if "sms" in r:
                got = (H200.device_attributes[D.MULTIPROCESSOR_COUNT],
                       H200.device_attributes[D.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR])
                measured = (r["sms"], r["smem_per_sm"])
        elif r["kind"] == "occupancy":
            blocks, _ = occupancy_limit(grid_kernel(kernels[name]), r["block_size"], r["dynamic_smem"], H200,
                                        H200.device_attributes, barriers=BARRIERS[name])
            got, measured = (0, blocks), (r["result"], r["num_blocks"])
        else:
            result, clusters, _why = max_active_clusters(grid_kernel(kernels[name], r["nonportable"]), r["block_size"],
                                                         r["dynamic_smem"], tuple(r["cluster"]), H200,
                                                         H200.device_attributes, barriers=BARRIERS[name],
                                                         grid=tuple(r.get("grid", r["cluster"])))
            got, measured = (result, -1 if clusters is None else clusters), (r["result"], r["num_clusters"])
        compared += 1
        if got != measured:
            wrong.append((r, got))
    assert (compared, wrong[:10]) == (lines, [])


def test_the_profiles_table_is_the_grids():
    table = cluster_table(both_runs(), "grid")
    assert table["blocks_per_sm_cap"] == H200.cluster_occupancy.blocks_per_sm_cap == 8
    assert table["clusters"] == H200.cluster_occupancy.clusters
    assert sorted(table["clusters"]) == list(range(1, 34))
    assert [s for s, row in table["clusters"].items() if None in row] == list(range(18, 34))   # measured at b 1, 2, 4, 8


def _edited(edit) -> list[str]:
    records = [json.loads(line) for line in both_runs()]
    return [json.dumps(r) for r in edit(records)]


def test_the_builder_refuses_a_cell_with_two_answers():
    def one_more(records):
        first = next(r for r in records if r["kind"] == "cluster" and r["nonportable"] and r["cluster"] == [2, 1, 1])
        return records + [{**first, "cluster": [1, 2, 1], "num_clusters": first["num_clusters"] + 1}]
    with pytest.raises(GridError, match="answered"):
        cluster_table(_edited(one_more), "grid")


def test_the_builder_refuses_a_grid_that_never_shows_the_cap():
    def few_blocks(records):      # only kernels of up to 8 blocks per SM: whether 8 is the cap is not seen
        def key(r):
            return r.get("kernel", "grid_kernel"), r["block_size"], r["dynamic_smem"]
        small = {key(r) for r in records if r["kind"] == "occupancy" and r["num_blocks"] <= 8}
        return [r for r in records if r["kind"] == "kernel" or key(r) in small]
    with pytest.raises(GridError, match="cap"):
        cluster_table(_edited(few_blocks), "grid")


def test_the_builder_refuses_a_missing_cell():
    def no_three(records):        # every shape of 3 blocks (3x1x1, 1x3x1) left out
        return [r for r in records if r["kind"] != "cluster" or r["cluster"][0] * r["cluster"][1] * r["cluster"][2] != 3]
    with pytest.raises(GridError, match=r"cluster size 3 not measured"):
        cluster_table(_edited(no_three), "grid")


def cluster_rows() -> list[tuple[dict, object, object]]:
    return [row for path in fact_files(GRID.parent.parent) for row in compare(path)
            if row[0]["kind"] == "cluster_occupancy"]


# The PTX-only toy fatbin (compute_90): the driver compiles it at load, and emu, with no cubin, does not know the
# kernels' compile-time cluster (attributes 10-13, unknown with the other cubin-derived attributes; the PTX's
# __cluster_dims__ gave 2x1x1 and 4x2x1): every one of its lines, 21 a kernel in each of its two files, is answered
# unknown, never a number.
PTX_TOYS = "tests/data/facts/h200/toys/sweep_kernels.compute_90.fatbin"


@pytest.mark.oracle(oracles.H200)
def test_every_cluster_occupancy_fact_is_reproduced():
    rows = cluster_rows()
    wrong = [(f["object"], f["kernel"][:40], f["config"], m, g) for f, m, g in rows if m != g]
    assert len(rows) == 544 and [w for w in wrong if w[0] != PTX_TOYS] == []
    assert sum(f["object"] != PTX_TOYS for f, _m, _g in rows) == 460
    assert len(wrong) == 84 and all(g == (None, None) for *_rest, g in wrong)       # the PTX toys': unknown
    assert {m[0] for _f, m, _g in rows} == {0, int(CudaError.INVALID_CLUSTER_SIZE)}


@pytest.mark.parametrize("name", ["a100", "b200"])
def test_unmeasured_profiles_answer_unknown(name):
    profile = load_profile(name)
    kernel = grid_kernel({"static_smem": 0, "num_regs": 10})
    assert max_active_clusters(kernel, 128, 0, (2, 1, 1), profile, profile.device_attributes) == (
        None, None, f"the {name} profile has no measured cluster occupancy (not modelled)")


def test_a_cluster_beyond_the_table_or_a_cell_not_measured_is_unknown():
    kernel = grid_kernel({"static_smem": 0, "num_regs": 10}, nonportable=1)
    result, clusters, why = max_active_clusters(kernel, 128, 0, (34, 1, 1), H200, H200.device_attributes)
    assert (result, clusters) == (None, None) and "measured only up to 33" in why
    assert max_active_clusters(kernel, 128, 0, (18, 1, 1), H200, H200.device_attributes) == (0, 16, None)  # 16 blocks/SM
    three = 233472 // 3 - 1024 - 100           # 3 blocks per SM
    assert max_active_clusters(kernel, 128, three, (18, 1, 1), H200, H200.device_attributes) == (
        None, None, "a cluster of 18 blocks at 3 blocks per SM: not measured")


def test_a_grid_the_cluster_does_not_divide_is_refused():
    kernel = grid_kernel({"static_smem": 0, "num_regs": 10}, nonportable=1)
    assert max_active_clusters(kernel, 128, 0, (2, 1, 1), H200, H200.device_attributes, grid=(3, 1, 1)) == (
        CudaError.INVALID_CLUSTER_SIZE, None, "cluster (2,1,1) does not divide grid (3,1,1)")


def test_a_kernel_without_a_cubin_gets_no_cluster_number():
    """PTX the driver compiles (the compute_90 toy fatbin): its compile-time cluster is unknown, so is every
    cudaOccupancyMaxActiveClusters answer, asked with a cluster or not; the command says so without being asked."""
    error, facts = load_verdict(decode_library((ROOT / PTX_TOYS).read_bytes()), H200)
    assert error is None and facts["*"].cubin is None
    derived = kernel_attributes(facts["*"], H200, H200.device_attributes, {})
    assert CLUSTER_DERIVED <= derived.unknown
    for cluster in (None, (1, 1, 1), (2, 1, 1), (16, 1, 1)):
        result, clusters, why = max_active_clusters(derived.values, 128, 0, cluster, H200, H200.device_attributes,
                                                    unknown=derived.unknown)
        assert (result, clusters) == (None, None) and "compile-time cluster" in why, cluster
    fields = _cluster_fields(derived.values, None, H200, NO_LIMITS, None, derived.unknown)
    assert fields["size"] is None and "compile-time cluster" in fields["cluster_unknown"]
    assert _cluster_fields(derived.values, None, H200, NO_LIMITS, None) == {"size": None}   # a cubin's: nothing asked
