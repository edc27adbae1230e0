"""Compare two checkouts' cold `python -m emu run` of one object, side by side against the import floor.

    git worktree add ../emu-before <commit>
    python benchmarks/cold_ab.py ../emu-before [--rounds 15] [--nopyc]

Each round runs, in turn, fresh processes of the floor (`python -c "import unicorn, yaml, pydantic; from
pydantic import BaseModel"`), the floor under the garbage collector threshold emu/__main__.py sets (`floorgc`:
how much of a gain is the collector's on the floor's own imports), the other checkout's `python -m emu run
--quiet` of a one-object scenario (what bench.py's goal 1 runs) and this checkout's; each checkout in its own
folder with its own store (EMU_NO_SERVER=1, bytecode cache on; warmed first).  Alternating keeps a drift of this
shared machine's speed on every side alike.  Prints each side's median wall and CPU time (user + system: it
leaves out the waits for a core that other work adds to wall time), their quartiles, and the medians of the
per-round ratios to the floor.  With --nopyc each checkout runs from a copy without bytecode and
PYTHONDONTWRITEBYTECODE=1, as bench.py's second figure does.  A comparison, not a benchmark.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)

from harness import IMPORT_FLOOR, import_floor_under_emu_gc, process_env, timed_run  # noqa: E402

FLOOR = [sys.executable, "-c", IMPORT_FLOOR]
FLOOR_GC = [sys.executable, "-c", import_floor_under_emu_gc()]    # what part of a gain is the collector setting
OBJECT = os.path.join("tests", "fixtures", "cutlass-dsl-4.8.0", "x86_64", "carveout_25.o")


def side(root: str, folder: str, name: str, nopyc: bool) -> tuple[list[str], str, dict[str, str]]:
    """The command, working folder and environment of one checkout's run."""
    os.makedirs(os.path.join(folder, name))
    scenario = os.path.join(folder, name, "one_object.yaml")
    with open(scenario, "w") as handle:
        handle.write("description: one object\nobjects: [%s]\nentries: [cuda_init, cuda_load, cuda_load_to_device, launch]\n"
                     % json.dumps(os.path.join(root, OBJECT)))
    extra = {"EMU_NO_SERVER": "1", "EMU_CACHE_DIR": os.path.join(folder, f"{name}-store")}
    if nopyc:
        copy = os.path.join(folder, f"{name}-source")
        for package in ("emu", "stub_models"):
            shutil.copytree(os.path.join(root, package), os.path.join(copy, package),
                            ignore=shutil.ignore_patterns("__pycache__"))
        root, extra["PYTHONDONTWRITEBYTECODE"] = copy, "1"
    return [sys.executable, "-m", "emu", "run", "--quiet", scenario], root, process_env(**extra)


def quartiles(values: list[float]) -> str:
    q = statistics.quantiles(values, n=4)
    return f"[{q[0] * 1e3:6.1f} {q[2] * 1e3:6.1f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", help="the other checkout (a git worktree of the commit to compare with)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--nopyc", action="store_true", help="PYTHONDONTWRITEBYTECODE=1, from copies without bytecode")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="emu-cold-ab-") as folder:
        commands = {"floor": (FLOOR, HERE, process_env()), "floorgc": (FLOOR_GC, HERE, process_env()),
                    "other": side(os.path.abspath(args.other), folder, "other", args.nopyc),
                    "this": side(HERE, folder, "this", args.nopyc)}
        outputs = {}
        for name, command in commands.items():                 # warm-up: bytecode, stores, class code
            for _ in range(2):
                outputs[name] = timed_run(*command)[2]
        time.sleep(2.5)         # emu.cache.root.SETTLED_NS: a fresh copy's folders become old enough to store
        for name, command in commands.items():
            timed_run(*command)
        shown = {name: outputs[name].replace(os.path.join(folder, name), "FOLDER").replace(root, "ROOT")
                 for name, root in (("this", HERE), ("other", os.path.abspath(args.other)))}
        if shown["this"] != shown["other"]:
            print("cold_ab: the two checkouts print different output", file=sys.stderr)
        wall: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                w, c, _ = timed_run(*command)
                wall[name].append(w)
                cpu[name].append(c)
    print(f"cold one-object `python -m emu run --quiet` ({args.rounds} rounds, alternated; ms, median [quartiles]"
          f"{', PYTHONDONTWRITEBYTECODE=1' if args.nopyc else ''}; floorgc: the floor with emu's GC threshold)")
    for name in commands:
        print(f"  {name:6} wall {statistics.median(wall[name]) * 1e3:6.1f} {quartiles(wall[name])}"
              f"   cpu {statistics.median(cpu[name]) * 1e3:6.1f} {quartiles(cpu[name])}")
    for name in ("other", "this"):
        for label, times in (("wall", wall), ("cpu", cpu)):
            ratios = [a / f for a, f in zip(times[name], times["floor"])]
            print(f"  {name:6} / floor ({label}): median of rounds {statistics.median(ratios):.3f}, "
                  f"of medians {statistics.median(times[name]) / statistics.median(times['floor']):.3f}")
    ratios = [a / f for a, f in zip(cpu["this"], cpu["floorgc"])]
    print(f"  this   / floorgc (cpu): median of rounds {statistics.median(ratios):.3f}")
    ratios = [a / b for a, b in zip(cpu["this"], cpu["other"])]
    print(f"  this / other (cpu): median of rounds {statistics.median(ratios):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
