"""Compare two checkouts on what switching between already-parsed objects costs, in alternating fresh processes.

    git worktree add ../emu-before <commit>
    python benchmarks/switch_ab.py ../emu-before [--rounds 3] [--repeat 5]

Each child runs the real-world exports (tests/fixtures/realworld, every host folder), already
parsed, in two orders: in turn (a switch of object every run: what a pytest matrix or `check DIR`
over many objects pays) and repeated (each object `--repeat` times in a row; the first run of each
row, a switch, is left out).  It reports the mean and median per run of each, and the time spent
in `Machine.load` per run in turn (the switch itself).  Times are CPU time of the measuring thread,
so other work on this 2-core machine lengthens neither side.  A comparison, not a benchmark.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import glob, json, os, statistics, sys, tempfile, time
root, fixtures, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
clock = time.thread_time
sys.path.insert(0, root)
os.environ["EMU_CACHE_DIR"] = tempfile.mkdtemp(prefix="emu-switch-store-")
from emu.cache import image_store
from emu.dsl.entries import EntrySpec
from emu.emulator import machine as machine_module
from emu.run.session import run_object
image_store.save = lambda *a, **k: None
entries = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]
paths = sorted(glob.glob(os.path.join(fixtures, "*", "*.o")))
load, spent = machine_module.Machine.load, [0.0]
def timed_load(self, *args):
    start = clock(); load(self, *args); spent[0] += clock() - start
machine_module.Machine.load = timed_load
for _ in range(2):
    for path in paths:
        run_object(path, entries=entries)
turn, repeated = [], []
spent[0] = 0.0
for _ in range(repeat):
    for path in paths:
        start = clock(); run_object(path, entries=entries); turn.append(clock() - start)
turn_load = spent[0] / len(turn)
spent[0] = 0.0
for path in paths:
    for i in range(repeat + 1):
        start = clock(); run_object(path, entries=entries); elapsed = clock() - start
        if i:
            repeated.append(elapsed)
print(json.dumps({"turn_mean_ms": statistics.fmean(turn) * 1e3, "turn_median_ms": statistics.median(turn) * 1e3,
                  "repeated_mean_ms": statistics.fmean(repeated) * 1e3, "repeated_median_ms": statistics.median(repeated) * 1e3,
                  "turn_load_ms": turn_load * 1e3}))
"""

KEYS = (("turn_mean_ms", "in turn, mean"), ("turn_median_ms", "in turn, median"), ("repeated_mean_ms", "repeated, mean"),
        ("repeated_median_ms", "repeated, median"), ("turn_load_ms", "Machine.load per run in turn"))


def measure(root: str, repeat: int) -> dict:
    fixtures = os.path.join(HERE, "tests", "fixtures", "realworld")
    out = subprocess.run([sys.executable, "-c", CHILD, root, fixtures, str(repeat)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", help="the other checkout (a git worktree of the commit to compare with)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sides = {"this": HERE, "other": os.path.abspath(args.other)}
    results: dict[str, list[dict]] = {side: [] for side in sides}
    for round_ in range(args.rounds):
        for side, root in sides.items():
            figures = measure(root, args.repeat)
            results[side].append(figures)
            print(f"round {round_ + 1} {side:5} " + ", ".join(f"{label} {figures[key]:.3f} ms" for key, label in KEYS))
    for key, label in KEYS:
        this = statistics.median(r[key] for r in results["this"])
        other = statistics.median(r[key] for r in results["other"])
        print(f"{label:30} this {this:.3f} ms, other {other:.3f} ms, this/other {this / other:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
