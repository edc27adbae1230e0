"""Shared test helpers (fixture paths, a CLI runner) and the suite's isolation from the user's machine.

Before anything imports emu, every pytest process (each xdist worker too) points `EMU_CACHE_DIR` at a
temporary folder of its own, removed at exit, so no test reads or writes the user's `~/.cache/emu` and no
test sees an entry another process stored.  CuTe DSL builds (scenarios' `build:` blocks and the feature
matrix) go to the suite's own content-keyed caches, `.emu-cache/builds` and `.emu-cache/dsl` in the
repository (`EMU_BUILD_CACHE_DIR`, `EMU_DSL_CACHE_DIR`), whatever the environment says.

Hypothesis profiles: `ci` (derandomized, no deadline, no example database: a run is a function of the
code) is chosen with `--hypothesis-profile ci` (`.ci/run` does); under xdist the default profile drops
deadlines too, since two workers on two cores make any per-example deadline a timing assertion.

The `oracle` marker tags tests whose assertion compares emu with something independent of emu (a native
run, GNU ld, the real CPU, H200 facts): each such test carries `@pytest.mark.oracle(X)` itself, with a
name from tests/oracles; `python .ci/oracle_share.py` counts them.
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
# Exports built by scenarios (emu/build) and by the matrix (tests/fixtures/dsl_cache.py): the suite's own
# content-keyed caches in the repository (git-ignored), shared by xdist workers, never a user's folder.
_BUILDS = Path(__file__).resolve().parent.parent / ".emu-cache"
os.environ["EMU_BUILD_CACHE_DIR"] = str(_BUILDS / "builds")
os.environ["EMU_DSL_CACHE_DIR"] = str(_BUILDS / "dsl")

settings.register_profile("ci", derandomize=True, deadline=None, database=None, print_blob=True)
settings.register_profile("xdist", deadline=None)
if os.environ.get("PYTEST_XDIST_WORKER"):
    settings.load_profile("xdist")


def pytest_addoption(parser):
    parser.addoption("--fail-on-skip", action="store_true",
                     help="fail the run when any test skipped (CI: every oracle must run; -rs lists why each skipped)")


def pytest_configure(config):
    config.addinivalue_line("markers", "oracle(against): the assertion compares emu with something independent of emu "
                                       "(a native run, GNU ld, the real CPU, H200 facts, NVIDIA cuda-bindings)")


def pytest_sessionfinish(session, exitstatus):
    """With --fail-on-skip, a run with skipped tests fails (under xdist this runs in the controller, which sees all)."""
    if not session.config.getoption("--fail-on-skip") or hasattr(session.config, "workerinput"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if skipped and session.exitstatus == 0:
        reporter.write_line(f"--fail-on-skip: {skipped} test(s) skipped; each is an oracle that did not run (see -rs)",
                            red=True, bold=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

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
    from emu.commands.cli import main
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    return run_cli
