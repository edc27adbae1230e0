"""`python -m emu occupancy` and `emu.occupancy`: the table, the JSON, the limiter, several exports, bad input."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import emu
from conftest import ROOT, fixture, run_cli
from emu.commands.occupancy import CODES, DEFAULT_BLOCKS, DEFAULT_SMEM
from emu.commands.occupancy_map import FEW, WIDEST, axis, occupancy_cell
from tests import oracles

GEMM = str(ROOT / "tests" / "fixtures" / "realworld" / "x86_64" / "hopper_gemm.o")
FA4_SM90 = str(ROOT / "tests" / "fixtures" / "realworld" / "x86_64" / "fa4_forward_sm90.o")
FMHA_SM100 = str(ROOT / "tests" / "fixtures" / "realworld" / "x86_64" / "blackwell_fmha.o")
MULTI = ROOT / "tests" / "data" / "multi_export"


def test_the_api_returns_what_json_prints_on_the_probes_grid_by_default():
    result = emu.occupancy(GEMM)
    assert isinstance(result, emu.OccupancyResult)
    assert result.model_dump(mode="json") == run_cli("occupancy", "--json", GEMM).json()
    [export] = result.exports
    assert (export.profile, export.profile_source, export.measured) == ("h200", "chosen", True)
    [kernel] = export.kernels
    assert [(a.block_size, a.dynamic_smem) for a in kernel.answers] == [(b, s) for b in DEFAULT_BLOCKS for s in DEFAULT_SMEM]
    assert (kernel.registers, kernel.static_shared, kernel.max_dynamic_shared, kernel.max_dynamic_shared_source) == \
        (154, 0, 232448, "loaders")


def test_each_answer_names_its_limiter_and_occupancy():
    [kernel] = emu.occupancy(GEMM, block_sizes=[128, 512], dynamic_smem=[0, 232448]).exports[0].kernels
    got = {(a.block_size, a.dynamic_smem): (a.blocks, a.limiter, a.active_warps, a.occupancy_percent) for a in kernel.answers}
    assert got[128, 0] == (3, "registers", 12, 18.8)          # 154 registers: 3 blocks of 4 warps
    assert got[128, 232448] == (1, "shared memory", 4, 6.2)
    assert got[512, 0] == (0, "registers", 0, 0.0)            # a block too large for the registers
    over = emu.occupancy(GEMM, block_sizes=[128], dynamic_smem=[232449]).exports[0].kernels[0].answers[0]
    assert (over.blocks, over.limiter) == (0, "dynamic shared memory over MAX_DYNAMIC_SHARED_SIZE_BYTES")
    carved = emu.occupancy(GEMM, block_sizes=[128], dynamic_smem=[16384], carveout=0).exports[0].kernels[0]
    assert carved.carveout == 0 and (carved.answers[0].blocks, carved.answers[0].limiter) == (1, "shared memory")


def test_the_table_shows_blocks_and_limiter_codes_and_says_what_rests_on_published_figures():
    out = run_cli("occupancy", GEMM, "--block", "128,512", "--smem", "0,232448")
    assert out.code == 0
    assert "3R" in out.out and "1S" in out.out and "0R" in out.out and "R registers" in out.out
    assert "154 registers/thread" in out.out and "attribute 8 (MAX_DYNAMIC_SHARED_SIZE_BYTES) 232448" in out.out
    b200 = run_cli("occupancy", FMHA_SM100, "--block", "128")
    assert b200.code == 0 and "NOT MEASURED" in b200.out and "measured: false" in b200.out
    assert emu.occupancy(FMHA_SM100, block_sizes=[128]).exports[0].measured is False


def test_a_kernel_the_profile_cannot_run_gets_the_load_error_and_no_numbers():
    [kernel] = emu.occupancy(GEMM, profile="a100").exports[0].kernels
    assert "cudaErrorNoKernelImageForDevice (209)" in kernel.load_error and kernel.answers == []
    assert "cannot load:" in run_cli("occupancy", GEMM, "--profile", "b200").out


def test_every_export_of_an_object_is_covered():
    manifest = json.loads((MULTI / "MANIFEST.json").read_text())["x86_64"]
    result = emu.occupancy(ROOT / manifest["object"], block_sizes=[256], dynamic_smem=[0])
    assert sorted(e.export for e in result.exports) == sorted(Path(p).stem for p in manifest["inputs"])
    assert all(k.answers for e in result.exports for k in e.kernels if k.load_error is None)


def test_bad_input_is_one_paragraph_and_exit_2():
    unknown = run_cli("occupancy", GEMM, "--kernel", "kernel_cutlass_kernel_example_cute_hopper")
    assert unknown.code == 2 and "nearest: kernel_cutlass_kernel_example_cute_hopper_kernel_dense_gemm" in unknown.err
    for argv in (["--block", "0"], ["--block", "64,x"], ["--smem", "-1"], ["--carveout", "101"]):
        bad = run_cli("occupancy", GEMM, *argv)
        assert bad.code == 2 and "Traceback" not in bad.err, argv
    assert run_cli("occupancy", fixture("x86_64", "missing")).code == 2


def test_a_cluster_adds_max_active_clusters_to_every_answer():
    [kernel] = emu.occupancy(GEMM, block_sizes=[128, 256, 512], dynamic_smem=[0], cluster=[2]).exports[0].kernels
    assert (kernel.cluster, kernel.cluster_source, kernel.cluster_error, kernel.cluster_unknown) == \
        ((2, 1, 1), "given", None, None)
    # 3, 1 and 0 blocks per SM: the H200's 198, 66 and 0 clusters of 2 (tests/data/facts/h200/cluster_grid)
    assert [(a.blocks, a.clusters) for a in kernel.answers] == [(3, 198), (1, 66), (0, 0)]
    out = run_cli("occupancy", GEMM, "--block", "128,256,512", "--smem", "0", "--cluster", "2,1")
    assert out.code == 0 and "    cluster 2x1x1 (given): max active clusters (cudaOccupancyMaxActiveClusters) for " \
        "the cells' blocks per SM: 0 -> 0, 1 -> 66, 3 -> 198\n" in out.out
    assert run_cli("occupancy", "--json", GEMM, "--block", "128", "--cluster", "2").json() == \
        emu.occupancy(GEMM, block_sizes=[128], cluster=(2,)).model_dump(mode="json")
    [launched] = emu.occupancy(GEMM, block_sizes=[128, 256, 512], dynamic_smem=[0]).exports[0].kernels
    assert (launched.cluster, launched.cluster_source) == ((2, 1, 1), "launch")       # its wrapper's cluster
    assert [a.clusters for a in launched.answers] == [a.clusters for a in kernel.answers]


def test_no_cluster_asked_compiled_in_or_launched_adds_nothing():
    [kernel] = emu.occupancy(FA4_SM90, block_sizes=[128], dynamic_smem=[0]).exports[0].kernels
    assert (kernel.cluster, kernel.cluster_source, kernel.answers[0].clusters) == (None, None, None)
    printed = run_cli("occupancy", FA4_SM90, "--block", "128", "--smem", "0").out
    assert not [line for line in printed.splitlines() if line.startswith("    cluster ")]


def test_cluster_occupancy_on_an_unmeasured_profile_is_unknown():
    [kernel] = emu.occupancy(FMHA_SM100, block_sizes=[128], dynamic_smem=[0], cluster=[2, 1, 1]).exports[0].kernels
    assert kernel.cluster_unknown == "the b200 profile has no measured cluster occupancy (not modelled)"
    assert kernel.answers[0].clusters is None and kernel.answers[0].blocks > 0
    assert "max active clusters unknown: the b200 profile" in run_cli("occupancy", FMHA_SM100, "--block", "128",
                                                                      "--cluster", "2").out


def test_a_cluster_the_driver_refuses_is_its_error():
    from emu.commands.occupancy import KernelOccupancy, _cluster_fields, _cluster_line
    from emu.cuda.launch_checks import NO_LIMITS
    from emu.cuda.profile import load_profile
    h200 = load_profile("h200")
    portable_only = {14: 0}
    fields = _cluster_fields(portable_only, (3, 3, 1), h200, NO_LIMITS)
    assert fields.pop("size") is None
    assert fields["cluster_error"] == ("912 INVALID_CLUSTER_SIZE: a cluster of 9 blocks over the portable cluster size 8 "
                                       "without NON_PORTABLE_CLUSTER_SIZE_ALLOWED")
    assert _cluster_line(KernelOccupancy(kernel="k", **fields)).endswith("max active clusters: error 912 INVALID_CLUSTER_SIZE: "
                                                                         "a cluster of 9 blocks over the portable cluster size "
                                                                         "8 without NON_PORTABLE_CLUSTER_SIZE_ALLOWED")
    compiled = {11: 4, 12: 2, 13: 1, 14: 0}
    fields = _cluster_fields(compiled, None, h200, NO_LIMITS)
    assert (fields["size"], fields["cluster"], fields["cluster_source"]) == (8, (4, 2, 1), "compiled in")
    refused = _cluster_fields(compiled, (2, 1, 1), h200, NO_LIMITS)["cluster_error"]
    assert refused == "912 INVALID_CLUSTER_SIZE: cluster (2,1,1) is not the kernel's compiled-in cluster (4,2,1)"


def test_a_cell_the_h200_was_not_measured_at_is_unknown_there_only():
    [kernel] = emu.occupancy(GEMM, block_sizes=[128], dynamic_smem=[0, 100000, 232448], cluster=[18]).exports[0].kernels
    assert [(a.blocks, a.clusters) for a in kernel.answers] == [(3, None), (2, 4), (1, 2)]
    assert kernel.cluster_unknown == "a cluster of 18 blocks at 3 blocks per SM: not measured (those answers' clusters null)"
    assert "blocks per SM: 1 -> 2, 2 -> 4, 3 -> unknown\n" in run_cli("occupancy", GEMM, "--block", "128", "--cluster", "18").out
    nineteen = run_cli("occupancy", GEMM, "--block", "128,384", "--smem", "0,100000,232448", "--cluster", "19").out
    assert "blocks per SM: 1 to 2 -> 0, 3 -> unknown\n" in nineteen      # a range only over neighbouring counts


def test_a_bad_cluster_is_bad_input():
    for argv in (["--cluster", "0"], ["--cluster", "1,1,1,1"], ["--cluster", "2,x"]):
        bad = run_cli("occupancy", GEMM, "--block", "128", *argv)
        assert bad.code == 2 and "Traceback" not in bad.err and "cluster" in bad.err.splitlines()[-1], (argv, bad.err)


def _maps(printed: str) -> dict[str, dict[str, dict[int, str]]]:
    """The pictures a default run printed: {"occupancy" | "limiter": {kernel-order index: {smem: row}}}, per kernel."""
    maps, kernel, title = [], None, None
    for line in printed.splitlines():
        if line.startswith("  kernel "):
            kernel = {}
            maps.append(kernel)
        elif line.strip() in ("occupancy", "limiter"):
            title = kernel.setdefault(line.strip(), {})
        elif title is not None and line.startswith("    ") and line.split()[0].isdigit() and len(line.split()) == 2:
            smem, row = line.split()
            title[int(smem)] = row
        else:
            title = None
    return maps


def _measured(name: str) -> dict[tuple[int, int], int]:
    """The H200's cudaOccupancyMaxActiveBlocksPerMultiprocessor answers (as loaded) for a real-world fixture."""
    path = ROOT / "tests" / "data" / "facts" / "h200" / f"realworld.x86_64.{name}.jsonl.gz"
    facts = [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()]
    return {(f["block_size"], f["dynamic_smem"]): f["num_blocks"] for f in facts
            if f["kind"] == "occupancy" and f["carveout"] is None}


@pytest.mark.oracle(oracles.H200)
@pytest.mark.parametrize("name", ["hopper_gemm", "fa4_forward_sm90", "hopper_layernorm"])
def test_the_default_grid_is_a_picture_whose_cells_are_the_h200s_answers(name):
    """Every cell of the occupancy map is the H200's measured block count as tens of percent of 64 warps (`.`
    where no block fits); the limiter map is the JSON's limiters; no table row is printed."""
    path = str(ROOT / "tests" / "fixtures" / "realworld" / "x86_64" / f"{name}.o")
    out = run_cli("occupancy", path)
    assert out.code == 0 and "block \\ dynamic smem" not in out.out and "maps: occupancy 0-9 tens of percent" in out.out
    [picture] = _maps(out.out)
    measured = _measured(name)
    assert sorted(picture["occupancy"]) == sorted(picture["limiter"]) == list(DEFAULT_SMEM)
    for smem in DEFAULT_SMEM:
        row = picture["occupancy"][smem]
        assert len(row) == len(DEFAULT_BLOCKS)
        for block, cell in zip(DEFAULT_BLOCKS, row):
            blocks = measured[block, smem]
            percent = 100 * blocks * -(-block // 32) / 64
            assert cell == ("." if blocks == 0 else "*" if percent >= 100 else str(int(percent // 10))), (block, smem)
    [kernel] = emu.occupancy(path).exports[0].kernels
    for answer in kernel.answers:
        column = DEFAULT_BLOCKS.index(answer.block_size)
        assert picture["limiter"][answer.dynamic_smem][column] == CODES[answer.limiter]


def test_the_pictures_axis_labels_sit_over_their_columns():
    labels, ticks = axis(list(DEFAULT_BLOCKS), 0)
    assert labels.split() == ["32", "256", "512", "768", "1024"]
    for label in labels.split():
        column = DEFAULT_BLOCKS.index(int(label))
        assert ticks[column] == "|"
        assert labels.index(label) in (column, column - len(label) + 1)   # starts there, or ends there (the last)
    assert ticks.count("|") == 5
    assert occupancy_cell(100.0, 2) == "*" and occupancy_cell(99.9, 31) == "9" and occupancy_cell(1.6, 1) == "0"
    assert occupancy_cell(0.0, 0) == "."


def test_a_short_or_very_long_block_list_stays_a_table():
    few = run_cli("occupancy", GEMM, "--block", ",".join(map(str, DEFAULT_BLOCKS[:FEW])), "--smem", "0")
    assert few.code == 0 and "block \\ dynamic smem" in few.out and "maps:" not in few.out
    many = run_cli("occupancy", GEMM, "--block", ",".join(map(str, range(1, WIDEST + 2))), "--smem", "0")
    assert many.code == 0 and "block \\ dynamic smem" in many.out and _maps(many.out) == [{}]
    one_more = run_cli("occupancy", GEMM, "--block", ",".join(map(str, DEFAULT_BLOCKS[:FEW + 1])), "--smem", "0,1024")
    assert [sorted(k) for k in _maps(one_more.out)[0].values()] == [[0, 1024], [0, 1024]]


def test_the_readme_examples_are_what_the_command_prints():
    text = (ROOT / "README.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```text\n$ python -m emu occupancy ")[1:]]
    assert len(blocks) == 4
    for block in blocks:
        argv, printed = block.split("\n", 1)
        out = run_cli("occupancy", *argv.split())
        assert out.code == 0 and out.out == printed, argv
