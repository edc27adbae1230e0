"""Where a never-seen object's time goes before its run: read, hash, store read, parse, layout, scan, export.

`python benchmarks/phases.py [--repeat N]` times each phase of `emu.cache.loaded.load_image` on its own,
then a warm run of the same object for scale, over the 36 fixtures bench.py uses (medians, in us).
The store read is a hit: the first round fills a temporary store and is not counted.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ["EMU_CACHE_DIR"] = tempfile.mkdtemp(prefix="emu-phases-store-")

from bench import LOADERS  # noqa: E402
from harness import fixture_paths  # noqa: E402
from emu.cache import image_store  # noqa: E402
from emu.arch import architecture  # noqa: E402
from emu.dsl.exports import discover  # noqa: E402
from emu.binary.elf.relocatable import build_image  # noqa: E402
from emu.binary.elf.reader import parse_object, read_object_bytes  # noqa: E402
from emu.run.session import run_object  # noqa: E402

PHASES = ("read", "sha256", "store read", "parse", "layout + relocation", "vector scan", "export", "warm run")


def phases(path: str) -> list[float]:
    """Seconds of each of PHASES for one object."""
    marks = [time.perf_counter()]
    raw = read_object_bytes(path, os.stat(path).st_size)
    marks.append(time.perf_counter())
    sha256 = hashlib.sha256(raw).hexdigest()
    marks.append(time.perf_counter())
    image_store.load(sha256, path)
    marks.append(time.perf_counter())
    obj = parse_object(raw, path, sha256)
    marks.append(time.perf_counter())
    image = build_image(obj)
    marks.append(time.perf_counter())
    architecture(obj.arch).cpu.extension_sites(image)
    marks.append(time.perf_counter())
    discover(obj, image)
    marks.append(time.perf_counter())
    run_object(path, entries=LOADERS)
    marks.append(time.perf_counter())
    return [end - start for start, end in zip(marks, marks[1:])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    paths = fixture_paths()
    times: list[list[float]] = [[] for _ in PHASES]
    for round_ in range(args.repeat + 1):
        for path in paths:
            for spent, seconds in zip(times, phases(path)):
                if round_:
                    spent.append(seconds)
    for name, spent in zip(PHASES, times):
        print(f"{name:<22} {statistics.median(spent) * 1e6:8.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
