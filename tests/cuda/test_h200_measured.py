"""The model against a real H200, field by field, on cubins with known contents.

tests/data/cubin/measured_h200.jsonl and measured_h200_directives.jsonl are what an H200 (driver
580.159.04, CUDA 13.0) answered for the kernels of kernels_sm90a.cubin (nvcc-built, kernels.cu), of
directives_sm90a.cubin (ptxas-built, directives.ptx: .reqntid, cluster directives) and of two
nvidia-cutlass-dsl cubins, through the DSL's own calls (tests/data/cubin/measure.cu says how):
every cuKernelGetAttribute after load, occupancy for block sizes x dynamic shared memory x
carveouts, and launch verdicts of cudaLaunchKernelEx.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from tests.oracles.h200_measured import attribute_answer, kernel_limits, kernel_state, launch_answer, occupancy_answer, read_facts
from tests import oracles

DATA = Path(__file__).parent.parent / "data" / "cubin"
FACTS = read_facts(DATA / "measured_h200.jsonl") + [
    r for r in read_facts(DATA / "measured_h200_directives.jsonl") if r["object"] == "directives_sm90a.cubin"]
CUBINS = {"kernels_sm90a.cubin": DATA / "kernels_sm90a.cubin", "directives_sm90a.cubin": DATA / "directives_sm90a.cubin",
          "dsl_carveout_25_sm90a.cubin": DATA / "dsl_carveout_25_sm90a.cubin",
          "dsl_mixed_sm90a.cubin": DATA / "dsl_mixed_sm90a.cubin"}
# Launch verdicts the model does not explain yet, each named: clusters of 4 fit the GPCs less well
# than the 8-blocks-per-SM rule for cluster launches says (measured_h200_directives.jsonl's
# cooperative_limit rows: 248 blocks of 1024 threads where the rule allows 264); not modelled.
UNEXPLAINED = {("cluster_4x1x1", (264, 1, 1), (1024, 1, 1), ((2, 1),))}


def _rows(kind: str) -> list[dict]:
    return [r for r in FACTS if r["kind"] == kind and r["object"] in CUBINS]


def _state(row: dict) -> dict[int, int]:
    return kernel_state(CUBINS[row["object"]], row["kernel"])


def _launch_key(row: dict) -> tuple:
    config = row["config"]
    return (row["kernel"], tuple(config["grid"]), tuple(config["block"]), tuple((a["id"], a["value"]) for a in config["attrs"]))


def test_the_facts_cover_every_kernel_and_kind():
    kernels = {(r["object"], r["kernel"]) for r in _rows("kernel_attribute")}
    assert len(kernels) == 15
    assert len(_rows("occupancy")) >= 900 and len(_rows("launch")) >= 150


@pytest.mark.oracle(oracles.H200)
def test_every_attribute_after_load_equals_the_h200():
    wrong = []
    for row in _rows("kernel_attribute"):
        got = attribute_answer(_state(row), row["attribute"])
        if got != (row["result"], row["value"]):
            wrong.append((row["kernel"], row["attribute"], (row["result"], row["value"]), got))
    assert wrong == []


@pytest.mark.oracle(oracles.H200)
def test_every_occupancy_answer_equals_the_h200():
    wrong = []
    for row in _rows("occupancy"):
        got = occupancy_answer(_state(row), row)
        if got != (row["result"], row["num_blocks"]):
            wrong.append((row["kernel"], row["block_size"], row["dynamic_smem"], row["carveout"], row["num_blocks"], got))
    assert wrong == []


@pytest.mark.oracle(oracles.H200)
def test_every_launch_verdict_equals_the_h200_but_the_named_gaps():
    wrong, gaps = [], []
    for row in _rows("launch"):
        got = launch_answer(_state(row), row, kernel_limits(CUBINS[row["object"]], row["kernel"]))
        if got != row["result"]:
            key = _launch_key(row)
            (gaps if key in UNEXPLAINED else wrong).append((key, row["pre"], row["result"], got))
    assert wrong == []
    assert len(gaps) == len(UNEXPLAINED)      # still unexplained: drop an entry once the model explains it


@pytest.mark.parametrize("kernel, registers, max_threads", [("register_heavy", 72, 896), ("bounded", 8, 256),
                                                             ("local_array", 32, 1024)])
def test_max_threads_follow_registers_and_launch_bounds(kernel, registers, max_threads):
    state = kernel_state(CUBINS["kernels_sm90a.cubin"], kernel)
    assert (state[4], state[0]) == (registers, max_threads)
