"""Compare two checkouts of emu on the in-process figures, in alternating processes.

    git worktree add ../emu-before <commit>
    python benchmarks/ab.py ../emu-before [--rounds 3] [--repeat 5] [--realworld]

Runs the never-seen and parsed-once per-object measurements of bench.py for this
checkout and the other one in turn, each in a fresh process, `--rounds` times, and
prints each round and the median of the rounds.  This machine's speed drifts by 10-20%
over minutes, so a change is only visible when both sides run in the same minutes.
`--realworld` runs the real-world exports (tests/fixtures/realworld) instead of the
4.8.0 fixtures.  Each run is timed in the CPU time of the measuring thread (`--wall` for wall
time): other work on this 2-core machine then lengthens neither side.  A comparison, not a benchmark: bench.py holds the figures the README quotes.
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


def measure(root: str, repeat: int, realworld: bool, clock: str) -> dict:
    if realworld:          # every host folder the corpus has
        fixtures, patterns = os.path.join(HERE, "tests", "fixtures", "realworld"), "*"
    else:
        fixtures, patterns = os.path.join(HERE, "tests", "fixtures", "cutlass-dsl-4.8.0"), "x86_64,aarch64"
    out = subprocess.run([sys.executable, "-c", CHILD, root, fixtures, patterns, str(repeat), clock], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", help="the other checkout (a git worktree of the commit to compare with)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--realworld", action="store_true", help="the real-world exports instead of the 4.8.0 fixtures")
    parser.add_argument("--wall", action="store_true", help="wall time instead of the CPU time the process used "
                        "(CPU time leaves out waiting for a core, which other work on this 2-core machine adds)")
    args = parser.parse_args()
    sides = {"this": HERE, "other": os.path.abspath(args.other)}
    results: dict[str, list[dict]] = {side: [] for side in sides}
    for round_ in range(args.rounds):
        for side, root in sides.items():
            figures = measure(root, args.repeat, args.realworld, "perf_counter" if args.wall else "thread_time")
            results[side].append(figures)
            print(f"round {round_ + 1} {side:5} never seen {figures['cold_ms']:.3f} ms, parsed once {figures['warm_ms']:.3f} ms")
    for key, label in (("cold_ms", "never seen"), ("warm_ms", "parsed once")):
        this = statistics.median(r[key] for r in results["this"])
        other = statistics.median(r[key] for r in results["other"])
        print(f"{label:12} this {this:.3f} ms, other {other:.3f} ms, this/other {this / other:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
