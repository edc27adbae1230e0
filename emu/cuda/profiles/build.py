"""Build a device profile from probe facts (contract 3: JSON lines under tests/data/facts/<device>/).

    python -m emu.cuda.profiles.build h200 tests/data/facts/h200-probe.jsonl \
        --cluster-grid tests/data/facts/h200/cluster_grid/cluster_grid.jsonl.gz \
        --cluster-grid tests/data/facts/h200/cluster_grid/cluster_grid_extra.jsonl.gz > emu/cuda/profiles/h200.json

What it reads:
- the `device` line of device 0: name, every cudaDeviceAttr value;
- `kernel_attribute` lines: which attributes cuKernelGetAttribute refuses on every kernel
  (result != 0 everywhere: `kernel_unsupported`), the most common value of the settable
  attributes 9, 10 and 15 after load (`kernel_settable_defaults`) and of NUM_REGS, SHARED and
  MAX_THREADS (the fallback for a kernel whose cubin emu cannot read).
The per-SM allocation rules are not attributes the driver reports; they come from `rules`, the
CUDA C++ Programming Guide's compute-capability table for the device's architecture, and are
checked against the occupancy facts by tests/cuda/test_h200_facts.py.
`--cluster-grid` (each file of) reads emu/probe/cluster_grid.cu's output into `cluster_occupancy` (`cluster_table`): the
measured cudaOccupancyMaxActiveClusters per cluster size and resident blocks per SM.
The first probe's output (../shared/facts/h200-probe.jsonl, one object a line without `kind`)
is read too, so that the profile can be rebuilt from it.
"""
from __future__ import annotations

import gzip
import json
import sys
from collections import Counter

# Compute capability 9.0 (CUDA C++ Programming Guide, "Technical Specifications per Compute
# Capability" and "Shared Memory" for 9.0; Hopper Tuning Guide "Thread Block Clusters").
RULES_SM90 = {
    "register_allocation_unit": 256, "sub_partitions": 4, "shared_allocation_unit": 128,
    "shared_carveout_kib": [0, 8, 16, 32, 64, 100, 132, 164, 196, 228],
    "portable_cluster_size": 8, "max_cluster_size": 16,
    # measured, not published: 16-barrier kernels (hopper_fmha, fa4_forward_sm90) reach 4 blocks per SM on
    # the H200 where the same registers allow 12 (tests/data/facts/h200/realworld.x86_64.*.jsonl.gz)
    "barriers_per_multiprocessor": 64,
}
SETTABLE_DEFAULTS = (9, 10, 15)
FALLBACK_READ_ONLY = (0, 1, 4)


def _legacy(records: list[dict]) -> tuple[dict, list[dict]]:
    """The first probe's lines as a device record and kernel_attribute records."""
    device = {"name": next(r["name"] for r in records if "name" in r),
              "attributes": next(r["device_attributes"] for r in records if "device_attributes" in r)}
    after = next(r for r in records if r.get("when") == "after_module_load")
    kernels = [{"kind": "kernel_attribute", "kernel": "seed", "attribute": int(k), "result": 0, "value": v}
               for k, v in after.items() if k.isdigit()]
    kernels += [{"kind": "kernel_attribute", "kernel": "seed", "attribute": a, "result": 1, "value": None} for a in (16, 17)]
    return device, kernels


def build(name: str, lines: list[str], source: str) -> dict:
    records = [json.loads(line) for line in lines if line.strip()]
    if any("kind" in r for r in records):
        device = next(r for r in records if r.get("kind") == "device" and r.get("device", 0) == 0)
        kernels = [r for r in records if r.get("kind") == "kernel_attribute" and r.get("device", 0) == 0]
        count = len({r.get("device", 0) for r in records if r.get("kind") == "device"})
    else:
        device, kernels = _legacy(records)
        count = next(r["device_count"] for r in records if "device_count" in r)
    by_attribute: dict[int, list[dict]] = {}
    for record in kernels:
        by_attribute.setdefault(int(record["attribute"]), []).append(record)
    unsupported = sorted(a for a, rows in by_attribute.items() if all(r["result"] != 0 for r in rows))

    def common(attribute: int) -> int:
        values = [r["value"] for r in by_attribute.get(attribute, []) if r["result"] == 0]
        return Counter(values).most_common(1)[0][0]

    return {
        "name": name, "device_name": device["name"], "measured": True,
        "source": f"{source}: cudaDeviceGetAttribute and cuKernelGetAttribute on a real {device['name']}"
                  + (f" (driver {device['driver']}, runtime {device['runtime']})" if "driver" in device else "")
                  + "; per-SM allocation rules: CUDA C++ Programming Guide, compute capability table",
        "device_count": count,
        "device_attributes": {int(k): v for k, v in device["attributes"].items()},
        "kernel_read_only": {a: common(a) for a in FALLBACK_READ_ONLY},
        "kernel_settable_defaults": {a: common(a) for a in SETTABLE_DEFAULTS},
        "kernel_unsupported": unsupported,
        **RULES_SM90,
    }


class GridError(ValueError):
    """The cluster grid's lines do not make one table (a cell with two answers, a size or block count missing)."""


def cluster_table(lines: list[str], source: str) -> dict:
    """cluster_grid.cu's lines (default and `extra` runs) as {blocks_per_sm_cap, clusters: {size: [answer for 1..cap
    blocks per SM, null where not measured]}, source}.

    A kernel's resident blocks per SM (b) is its `occupancy` line's answer (lines without `kernel`: grid_kernel);
    each `cluster` line with attribute 14 set (every size answered) whose grid the cluster divides gives the cell
    (size, b). Every cell must hold one answer whatever the kernel, shape, block size and shared memory; the cap is
    the least b from which no size's answer grows (b over it must have been measured, so that the cap is seen, not
    assumed); every size from 1 to the largest measured must have been measured at b = 1."""
    records = [json.loads(line) for line in lines if line.strip()]
    blocks = {(r.get("kernel", "grid_kernel"), r["block_size"], r["dynamic_smem"]): r["num_blocks"]
              for r in records if r["kind"] == "occupancy"}
    cells: dict[tuple[int, int], set[int]] = {}
    for r in records:
        if r["kind"] != "cluster" or not r["nonportable"] or any(g % c for g, c in zip(r.get("grid", r["cluster"]), r["cluster"])):
            continue
        if r["result"] != 0:
            raise GridError(f"{source}: cluster {r['cluster']} answered error {r['result']} with attribute 14 set")
        size = r["cluster"][0] * r["cluster"][1] * r["cluster"][2]
        b = blocks[r.get("kernel", "grid_kernel"), r["block_size"], r["dynamic_smem"]]
        cells.setdefault((size, b), set()).add(r["num_clusters"])
    several = sorted(cell for cell, answers in cells.items() if len(answers) > 1)
    if several:
        raise GridError(f"{source}: cluster size and blocks per SM {several[0]} answered {sorted(cells[several[0]])}")
    answer = {cell: answers.pop() for cell, answers in cells.items()}
    sizes = sorted({size for size, _b in answer})
    measured = sorted({b for _size, b in answer if b > 0})
    cap = next(k for k in measured if all(answer.get((s, b), answer.get((s, k))) == answer.get((s, k))
                                          for s in sizes for b in measured if b >= k))
    missing = [s for s in range(1, sizes[-1] + 1) if (s, 1) not in answer]
    if cap == measured[-1] or missing:
        raise GridError(f"{source}: " + (f"cluster size {missing[0]} not measured" if missing
                                         else "no kernel with more blocks per SM than the cap was measured"))
    return {"blocks_per_sm_cap": cap, "clusters": {s: [answer.get((s, b)) for b in range(1, cap + 1)] for s in sizes},
            "source": f"{source}: cudaOccupancyMaxActiveClusters on the device (emu/probe/cluster_grid.cu)"}


def _text(path: str) -> str:
    with open(path, "rb") as handle:
        data = handle.read()
    return (gzip.decompress(data) if path.endswith(".gz") else data).decode()


def main(argv: list[str]) -> None:
    grids = []
    while "--cluster-grid" in argv:
        at = argv.index("--cluster-grid")
        grids, argv = grids + [argv[at + 1]], argv[:at] + argv[at + 2:]
    name, paths = argv[0], argv[1:]
    lines = [line for path in paths for line in _text(path).splitlines()]
    profile = build(name, lines, ", ".join(paths))
    if grids:
        profile["cluster_occupancy"] = cluster_table([line for grid in grids for line in _text(grid).splitlines()],
                                                     ", ".join(grids))
    json.dump(profile, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
