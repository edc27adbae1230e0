"""emu's benchmark suite: every figure of the performance targets, measured in one run.

    python benchmarks/bench.py [--repeat N] [--json]

Prints times and ratios (medians; this is a noisy 2-core machine) for:
  1. in-process cost per object (parse, lay out, relocate, map, run cuda_load and
     cuda_load_to_device, record): cold (never seen: LIEF parse, no stores) and warm
     (the image already parsed), median over every committed 4.8.0 fixture, and over
     the real-world exports when tests/fixtures/realworld holds them; and the mean of
     the warm runs (the objects run in turn: what a matrix pays);
  2. whole-process `python -m emu run` of a one-object scenario (cuda_init, cuda_load,
     cuda_load_to_device, launch; image store warm) against `cc -O0 recorder.c object.o
     && ./a.out` on the same object (tests/fixtures/recorder.py's harness), and against
     the floors `python -c pass` and `python -c "import unicorn, pydantic..."`: cold
     (EMU_NO_SERVER=1) and served by a `python -m emu serve` this script starts;
  3. `python -m emu check DIR`: the cost of each object past the first, as a process,
     cold and served, and in one process (harness.FIRST_PASS_CHECK);
  4. 1,000 object runs in one process: total time, resident memory growth, and what
     their `--json` output costs;
  5. an export with 64 kernels against one with 1;
  6. host-CPU (AVX) exports against their portable twins;
  7. the in-process floors (benchmarks/floors.py): the same runs with every stub a
     do-nothing callback, then with the object's code translated afresh, and LIEF's
     parse: what no tuning of emu's own Python can go below.
Every ratio compares figures measured in the same run.  Nothing here is a test: it
reports, and the README quotes its output.
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

from floors import in_process_floors  # noqa: E402
from goals import check_against_floor, shared_library_row, tvm_ffi_row  # noqa: E402
from goals import spread as _spread  # noqa: E402
from harness import FIRST_PASS_CHECK, FIXTURES, IMPORT_FLOOR, check_dirs, fixture_paths, import_floor_under_emu_gc, process_env, \
    timed_run  # noqa: E402
from emu.cache import loaded as images  # noqa: E402
from emu.dsl.entries import EntrySpec  # noqa: E402
from emu.run.session import run_object  # noqa: E402

LOADERS = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]
WITH_LAUNCH = [EntrySpec(name=name) for name in ("cuda_init", "cuda_load", "cuda_load_to_device", "launch")]
REALWORLD = os.path.join(ROOT, "tests", "fixtures", "realworld")
ONE_OBJECT = os.path.join(FIXTURES, "x86_64", "carveout_25.o")
TARGETS = {"warm_ms": 0.07, "cold_ms": 0.25, "thousand_s": 1.0, "thousand_rss_mib": 10.0, "process_vs_cc": 2.0,
           "check_per_object_ms": 0.3, "json_vs_runs": 1.0, "avx_vs_portable": 1.5}


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
    # the mean beside the median: what a matrix running the objects in turn pays, slow objects included
    return {"objects": len(paths), "cold_ms": statistics.median(cold) * 1e3, "warm_ms": statistics.median(warm) * 1e3,
            "warm_mean_ms": statistics.fmean(warm) * 1e3}


def thousand(paths: list[str]) -> dict:
    """1,000 runs: their time and the memory they leave behind; then what printing 1,000 runs as JSON costs."""
    for path in paths:
        run_warm(path)
    before = rss_mib()
    start = time.perf_counter()
    for i in range(1000):
        run_object(paths[i % len(paths)], entries=LOADERS)
    total = time.perf_counter() - start
    growth = rss_mib() - before
    from pydantic_core import to_json
    runs = [run_object(paths[i % len(paths)], entries=LOADERS) for i in range(1000)]
    start = time.perf_counter()
    to_json([run.model_dump(mode="json") for run in runs], indent=1)         # what `trace --json` prints (emu.commands.cli)
    return {"total_s": total, "rss_growth_mib": growth, "json_s": time.perf_counter() - start}


def timed_processes(commands: dict[str, tuple], repeat: int) -> dict[str, float]:
    """The median wall time of each command (argv, working folder[, environment]), run in turn `repeat` times,
    and as `<key>_cpu` the median CPU time (user + system) of the command and its children.

    The commands alternate, so that a drift in this machine's speed over the minutes
    touches every one of them alike and their ratios hold; CPU time does not count the
    time a process waits for a core, which a machine shared with other work adds to
    wall time.  Each runs once first (warm-up).
    """
    def once(argv: list[str], cwd: str, env: dict | None = None) -> tuple[float, float]:
        return timed_run(argv, cwd, env or process_env())[:2]

    for command in commands.values():
        once(*command)
    times: dict[str, list[float]] = {}
    for _ in range(repeat):
        for key, command in commands.items():
            wall, cpu = once(*command)
            times.setdefault(key, []).append(wall)
            times.setdefault(f"{key}_cpu", []).append(cpu)
    medians: dict = {key: statistics.median(values) for key, values in times.items()}
    medians["rounds"] = [{key: values[index] for key, values in times.items()} for index in range(repeat)]
    return medians


ONE_OBJECT_SCENARIO = """description: one object, every loader and the launch (benchmarks/bench.py)
objects: [{object}]
entries: [cuda_init, cuda_load, cuda_load_to_device, launch]
"""


def cold_env(**extra: str) -> dict[str, str]:
    return process_env(EMU_NO_SERVER="1", **extra)


def source_copy(folder: str) -> str:
    """emu/ and stub_models/ copied without their __pycache__: what a process with PYTHONDONTWRITEBYTECODE=1
    finds in a checkout that never wrote bytecode (an editable install, a CI job with the variable set)."""
    copy = os.path.join(folder, "source")
    if not os.path.isdir(copy):
        for package in ("emu", "stub_models"):
            shutil.copytree(os.path.join(ROOT, package), os.path.join(copy, package),
                            ignore=shutil.ignore_patterns("__pycache__"))
    return copy


class WarmServer:
    """A `python -m emu serve` in a private folder of its own, for the served figures."""

    def __init__(self, folder: str):
        self.env = process_env(EMU_SERVER_DIR=os.path.join(folder, "server"))
        self.env.pop("EMU_NO_SERVER", None)
        self.process = subprocess.Popen([sys.executable, "-m", "emu", "serve"], cwd=ROOT, env=self.env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        status = [sys.executable, "-m", "emu", "serve", "--status"]
        while subprocess.run(status, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, check=False).returncode != 0:
            if self.process.poll() is not None:
                raise SystemExit("bench: `python -m emu serve` exited before it answered")
            time.sleep(0.2)

    def served(self) -> int:
        """How many commands the server ran: the served figures count only if it ran every one of them."""
        status = subprocess.run([sys.executable, "-m", "emu", "serve", "--status"], cwd=ROOT, env=self.env,
                                capture_output=True, text=True, check=False).stdout
        return int(status.split(" command(s) served")[0].rsplit(" ", 1)[1]) if " command(s) served" in status else -1

    def stop(self) -> None:
        subprocess.run([sys.executable, "-m", "emu", "serve", "--stop"], cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, check=False)
        self.process.wait(timeout=120)


def whole_process(repeat: int, folder: str, server: WarmServer) -> dict:
    """`python -m emu run` of a one-object scenario, cold and served, against cc + link + run of the C recorder on that object."""
    scenario = os.path.join(folder, "one_object.yaml")
    with open(scenario, "w") as handle:
        handle.write(ONE_OBJECT_SCENARIO.format(object=json.dumps(ONE_OBJECT)))
    emu_argv = [sys.executable, "-m", "emu", "run", "--quiet", scenario]
    subprocess.run(emu_argv, cwd=ROOT, stdout=subprocess.DEVNULL, check=False, env=cold_env())     # fills the image store
    commands = {"interpreter_s": ([sys.executable, "-c", "pass"], ROOT),
                "import_floor_s": ([sys.executable, "-c", IMPORT_FLOOR], ROOT),
                # the same imports under the garbage-collector threshold emu/__main__.py sets: the part of emu's gain
                # that is that setting, which would speed the floor's own imports as much
                "import_floor_gc_s": ([sys.executable, "-c", import_floor_under_emu_gc()], ROOT),
                "emu_run_s": (emu_argv, ROOT, cold_env()),
                "emu_run_nopyc_s": (emu_argv, source_copy(folder), cold_env(PYTHONDONTWRITEBYTECODE="1")),
                "emu_served_s": (emu_argv, ROOT, server.env)}
    cc = shutil.which("cc")
    if cc:
        sys.path.insert(0, os.path.join(ROOT, "tests"))
        from fixtures.recorder import harness_source, launch_symbol
        _, (export,) = images.load_image(ONE_OBJECT)
        with open(ONE_OBJECT[:-2] + ".h") as handle:
            launch = launch_symbol(handle.read())
        with open(os.path.join(folder, "recorder.c"), "w") as handle:
            handle.write(harness_source(export.prefix, launch, export.kernels))
        commands["cc_link_run_s"] = (["sh", "-c", f"{cc} -O0 -w recorder.c {ONE_OBJECT} && ./a.out"], folder)
    result = timed_processes(commands, repeat)
    return result


def check_process(paths: list[str], repeat: int, folder: str, server: WarmServer) -> dict:
    """`python -m emu check DIR` of one object and of every fixture, cold and served: the cost per object past the first."""
    one, many = check_dirs(paths, folder)
    argv = [sys.executable, "-m", "emu", "check"]
    times = timed_processes({"one": (argv + [one], ROOT, cold_env()), "every": (argv + [many], ROOT, cold_env()),
                             "served_one": (argv + [one], ROOT, server.env), "served_every": (argv + [many], ROOT, server.env)}, repeat)
    figures = {"objects": len(paths)}
    for label, prefix in (("", ""), ("served_", "served_")):
        first, every = times[f"{prefix}one"], times[f"{prefix}every"]
        figures.update({f"{label}one_s": first, f"{label}all_s": every,
                        f"{label}per_object_ms": (every - first) / (len(paths) - 1) * 1e3})
    first_pass = [float(timed_run([sys.executable, "-c", FIRST_PASS_CHECK, many], ROOT, cold_env())[2].split()[-1])
                  for _ in range(repeat)]
    figures["first_pass_ms"] = statistics.median(first_pass)
    return figures


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
    load_before = os.getloadavg()[0]
    from emu.cache import image_store
    paths = fixture_paths()

    realworld = sorted(glob.glob(os.path.join(REALWORLD, "*", "*.o")))

    saved = image_store.save
    image_store.save = lambda *a, **k: None          # in-process cold runs must really parse
    try:
        figures = {"per_object": per_object(paths, args.repeat), "thousand": thousand(paths),
                   "kernels": kernel_scaling(args.repeat), "avx": avx_twins(args.repeat)}
        if realworld:
            figures["realworld"] = per_object(realworld, args.repeat)
        figures["floors"] = in_process_floors(paths, LOADERS, args.repeat)
    finally:
        image_store.save = saved
    figures["check_floor"] = check_against_floor(paths, args.repeat)
    with tempfile.TemporaryDirectory() as folder:
        figures["shared_library"] = shared_library_row(ONE_OBJECT, LOADERS, args.repeat, folder)
    figures["tvm_ffi"] = tvm_ffi_row(ONE_OBJECT, WITH_LAUNCH, args.repeat)
    with tempfile.TemporaryDirectory() as folder:
        server = WarmServer(folder)
        try:
            figures["process"] = whole_process(args.repeat, folder, server)
            figures["check"] = check_process(paths, args.repeat, folder, server)
            figures["served_commands"] = {"expected": 3 * (args.repeat + 1), "served": server.served()}
        finally:
            server.stop()
    figures["machine"] = {"cores": os.cpu_count(), "load_before": load_before, "load_after": os.getloadavg()[0]}
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        report_goals(figures)
        report(figures)
    return 0


GOALS = {"cold_vs_import_floor": 1.3, "served_vs_cc": 1.0, "check_ms": 0.3, "check_vs_floor": 1.2,
         "parsed_vs_idle": 1.3, "form_vs_o": 1.5}


def _meets(ratio: float, target: float) -> str:
    return f"target {target}x: " + ("met" if ratio <= target else f"MISSED by {ratio - target:.2f}x")


def report_goals(f: dict) -> None:
    """The five goals of the speed issue, each as a ratio to its floor measured beside it in this run."""
    def line(goal: str, label: str, value: str, ratio: str) -> None:
        print(f"{goal:<3} {label:<66} {value:>24}  {ratio}")

    w = f["process"]
    rounds = w["rounds"]
    m = f["machine"]
    print(f"machine: {m['cores']} cores, load average {m['load_before']:.1f} at the start, {m['load_after']:.1f} at the end")
    print("goals (each against its floor, measured side by side in this run; medians, [spread of the per-round ratio])")
    for key, how in (("emu_run_s", "bytecode cache on, as users run"),
                     ("emu_run_nopyc_s", "PYTHONDONTWRITEBYTECODE=1, emu never compiled")):
        ratios = [r[key] / r["import_floor_s"] for r in rounds]
        line("1", f"cold `python -m emu run`, one object / import floor ({how})",
             f"{w[key] * 1e3:.0f} / {w['import_floor_s'] * 1e3:.0f} ms",
             f"{statistics.median(ratios):.2f}x {_spread(ratios)} {_meets(statistics.median(ratios), GOALS['cold_vs_import_floor'])}")
        if "import_floor_gc_s" in w:
            ratios = [r[key] / r["import_floor_gc_s"] for r in rounds]
            line("", "  the same / the floor under emu's garbage-collector threshold",
                 f"{w[key] * 1e3:.0f} / {w['import_floor_gc_s'] * 1e3:.0f} ms", f"{statistics.median(ratios):.2f}x {_spread(ratios)}")
    if "cc_link_run_s" in w:
        ratios = [r["emu_served_s"] / r["cc_link_run_s"] for r in rounds]
        line("2", "served `python -m emu run` / cc -O0 recorder.c object.o && ./a.out",
             f"{w['emu_served_s'] * 1e3:.0f} / {w['cc_link_run_s'] * 1e3:.0f} ms",
             f"{statistics.median(ratios):.2f}x {_spread(ratios)} {_meets(statistics.median(ratios), GOALS['served_vs_cc'])}")
        ratios = [r["interpreter_s"] / r["cc_link_run_s"] for r in rounds]
        line("", "  floor of a served run: `python -c pass` / cc+link+run",
             f"{w['interpreter_s'] * 1e3:.0f} / {w['cc_link_run_s'] * 1e3:.0f} ms", f"{statistics.median(ratios):.2f}x {_spread(ratios)}")
    else:
        line("2", "served run / cc+link+run", "not measured: no cc on PATH", "")
    c = f["check_floor"]
    # per round: what the goal allows (the larger of 0.3 ms and 1.2x that round's floor), and which bound it was
    allowed = [max(GOALS["check_ms"], GOALS["check_vs_floor"] * r["floor_ms"]) for r in c["rounds"]]
    over = [r["check_ms"] / bound for r, bound in zip(c["rounds"], allowed)]
    by_floor = sum(bound > GOALS["check_ms"] for bound in allowed)
    which = (f"1.2x its floor in {by_floor} of {len(allowed)} rounds" if by_floor else "0.3 ms in every round")
    line("3", "`check`, per object from the store, translated afresh / its floor", f"{c['check_ms']:.3f} / {c['floor_ms']:.3f} ms",
         f"{statistics.median(c['ratios']):.2f}x {_spread(c['ratios'])}; allowed: the larger of 0.3 ms and 1.2x the floor "
         f"({which}); check / allowed {statistics.median(over):.2f}x {_spread(over)}: "
         + ("met" if statistics.median(over) <= 1 else f"MISSED by {statistics.median(over) - 1:.2f}x of the allowed"))
    line("", "  floor = translated idle run + store read + stub share",
         f"{c['translated']:.3f} + {c['store_read']:.3f} + {c['stub_share']:.3f} ms", "")
    fl = f["floors"]
    ratios = fl["warm_over_idle"]
    line("4", "in process, already parsed / idle-stub floor (floors.py)", f"{fl['warm_ms']:.3f} / {fl['idle_ms']:.3f} ms",
         f"{statistics.median(ratios):.2f}x {_spread(ratios)} {_meets(statistics.median(ratios), GOALS['parsed_vs_idle'])}")
    for key, label in (("shared_library", "a shared library's loaders / its .o's loaders, per object"),
                       ("tvm_ffi", "a TVM-FFI entry call / the .o CuTe-ABI loaders + launch, per object")):
        row = f[key]
        if "not_measured" in row:
            line("5", label, "not measured", row["not_measured"] + (f" ({row['how']})" if row.get("how") else ""))
            continue
        form_ms, reference_ms = row["same_object_ms"]
        line("5", label, f"{form_ms:.3f} / {reference_ms:.3f} ms",
             f"{row['same_object_ratio']:.2f}x {_spread(row['same_object_ratios'])} {_meets(row['same_object_ratio'], GOALS['form_vs_o'])} "
             f"({row['objects']} object(s), {row['how']}; each object run 5 times over)")
        between = row.get("between_objects")
        if between and "not_measured" in between:
            line("", "  in turn with objects", "not measured", between["not_measured"])
        elif between:
            line("", "  in turn with objects: its .o, the library, another .o (a switch each run)",
                 f"{between['library_ms']:.3f} / {between['reference_ms']:.3f} ms",
                 f"{between['ratio']:.2f}x {_spread(between['ratios'])} {_meets(between['ratio'], GOALS['form_vs_o'])}")
        line("", "  the same objects run in turn (a switch of object each run; the references switch only "
             "where they differ)" if not between else "  the libraries in turn with each other "
             "(all at one base; the .o's in turn)", "", f"{row['ratio']:.2f}x {_spread(row['ratios'])}")
        if row["refused"]:
            line("", f"  {len(row['refused'])} object(s) not run by this emu, e.g.", "", row["refused"][0][:160])
    print()


def report(f: dict) -> None:
    def line(label: str, value: str, ratio: str = "", verdict: str = "") -> None:
        print(f"{label:<60} {value:>15} {ratio:>28} {verdict}")

    def verdict(ok: bool) -> str:
        return "meets target" if ok else "MISSES target"

    p, t, k, a, w, c = f["per_object"], f["thousand"], f["kernels"], f["avx"], f["process"], f["check"]
    print(f"emu benchmark ({p['objects']} fixtures; medians)")
    for label, figures in (("", p), ("real-world ", f.get("realworld"))):
        if figures is None:
            continue
        for key, what in (("warm_ms", "already parsed"), ("cold_ms", "never seen")):
            target = TARGETS[key]
            line(f"in-process per {label}object, {what} ({figures['objects']})", f"{figures[key]:.3f} ms",
                 f"{figures[key] / target:.2f}x target {target} ms", verdict(figures[key] <= target))
        line("  the mean of the same already-parsed runs, in turn", f"{figures['warm_mean_ms']:.3f} ms")
    floors(f["floors"], line)
    cc = w.get("cc_link_run_s")
    if cc:
        for key, how in (("emu_run_s", "cold (EMU_NO_SERVER=1)"), ("emu_served_s", "served (python -m emu serve)")):
            ratio = w[key] / cc
            line(f"python -m emu run, one object, 4 entries, {how}", f"{w[key] * 1e3:.1f} ms",
                 f"{ratio:.2f}x cc+run, target {TARGETS['process_vs_cc']}x", verdict(ratio <= TARGETS["process_vs_cc"]))
        line("cc -O0 recorder.c object.o && ./a.out (same object)", f"{cc * 1e3:.1f} ms", "1.00x")
        for key, label in (("interpreter_s", "python -c pass"), ("import_floor_s", "python -c 'import unicorn, yaml, pydantic...'")):
            line(f"  floor: {label}", f"{w[key] * 1e3:.1f} ms", f"{w[key] / cc:.2f}x cc+run")
        line("  CPU time: emu run cold / cc+run / import floor", f"{w['emu_run_s_cpu'] * 1e3:.0f} / {w['cc_link_run_s_cpu'] * 1e3:.0f} / "
             f"{w['import_floor_s_cpu'] * 1e3:.0f} ms", f"{w['emu_run_s_cpu'] / w['cc_link_run_s_cpu']:.2f}x cc+run")
    served = f["served_commands"]
    line("  commands the server ran / the served figures' commands", f"{served['served']} / {served['expected']}", "",
         "" if served["served"] == served["expected"] else "SERVED FIGURES INVALID (the server refused some: sources changed?)")
    for prefix, how in (("", "cold"), ("served_", "served")):
        per_object = c[f"{prefix}per_object_ms"]
        line(f"python -m emu check DIR, per object past the first ({c['objects']}), {how}", f"{per_object:.3f} ms",
             f"{per_object / TARGETS['check_per_object_ms']:.2f}x target 0.3 ms", verdict(per_object <= TARGETS["check_per_object_ms"]))
        line(f"  python -m emu check DIR of one object, {how}", f"{c[f'{prefix}one_s'] * 1e3:.1f} ms")
    line("  the same objects in one process (check_objects; CPU time)", f"{c['first_pass_ms']:.3f} ms",
         f"{c['first_pass_ms'] / TARGETS['check_per_object_ms']:.2f}x target 0.3 ms")
    line("1,000 object runs in one process", f"{t['total_s']:.3f} s", f"{t['total_s']:.2f}x target 1 s", verdict(t['total_s'] <= 1.0))
    line("  resident memory growth over them", f"{t['rss_growth_mib']:.2f} MiB", "target < 10 MiB", verdict(t['rss_growth_mib'] < 10))
    line("  their --json output (model_dump + to_json, as emu.commands.cli)", f"{t['json_s']:.3f} s", f"{t['json_s'] / t['total_s']:.2f}x the runs, target 1x",
         verdict(t['json_s'] <= t['total_s']))
    line("64 kernels vs 1, warm", f"{k['kernels_64_warm_ms']:.2f} / {k['kernels_1_warm_ms']:.2f} ms",
         f"{k['kernels_64_warm_ms'] / k['kernels_1_warm_ms']:.1f}x ({(k['kernels_64_warm_ms'] - k['kernels_1_warm_ms']) / 63:.3f} ms/kernel)")
    line("64 kernels vs 1, cold", f"{k['kernels_64_cold_ms']:.2f} / {k['kernels_1_cold_ms']:.2f} ms", f"{k['kernels_64_cold_ms'] / k['kernels_1_cold_ms']:.1f}x")
    line("host-CPU (AVX) vs portable twin, warm", f"{a['avx_warm']:.3f} / {a['portable_warm']:.3f} ms", f"{a['avx_warm'] / a['portable_warm']:.2f}x target 1.5x", verdict(a['avx_warm'] / a['portable_warm'] <= 1.5))
    line("host-CPU (AVX) vs portable twin, cold", f"{a['avx_cold']:.3f} / {a['portable_cold']:.3f} ms", f"{a['avx_cold'] / a['portable_cold']:.2f}x target 1.5x", verdict(a['avx_cold'] / a['portable_cold'] <= 1.5))


def floors(fl: dict, line) -> None:
    """The in-process floors (benchmarks/floors.py), each as a share of the real warm run alternating with it:
    a share is what to read, since this machine's speed drifts between sections of one bench run."""
    warm = fl["warm_ms"]
    line("  floors: the real warm run they alternate with", f"{warm:.3f} ms",
         f"stub calls {fl['real_calls']:.0f} / idle {fl['idle_calls']:.0f}")
    for key, label in (("idle_ms", "every stub a do-nothing callback"),
                       ("translated_ms", "the same, Unicorn translating the code afresh"),
                       ("parsed_ms", "LIEF parsing the object alone")):
        line(f"  floor: {label}", f"{fl[key]:.3f} ms", f"{fl[key] / warm:.2f}x the real warm run")


if __name__ == "__main__":
    sys.exit(main())
