"""Where `check`'s time per object goes, past what its floor holds: a profile of `check_objects`.

    python benchmarks/profile_check.py [--rounds N] [--cprofile] [--top N]

Runs `emu.commands.check.check_objects` over the 36 DSL 4.8.0 fixtures as goals.check_against_floor
does (each object forgotten first: out of the process's image cache, its code untranslated), after a
warm-up pass, and prints the median ms per object; with --cprofile, the functions that cost most
(cumulative and own time) over those rounds.  Also times the second architecture's set-up in a fresh
interpreter (`architecture()` and `machine_for`).  A profile, not a benchmark: bench.py holds the goal.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
os.environ.setdefault("EMU_CACHE_DIR", tempfile.mkdtemp(prefix="emu-profile-check-"))

from goals import _forget  # noqa: E402
from harness import fixture_paths, process_env  # noqa: E402

SET_UP = r"""
import time
from emu.arch import architecture
from emu.emulator.machine import machine_for
architecture("x86_64"); machine_for(architecture("x86_64"))
start = time.perf_counter(); arch = architecture("aarch64"); middle = time.perf_counter()
machine = machine_for(arch); end = time.perf_counter()
print(f"{(middle - start) * 1e3:.3f} {(end - middle) * 1e3:.3f}")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--cprofile", action="store_true")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    from emu.commands.check import check_objects
    paths = fixture_paths()
    check_objects(paths)                       # warm-up: imports, both machines, the store filled
    profiler = cProfile.Profile() if args.cprofile else None
    figures = []
    for _ in range(args.rounds):
        for path in paths:
            _forget(path)
        if profiler:
            profiler.enable()
        start = time.thread_time()
        check_objects(paths)
        figures.append((time.thread_time() - start) / len(paths) * 1e3)
        if profiler:
            profiler.disable()
    print(f"check_objects, each object forgotten: {statistics.median(figures):.3f} ms per object "
          f"(CPU time; rounds {' '.join(f'{f:.3f}' for f in figures)})")
    if profiler:
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(args.top)
        stats.sort_stats("tottime").print_stats(args.top)
    sets = [subprocess.run([sys.executable, "-c", SET_UP], env=process_env(PYTHONPATH=os.path.dirname(HERE)),
                           capture_output=True, text=True, check=True).stdout.split() for _ in range(5)]
    print("aarch64 set-up after x86_64's, fresh process (ms, medians of 5): architecture() "
          f"{statistics.median(float(s[0]) for s in sets):.3f}, machine_for {statistics.median(float(s[1]) for s in sets):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
