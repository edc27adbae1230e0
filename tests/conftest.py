"""Shared test helpers (fixture paths, a CLI runner) and the suite's isolation from the user's machine.

Before anything imports emu, every pytest process (each xdist worker too) points `EMU_CACHE_DIR` at a
temporary folder of its own, removed at exit, so no test reads or writes the user's `~/.cache/emu` and no
test sees an entry another process stored.  The CuTe DSL builds of the matrix go to `EMU_DSL_CACHE_DIR`
(default: `.emu-cache/dsl` in the repository, content-addressed; never the user's home).

Hypothesis profiles: `ci` (derandomized, no deadline, no example database: a run is a function of the
code) is chosen with `--hypothesis-profile ci` (`.ci/run` does); under xdist the default profile drops
deadlines too, since two workers on two cores make any per-example deadline a timing assertion.

The `oracle` marker tags tests whose assertion compares emu with something independent of emu (a native
run, GNU ld, the real CPU, H200 facts); `python tests/oracle_share.py` counts them.
"""
from __future__ import annotations

import atexit
import io
import json
import os
import shutil
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import settings

_STORE = tempfile.mkdtemp(prefix=f"emu-test-store-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-")
os.environ["EMU_CACHE_DIR"] = _STORE
atexit.register(shutil.rmtree, _STORE, ignore_errors=True)

settings.register_profile("ci", derandomize=True, deadline=None, database=None, print_blob=True)
settings.register_profile("xdist", deadline=None)
if os.environ.get("PYTEST_XDIST_WORKER"):
    settings.load_profile("xdist")


def pytest_configure(config):
    config.addinivalue_line("markers", "oracle: the assertion compares emu with something independent of emu "
                                       "(a native run, GNU ld, the real CPU, H200 facts)")

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
DSL480 = FIXTURES / "cutlass-dsl-4.8.0"


def fixture(host: str, name: str, version: str = "4.8.0") -> str:
    return str(FIXTURES / f"cutlass-dsl-{version}" / host / f"{name}.o")


def manifest() -> list[dict]:
    """Every committed fixture, as tests/fixtures/MANIFEST.json describes it."""
    return json.loads((FIXTURES / "MANIFEST.json").read_text())["fixtures"]


class CliResult:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    def json(self):
        return json.loads(self.out)


def run_cli(*args: str) -> CliResult:
    """Run `python -m emu ARGS` in-process, capturing stdout and stderr."""
    from emu.cli import main
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    return run_cli
