"""The model's answers for the rows of a measured-facts file (contract 3 kinds), for comparison.

Shared by the tests that hold the model against H200 measurements: given the cubins the facts
were measured on, each row's `model` value is what emu answers for the same question.
"""
from __future__ import annotations

import json
from pathlib import Path

from emu.gpu_binary.cubin import parse_cubin
from emu.cuda.kernel_attributes import kernel_attributes
from emu.cuda.launch_checks import NO_LIMITS, LaunchLimits, LaunchRequest, check_launch, launch_limits
from emu.cuda.loading import cubin_kernel_facts
from emu.cuda.occupancy import max_active_blocks
from emu.cuda.profile import load_profile
from stub_models.enums import FuncAttribute

A = FuncAttribute
H200 = load_profile("h200")


def read_facts(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def kernel_state(cubin_path: Path, kernel: str) -> dict[int, int]:
    """A freshly loaded kernel's attributes on the H200 profile, derived from its cubin."""
    facts = cubin_kernel_facts(parse_cubin(cubin_path.read_bytes()))[kernel]
    return dict(kernel_attributes(facts, H200, H200.device_attributes, {}).values)


def kernel_limits(cubin_path: Path, kernel: str) -> LaunchLimits:
    return launch_limits(cubin_kernel_facts(parse_cubin(cubin_path.read_bytes()))[kernel].cubin)


def attribute_answer(attributes: dict[int, int], attribute: int) -> tuple[int, int | None]:
    """(result, value) as cuKernelGetAttribute answers: 1 (invalid value) for an attribute the kernel lacks."""
    return (0, attributes[attribute]) if attribute in attributes else (1, None)


def occupancy_answer(attributes: dict[int, int], row: dict) -> tuple[int, int]:
    """measure.cu sets MAX_DYNAMIC_SHARED_SIZE_BYTES to 100000 around its occupancy queries."""
    state = {**attributes, A.MAX_DYNAMIC_SHARED_SIZE_BYTES: 100000}
    return 0, max_active_blocks(state, row["block_size"], row["dynamic_smem"], H200, H200.device_attributes,
                                row["carveout"])


def launch_answer(attributes: dict[int, int], row: dict, limits: LaunchLimits = NO_LIMITS) -> int:
    state = {**attributes, **{int(k): v for k, v in row["pre"].items()}}
    config = row["config"]
    attrs = {a["id"]: tuple(a["value"]) if isinstance(a["value"], list) else a["value"] for a in config["attrs"]}
    request = LaunchRequest(tuple(config["grid"]), tuple(config["block"]), config["dynamic_smem"], attrs)
    return int(check_launch(request, state, H200, H200.device_attributes, limits))


def main() -> None:
    """Per measured file: how many fields the model reproduces (python tests/oracles/h200_measured.py)."""
    data = Path(__file__).resolve().parent.parent / "data" / "cubin"
    print("| file | attributes | occupancy | launches | all |")
    print("|---|---|---|---|---|")
    for name in ("measured_h200.jsonl", "measured_h200_directives.jsonl"):
        counts = {}
        for row in read_facts(data / name):
            cubin = data / row.get("object", "")
            if row["kind"] not in ("kernel_attribute", "occupancy", "launch") or not cubin.is_file():
                continue
            state = kernel_state(cubin, row["kernel"])
            if row["kind"] == "kernel_attribute":
                same = attribute_answer(state, row["attribute"]) == (row["result"], row["value"])
            elif row["kind"] == "occupancy":
                same = occupancy_answer(state, row) == (row["result"], row["num_blocks"])
            else:
                same = launch_answer(state, row, kernel_limits(cubin, row["kernel"])) == row["result"]
            for key in (row["kind"], "all"):
                hit, total = counts.get(key, (0, 0))
                counts[key] = (hit + same, total + 1)
        print(f"| {name} | " + " | ".join("%d/%d" % counts.get(k, (0, 0))
                                          for k in ("kernel_attribute", "occupancy", "launch", "all")) + " |")


if __name__ == "__main__":
    main()
