"""Compare two checkouts of emu on `check`'s cost per object past the first, in alternating processes.

    git worktree add ../emu-before <commit>
    python benchmarks/ab_check.py ../emu-before [--rounds 7]

For each side in turn, each round: a fresh process that checks one object and then, timed, the
other 35 of the 4.8.0 fixtures (x86_64 and aarch64) with `emu.commands.check.check_objects`
(the in-process first pass: store read, mapping, translation, run, comparison; in the CPU time of
the measuring thread), and the
`python -m emu check DIR` processes of bench.py (one object, then all 36; no server), whose
difference over 35 is the process figure.  Each side has its own image store, filled before
the rounds (store warm, as bench.py measures).  Every figure is CPU time: this machine's wall
time swings with its other work, and a 300 ms process hides a 0.1 ms change per object unless
many rounds run.  A comparison, not a benchmark: bench.py holds the README's figures.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from harness import FIRST_PASS_CHECK, check_dirs, fixture_paths, process_env, timed_run

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", help="the other checkout (a git worktree of the commit to compare with)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    paths = fixture_paths()
    work = tempfile.mkdtemp(prefix="emu-ab-check-")
    one, every = check_dirs(paths, work)
    sides = {"this": HERE, "other": os.path.abspath(args.other)}
    envs = {side: process_env(PYTHONPATH=root, EMU_NO_SERVER="1", EMU_CACHE_DIR=os.path.join(work, f"store-{side}"))
            for side, root in sides.items()}
    check = [sys.executable, "-m", "emu", "check"]
    for side, root in sides.items():                  # fills each side's image store
        subprocess.run(check + [every], cwd=root, env=envs[side], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    results: dict[str, dict[str, list[float]]] = {side: {"first_pass_ms": [], "process_ms": []} for side in sides}
    for round_ in range(args.rounds):
        for side, root in sides.items():
            _, _, printed = timed_run([sys.executable, "-c", FIRST_PASS_CHECK, every], root, envs[side])
            first = timed_run(check + [one], root, envs[side])[1]
            all_ = timed_run(check + [every], root, envs[side])[1]
            results[side]["first_pass_ms"].append(float(printed.split()[-1]))
            results[side]["process_ms"].append((all_ - first) / (len(paths) - 1) * 1e3)
            print(f"round {round_ + 1} {side:5} in-process first pass {results[side]['first_pass_ms'][-1]:.3f} ms, "
                  f"process (CPU) {results[side]['process_ms'][-1]:.3f} ms per object", flush=True)
    for key, label in (("first_pass_ms", "in-process first pass"), ("process_ms", "python -m emu check DIR (CPU)")):
        this, other = (statistics.median(results[side][key]) for side in ("this", "other"))
        print(f"{label:30} per object past the first: this {this:.3f} ms, other {other:.3f} ms, this/other {this / other:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
