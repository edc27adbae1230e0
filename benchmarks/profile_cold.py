"""Where a never-seen object's time goes: each step of a cold run, timed on its own.

    python benchmarks/profile_cold.py [--repeat N] [--arch x86_64|aarch64|native]

Runs the steps `emu.cache.loaded.load_image` and `emu.run.session.run_object` take for an object the
process has not parsed (stat, read, hash, store lookup, parse, layout and relocation,
vector-site scan, export description, then the first run of the new image) and prints
the median of each over the committed 4.8.0 fixtures.  The image store is pointed at an
empty folder and never written, so every object really is parsed.  A profile, not a
benchmark: bench.py holds the figures the README quotes.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ["EMU_CACHE_DIR"] = tempfile.mkdtemp(prefix="emu-profile-store-")

from emu.cache import image_store
from emu.cache import loaded as images
from emu.binary.elf import relocatable as layout
from emu.binary.elf import reader as objfile  # noqa: E402
from emu.arch import architecture  # noqa: E402
from emu.dsl.entries import EntrySpec  # noqa: E402
from emu.dsl.exports import discover  # noqa: E402
from emu.run.session import run_object  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "cutlass-dsl-4.8.0")
LOADERS = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]


def cold_steps(path: str) -> dict[str, float]:
    """One cold load and run of `path`, split into the steps load_image takes."""
    clock, marks = time.perf_counter, []
    images._CACHE.clear()
    marks.append(("start", clock()))
    stat = os.stat(path)
    key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns)
    marks.append(("stat", clock()))
    raw = objfile.read_object_bytes(path, stat.st_size)
    marks.append(("read", clock()))
    sha256 = hashlib.sha256(raw).hexdigest()
    marks.append(("sha256", clock()))
    image_store.load(sha256, path)
    marks.append(("image store lookup", clock()))
    obj = objfile.parse_object(raw, path, sha256)
    marks.append(("parse", clock()))
    image = layout.build_image(obj)
    marks.append(("layout + relocation", clock()))
    sites = architecture(obj.arch).cpu.extension_sites(image)
    if sites:
        image.extras["vector_sites"] = sites
    marks.append(("vector-site scan", clock()))
    exports = discover(obj, image)
    marks.append(("export description", clock()))
    images._CACHE[key] = (image, exports)
    run_object(path, entries=LOADERS)
    marks.append(("first run of the image", clock()))
    steps = {name: end - begin for (_, begin), (name, end) in zip(marks, marks[1:])}
    steps["total"] = marks[-1][1] - marks[0][1]
    return steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--arch", choices=("x86_64", "aarch64", "native"), action="append")
    args = parser.parse_args()
    paths = sorted(p for arch in (args.arch or ["x86_64", "aarch64"]) for p in glob.glob(os.path.join(FIXTURES, arch, "*.o")))
    image_store.save = lambda *a, **k: None          # keep every run cold
    for path in paths:                                # warm-up: imports, emulators, translated code
        run_object(path, entries=LOADERS)
    samples: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        for path in paths:
            for name, seconds in cold_steps(path).items():
                samples.setdefault(name, []).append(seconds)
    print(f"never-seen object, {len(paths)} fixtures x {args.repeat}; median per step")
    for name, values in samples.items():
        print(f"  {name:<26} {statistics.median(values) * 1e6:8.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
