"""Compare two checkouts of emu on the in-process figures, in alternating processes.

    git worktree add ../emu-before <commit>
    python benchmarks/ab.py ../emu-before [--rounds 3] [--repeat 5] [--realworld] [--switch]

Runs the never-seen and parsed-once per-object measurements of bench.py for this
checkout and the other one in turn, each in a fresh process, `--rounds` times, and
prints each round and the median of the rounds.  This machine's speed drifts by 10-20%
over minutes, so a change is only visible when both sides run in the same minutes.
`--realworld` runs the real-world exports (tests/fixtures/realworld) instead of the
4.8.0 fixtures.  `--switch` measures what switching between already-parsed objects costs
instead: each child runs the objects in turn (a switch of object every run: what a pytest
matrix or `check DIR` over many objects pays) and repeated (each object `--repeat` times in
a row; the first run of each row, a switch, left out), and reports the mean and median per
run of each and the time in `Machine.load` per run in turn (the switch itself), e.g.
`python benchmarks/ab.py ../emu-before --realworld --switch --rounds 5`.  Each run is timed
in the CPU time of the measuring thread (`--wall` for wall time): other work on this 2-core
machine then lengthens neither side.  A comparison, not a benchmark: bench.py holds the
figures the README quotes.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Run inside the child, with the checkout to measure first on sys.path; the fixtures
# always come from this checkout, so both sides run the same objects.
CHILD = r"""
import glob, json, os, statistics, sys, tempfile, time
root, fixtures, patterns, repeat, clock_name = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
clock = getattr(time, clock_name)
sys.path.insert(0, root)
os.environ["EMU_CACHE_DIR"] = tempfile.mkdtemp(prefix="emu-ab-store-")
try:                                    # the package layout (emu/cache, emu/dsl, emu/run)
    from emu.cache import image_store, loaded as images
    from emu.dsl.entries import EntrySpec
    from emu.run.session import run_object
except ImportError:                     # a checkout from before it: every module at emu's top level
    from emu import image_store, images
    from emu.entries import EntrySpec
    from emu.run import run_object
image_store.save = lambda *a, **k: None
entries = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]
paths = sorted(p for pattern in patterns.split(",") for p in glob.glob(os.path.join(fixtures, pattern, "*.o")))
for path in paths:
    run_object(path, entries=entries)
cold, warm = [], []
for _ in range(repeat):
    for path in paths:
        images._CACHE.clear()
        start = clock(); run_object(path, entries=entries); cold.append(clock() - start)
for path in paths:
    run_object(path, entries=entries)
for _ in range(repeat):
    for path in paths:
        start = clock(); run_object(path, entries=entries); warm.append(clock() - start)
print(json.dumps({"cold_ms": statistics.median(cold) * 1e3, "warm_ms": statistics.median(warm) * 1e3}))
"""

SWITCH_CHILD = r"""
import glob, json, os, statistics, sys, tempfile, time
root, fixtures, patterns, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
clock = time.thread_time
sys.path.insert(0, root)
os.environ["EMU_CACHE_DIR"] = tempfile.mkdtemp(prefix="emu-switch-store-")
from emu.cache import image_store
from emu.dsl.entries import EntrySpec
from emu.emulator import machine as machine_module
from emu.run.session import run_object
image_store.save = lambda *a, **k: None
entries = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]
paths = sorted(p for pattern in patterns.split(",") for p in glob.glob(os.path.join(fixtures, pattern, "*.o")))
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

FIGURES = (("cold_ms", "never seen"), ("warm_ms", "parsed once"))
SWITCH_FIGURES = (("turn_mean_ms", "in turn, mean"), ("turn_median_ms", "in turn, median"),
                  ("repeated_mean_ms", "repeated, mean"), ("repeated_median_ms", "repeated, median"),
                  ("turn_load_ms", "Machine.load per run in turn"))


def measure(root: str, repeat: int, realworld: bool, clock: str, switch: bool = False) -> dict:
    if realworld:          # every host folder the corpus has
        fixtures, patterns = os.path.join(HERE, "tests", "fixtures", "realworld"), "*"
    else:
        fixtures, patterns = os.path.join(HERE, "tests", "fixtures", "cutlass-dsl-4.8.0"), "x86_64,aarch64"
    argv = [SWITCH_CHILD, root, fixtures, patterns, str(repeat)] if switch else [CHILD, root, fixtures, patterns, str(repeat), clock]
    out = subprocess.run([sys.executable, "-c", *argv], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", help="the other checkout (a git worktree of the commit to compare with)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--realworld", action="store_true", help="the real-world exports instead of the 4.8.0 fixtures")
    parser.add_argument("--wall", action="store_true", help="wall time instead of the CPU time the process used "
                        "(CPU time leaves out waiting for a core, which other work on this 2-core machine adds)")
    parser.add_argument("--switch", action="store_true", help="what a switch between already-parsed objects costs: "
                        "the objects in turn against each repeated (CPU time)")
    args = parser.parse_args()
    figures_shown = SWITCH_FIGURES if args.switch else FIGURES
    sides = {"this": HERE, "other": os.path.abspath(args.other)}
    results: dict[str, list[dict]] = {side: [] for side in sides}
    for round_ in range(args.rounds):
        for side, root in sides.items():
            figures = measure(root, args.repeat, args.realworld, "perf_counter" if args.wall else "thread_time", args.switch)
            results[side].append(figures)
            print(f"round {round_ + 1} {side:5} " + ", ".join(f"{label} {figures[key]:.3f} ms" for key, label in figures_shown))
    for key, label in figures_shown:
        this = statistics.median(r[key] for r in results["this"])
        other = statistics.median(r[key] for r in results["other"])
        print(f"{label:28} this {this:.3f} ms, other {other:.3f} ms, this/other {this / other:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
