"""What the benchmark scripts share: the fixtures they run, timing `python -m emu` processes, check folders."""
from __future__ import annotations

import glob
import os
import re
import resource
import subprocess
import time


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "cutlass-dsl-4.8.0")


def fixture_paths() -> list[str]:
    """The 36 DSL 4.8.0 fixtures of both architectures that the in-process and check figures run."""
    return sorted(glob.glob(os.path.join(FIXTURES, "x86_64", "*.o")) + glob.glob(os.path.join(FIXTURES, "aarch64", "*.o")))


IMPORT_FLOOR = "import unicorn, yaml, pydantic; from pydantic import BaseModel"     # the import floor


def import_floor_under_emu_gc() -> str:
    """The floor's imports under the garbage collector's threshold emu/__main__.py sets (its GC_THRESHOLD, read
    from the file: importing it would run emu): what part of emu's cold gain that setting alone would give."""
    with open(os.path.join(ROOT, "emu", "__main__.py")) as handle:
        threshold = re.search(r"^GC_THRESHOLD = ([0-9_]+)", handle.read(), re.M)
    assert threshold, "emu/__main__.py no longer sets GC_THRESHOLD"
    return f"import gc; gc.set_threshold({threshold.group(1)}, 10, 10); {IMPORT_FLOOR}"


def process_env(**extra: str) -> dict[str, str]:
    """This environment, plus `extra`, without PYTHONDONTWRITEBYTECODE: processes run as an installed emu
    does, with Python's bytecode cache (a shell that sets it would make every run compile emu from source)."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def timed_run(argv: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float, str]:
    """Run a command: its wall time, the CPU time (user + system) of it and its children, and its stdout."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    out = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=False)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, out.stdout


def check_dirs(paths: list[str], folder: str) -> tuple[str, str]:
    """Folders `one` (the first of `paths`) and `every` (all of them) under `folder`, as symlinks in order:
    what a `python -m emu check DIR` benchmark compares."""
    one, every = os.path.join(folder, "check_one"), os.path.join(folder, "check_every")
    os.makedirs(one)
    os.makedirs(every)
    os.symlink(paths[0], os.path.join(one, "00.o"))
    for index, path in enumerate(paths):
        os.symlink(path, os.path.join(every, f"{index:02}.o"))
    return one, every


# `python -c FIRST_PASS_CHECK DIR`: check DIR's first object, then, timed in the CPU time of the measuring
# thread, the others with emu.commands.check.check_objects; prints ms per object past the first.  The
# in-process first pass (store read, mapping, translation, run, comparison) without the two whole
# processes whose difference the process figure is, and which swings by more than the figure itself.
FIRST_PASS_CHECK = r"""
import glob, sys, time
from emu.commands.check import check_objects
paths = sorted(glob.glob(sys.argv[1] + "/*.o"))
check_objects(paths[:1])
start = time.thread_time(); check_objects(paths[1:]); elapsed = time.thread_time() - start
print(elapsed / (len(paths) - 1) * 1e3)
"""
