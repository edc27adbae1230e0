"""Shared test helpers: fixture paths and a CLI runner."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

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
