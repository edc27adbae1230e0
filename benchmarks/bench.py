"""emu's benchmark suite: every figure of the performance targets, measured in one run.

    python benchmarks/bench.py [--repeat N] [--json]

Prints times and ratios (medians; this is a noisy 2-core machine) for:
  1. in-process cost per object (parse, lay out, relocate, map, run cuda_load and
     cuda_load_to_device, record): cold (never seen: LIEF parse, no stores) and warm
     (the image already parsed), median over every committed 4.8.0 fixture;
  2. whole-process `python -m emu run` on the bundled scenario against the import floor
     `python -c "import lief, unicorn"` and against cc + link + run of the C recorder;
  3. 1,000 object runs in one process: total time and resident memory growth;
  4. an export with 64 kernels against one with 1;
  5. host-CPU (AVX) exports against their portable twins.
Nothing here is a test: it reports, and the README quotes its output.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from emu import images  # noqa: E402
from emu.entries import EntrySpec  # noqa: E402
from emu.run import run_object  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "cutlass-dsl-4.8.0")
LOADERS = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]
TARGETS = {"in_process_ms": 0.4, "thousand_s": 1.0, "thousand_rss_mib": 10.0, "process_vs_floor": 1.3, "avx_vs_portable": 1.5}


def rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_cold(path: str) -> float:
    """One never-seen run: no in-process image, no persistent store."""
    images._CACHE.clear()
    start = time.perf_counter()
    run_object(path, entries=LOADERS)
    return time.perf_counter() - start


def run_warm(path: str) -> float:
    start = time.perf_counter()
    run_object(path, entries=LOADERS)
    return time.perf_counter() - start


def per_object(paths: list[str], repeat: int) -> dict:
    for path in paths:                       # warm-up: imports, emulators, translated code
        run_warm(path)
    cold = [run_cold(p) for _ in range(repeat) for p in paths]
    for path in paths:
        run_warm(path)
    warm = [run_warm(p) for _ in range(repeat) for p in paths]
    return {"objects": len(paths), "cold_ms": statistics.median(cold) * 1e3, "warm_ms": statistics.median(warm) * 1e3}


def thousand(paths: list[str]) -> dict:
    for path in paths:
        run_warm(path)
    before = rss_mib()
    start = time.perf_counter()
    for i in range(1000):
        run_object(paths[i % len(paths)], entries=LOADERS)
    total = time.perf_counter() - start
    return {"total_s": total, "rss_growth_mib": rss_mib() - before}


def timed_process(argv: list[str], repeat: int, cwd: str = ROOT) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def whole_process(repeat: int) -> dict:
    scenario = os.path.join(ROOT, "scenarios", "seed_record_loader.yaml")
    emu_argv = [sys.executable, "-m", "emu", "run", "--quiet", scenario]
    subprocess.run(emu_argv, cwd=ROOT, stdout=subprocess.DEVNULL, check=False)     # fills the image store
    result = {
        "emu_run_s": timed_process(emu_argv, repeat),
        "import_floor_s": timed_process([sys.executable, "-c", "import lief, unicorn"], repeat),
    }
    cc = shutil.which("cc")
    if cc:
        seed = os.path.join(ROOT, "tests", "data", "seed", "record_loader.c")
        objects = [os.path.join(FIXTURES, "x86_64", f"carveout_{n}.o") for n in (25, 75)]
        with tempfile.TemporaryDirectory() as folder:
            binary = os.path.join(folder, "record_loader")
            script = f"{cc} {seed} {' '.join(objects)} -o {binary} && {binary}"
            result["cc_link_run_s"] = timed_process(["sh", "-c", script], repeat, cwd=folder)
    return result


def kernel_scaling(repeat: int) -> dict:
    one = os.path.join(ROOT, "benchmarks", "fixtures", "kernels_1.o")
    many = os.path.join(ROOT, "benchmarks", "fixtures", "kernels_64.o")
    figures = {}
    for label, path in (("kernels_1", one), ("kernels_64", many)):
        run_warm(path)
        figures[f"{label}_cold_ms"] = statistics.median(run_cold(path) for _ in range(repeat)) * 1e3
        run_warm(path)
        figures[f"{label}_warm_ms"] = statistics.median(run_warm(path) for _ in range(repeat)) * 1e3
    return figures


def avx_twins(repeat: int) -> dict:
    twins = [(os.path.join(FIXTURES, "native", f"{name}.o"), os.path.join(FIXTURES, "x86_64", f"{name}.o"))
             for name in ("carveout_25", "plain", "two_kernels_carveout_50", "mixed")]
    figures = {"avx_cold": [], "portable_cold": [], "avx_warm": [], "portable_warm": []}
    for avx, portable in twins:
        for path, label in ((avx, "avx"), (portable, "portable")):
            run_warm(path)
            figures[f"{label}_cold"].append(statistics.median(run_cold(path) for _ in range(repeat)))
            run_warm(path)
            figures[f"{label}_warm"].append(statistics.median(run_warm(path) for _ in range(repeat)))
    return {key: statistics.median(values) * 1e3 for key, values in figures.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ["EMU_CACHE_DIR"] = tempfile.mkdtemp(prefix="emu-bench-store-")   # the subprocess runs use it
    from emu import image_store
    paths = sorted(glob.glob(os.path.join(FIXTURES, "x86_64", "*.o")) + glob.glob(os.path.join(FIXTURES, "aarch64", "*.o")))

    saved = image_store.save
    image_store.save = lambda *a, **k: None          # in-process cold runs must really parse
    try:
        figures = {"per_object": per_object(paths, args.repeat), "thousand": thousand(paths),
                   "kernels": kernel_scaling(args.repeat), "avx": avx_twins(args.repeat)}
    finally:
        image_store.save = saved
    figures["process"] = whole_process(args.repeat)
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        report(figures)
    return 0


def report(f: dict) -> None:
    def line(label: str, value: str, ratio: str = "", verdict: str = "") -> None:
        print(f"{label:<58} {value:>14} {ratio:>22} {verdict}")

    def verdict(ok: bool) -> str:
        return "meets target" if ok else "MISSES target"

    p, t, k, a, w = f["per_object"], f["thousand"], f["kernels"], f["avx"], f["process"]
    print(f"emu benchmark ({p['objects']} fixtures; medians)")
    line("in-process per object, cold (parse .. record)", f"{p['cold_ms']:.3f} ms", f"{p['cold_ms'] / TARGETS['in_process_ms']:.2f}x target 0.4 ms", verdict(p['cold_ms'] <= 0.4))
    line("in-process per object, warm (image parsed)", f"{p['warm_ms']:.3f} ms", f"{p['warm_ms'] / TARGETS['in_process_ms']:.2f}x target 0.4 ms", verdict(p['warm_ms'] <= 0.4))
    line("1,000 object runs in one process", f"{t['total_s']:.3f} s", f"{t['total_s']:.2f}x target 1 s", verdict(t['total_s'] <= 1.0))
    line("  resident memory growth over them", f"{t['rss_growth_mib']:.2f} MiB", "target < 10 MiB", verdict(t['rss_growth_mib'] < 10))
    floor = w["import_floor_s"]
    line("python -m emu run (seed scenario, image store warm)", f"{w['emu_run_s'] * 1e3:.0f} ms", f"{w['emu_run_s'] / floor:.2f}x import floor", verdict(w['emu_run_s'] / floor <= 1.3))
    line('python -c "import lief, unicorn" (the import floor)', f"{floor * 1e3:.0f} ms", "1.00x")
    if "cc_link_run_s" in w:
        line("cc + link + run of the C recorder (same objects)", f"{w['cc_link_run_s'] * 1e3:.0f} ms", f"{w['cc_link_run_s'] / floor:.2f}x import floor")
    line("64 kernels vs 1, warm", f"{k['kernels_64_warm_ms']:.2f} / {k['kernels_1_warm_ms']:.2f} ms",
         f"{k['kernels_64_warm_ms'] / k['kernels_1_warm_ms']:.1f}x ({(k['kernels_64_warm_ms'] - k['kernels_1_warm_ms']) / 63:.3f} ms/kernel)")
    line("64 kernels vs 1, cold", f"{k['kernels_64_cold_ms']:.2f} / {k['kernels_1_cold_ms']:.2f} ms", f"{k['kernels_64_cold_ms'] / k['kernels_1_cold_ms']:.1f}x")
    line("host-CPU (AVX) vs portable twin, warm", f"{a['avx_warm']:.3f} / {a['portable_warm']:.3f} ms", f"{a['avx_warm'] / a['portable_warm']:.2f}x target 1.5x", verdict(a['avx_warm'] / a['portable_warm'] <= 1.5))
    line("host-CPU (AVX) vs portable twin, cold", f"{a['avx_cold']:.3f} / {a['portable_cold']:.3f} ms", f"{a['avx_cold'] / a['portable_cold']:.2f}x target 1.5x", verdict(a['avx_cold'] / a['portable_cold'] <= 1.5))


if __name__ == "__main__":
    sys.exit(main())
