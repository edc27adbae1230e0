"""Regenerate h200.json from the measurements of a real H200 (../shared/facts/h200-probe.jsonl).

    python -m emu.cuda.profiles.build_h200 ../shared/facts/h200-probe.jsonl > emu/cuda/profiles/h200.json
"""
from __future__ import annotations

import json
import sys


def build(lines: list[str]) -> dict:
    records = [json.loads(line) for line in lines if line.strip()]
    attributes = next(r["device_attributes"] for r in records if "device_attributes" in r)
    name = next(r["name"] for r in records if "name" in r)
    after_load = next(r for r in records if r.get("when") == "after_module_load")
    kernel = {k: v for k, v in after_load.items() if k not in ("when", "device")}
    return {
        "name": "h200",
        "device_name": name,
        "source": "facts/h200-probe.jsonl: cudaDeviceGetAttribute on a real NVIDIA H200 (CUDA runtime 13.0, driver 580.159.04)",
        "device_count": next(r["device_count"] for r in records if "device_count" in r),
        "device_attributes": {int(k): v for k, v in attributes.items()},
        "kernel_read_only": {int(k): kernel[k] for k in ("0", "1", "4")},
        "kernel_settable_defaults": {"9": kernel["9"], "10": kernel["10"], "15": kernel["15"]},
    }


if __name__ == "__main__":
    with open(sys.argv[1]) as handle:
        json.dump(build(handle.readlines()), sys.stdout, indent=1, sort_keys=True)
        print()
