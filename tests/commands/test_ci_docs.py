"""docs/ci.md shows the job of the scratch project in docs/ci_example, which was run end to end: the commands
in the doc are the project's ci.sh, and its committed baseline is one `check --baseline` reads."""
from __future__ import annotations

import re

from conftest import ROOT

EXAMPLE = ROOT / "docs" / "ci_example"


def test_the_doc_shows_the_example_job_command_for_command():
    doc = (ROOT / "docs" / "ci.md").read_text()
    shown = re.search(r"```sh\n(set -uo pipefail\n.*?)```", doc, re.S).group(1)
    script = (EXAMPLE / "ci.sh").read_text()
    commands = lambda text: [line.split("  #")[0].rstrip() for line in text.splitlines()       # noqa: E731
                             if line.strip() and not line.startswith(("#", "EMU_SOURCE="))]
    assert commands(shown) == commands(script)


def test_the_example_baseline_is_one_check_reads(tmp_path):
    from emu.commands.baseline import read_baseline
    baseline = read_baseline(str(EXAMPLE / "emu-baseline.json"))
    assert len(baseline.findings) == 4 and all("NVIDIA/cutlass#3715" in entry.note for entry in baseline.findings)


def test_the_example_scenario_and_kernel_are_the_ones_the_doc_names():
    assert (EXAMPLE / "kernels" / "rotate.py").resolve() == (ROOT / "scenarios" / "kernels" / "rotate.py").resolve()
    scenario = (EXAMPLE / "scenarios" / "rotate_loader.yaml").read_text()
    assert "issue: NVIDIA/cutlass#3715" in scenario and "fails: [calls_in_order, state]" in scenario
