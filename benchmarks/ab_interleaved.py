"""Compare two checkouts on the parsed-once run in ONE process, their runs alternated one by one.

    git worktree add ../emu-before <commit>
    python benchmarks/ab_interleaved.py ../emu-before [--arch x86_64] [--rounds 30] [--objects 'carveout_*']
    python benchmarks/ab_interleaved.py ../emu-before --paths 'tests/fixtures/realworld/*/*.o'

Both checkouts' `emu` packages are imported side by side (as emu_this and emu_other, through
symlinks in a temporary folder: emu's own imports are all relative), each with its own
Unicorn emulators, and every fixture runs on one side then the other, timed in the thread's
CPU time.  This machine's speed drifts by 2x from minute to minute and other work shares its
2 cores; alternating processes (ab.py) still left per-round ratios from 0.8 to 1.1, where
alternating single runs in one process gives the same ratio to about 2% run after run.
Reports the median, the 10th percentile and the total of each side (the total is what a
matrix pays: a few slow objects move it and not the median).  A comparison, not a benchmark.
Checkouts older than the one where a run stopped reading its device profiles through
importlib.resources("emu...") cannot be loaded under another name: compare with those
through ab.py.
"""
from __future__ import annotations

import argparse
import glob
import importlib
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_side(alias: str, root: str, folder: str, paths: list[str]):
    """`run_object` and the loader entries of the checkout at `root`, imported as package `alias`, warmed up.

    Its stub_models is imported from `root` too, under that name: the warm-up builds every model
    the fixtures use while it is the one in sys.modules, then it is taken out of sys.modules so
    that the next side imports its own (the modules of this side keep theirs).
    """
    os.symlink(os.path.join(root, "emu"), os.path.join(folder, alias))
    sys.path[:0] = [folder, root]
    try:
        try:                                # the package layout (emu/run/session.py, emu/dsl/entries.py)
            run = importlib.import_module(f"{alias}.run.session")
            entries = importlib.import_module(f"{alias}.dsl.entries")
        except ImportError:                 # a checkout from before it: every module at emu's top level
            run = importlib.import_module(f"{alias}.run")
            entries = importlib.import_module(f"{alias}.entries")
        loaders = [entries.EntrySpec(name="cuda_load"), entries.EntrySpec(name="cuda_load_to_device")]
        for _ in range(3):                  # parsed, translated, plans and models built
            for path in paths:
                run.run_object(path, entries=loaders)
    finally:
        del sys.path[:2]
        for name in [name for name in sys.modules if name == "stub_models" or name.startswith("stub_models.")]:
            del sys.modules[name]
    return run.run_object, loaders


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", help="the other checkout (a git worktree of the commit to compare with)")
    parser.add_argument("--arch", default="x86_64", help="fixture folder under tests/fixtures/cutlass-dsl-4.8.0")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--objects", default="*", help="a glob of fixture names (without .o)")
    parser.add_argument("--paths", help="a glob of objects relative to the repository, in place of --arch and --objects")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="emu-ab-")
    os.environ["EMU_CACHE_DIR"] = "off"        # no store: the two sides may write different formats
    pattern = (os.path.join(HERE, args.paths) if args.paths else
               os.path.join(HERE, "tests", "fixtures", "cutlass-dsl-4.8.0", args.arch, f"{args.objects}.o"))
    paths = sorted(glob.glob(pattern))
    if not paths:
        raise SystemExit(f"ab_interleaved: no object matches {pattern}")
    sides = {"this": load_side("emu_this", HERE, folder, paths),
             "other": load_side("emu_other", os.path.abspath(args.other), folder, paths)}
    times: dict[str, list[int]] = {side: [] for side in sides}
    clock = time.thread_time_ns
    for _ in range(args.rounds):
        for path in paths:
            for side, (run_object, entries) in sides.items():
                start = clock()
                run_object(path, entries=entries)
                times[side].append(clock() - start)
    figures = {side: (statistics.median(t) / 1e3, sorted(t)[len(t) // 10] / 1e3, sum(t) / 1e6) for side, t in times.items()}
    for side, (median, p10, total) in figures.items():
        print(f"{side:5} median {median:.1f} us, 10th percentile {p10:.1f} us, total {total:.1f} ms")
    this, other = figures["this"], figures["other"]
    print(f"this/other: median {this[0] / other[0]:.3f}, 10th percentile {this[1] / other[1]:.3f}, total {this[2] / other[2]:.3f} "
          f"({len(paths)} objects x {args.rounds} rounds, {args.paths or args.arch})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
