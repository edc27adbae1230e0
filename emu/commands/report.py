"""Print a scenario result for people: the trace, then each expectation with its diff."""
from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from .render import show_run

if TYPE_CHECKING:
    from ..scenario.runner import ScenarioResult


def scenario_lines(result: ScenarioResult, quiet: bool = False) -> list[str]:
    lines = header(f"== {result.scenario}" + (f"[{result.variant}]" if result.variant else ""), result.description)
    for run in result.runs:
        lines.extend(show_run(run) if not quiet else [f"{run.object} ({run.arch}, prefix {run.prefix})"])
        for check in (r for r in result.results if r.object == run.object):
            where = f" (line {check.line})" if check.line else ""
            lines.append(f"  {'PASS' if check.passed else 'FAIL'} {check.kind}{where}: {check.summary}")
            lines.extend(f"      {d}" for d in check.diff)
    verdict = "passed" if result.passed else "FAILED"
    if result.bug_reproduced:
        verdict += f" (documents upstream bug {result.upstream_bug})"
    elif result.upstream_bug and not result.passed:
        verdict += f" (NOT only as upstream bug {result.upstream_bug} documents: " + "; ".join(result.unexplained) + ")"
    failed = sum(not r.passed for r in result.results)
    lines.append(f"== {verdict}: {len(result.results) - failed} of {len(result.results)} expectations hold")
    return lines


def header(title: str, description: str, width: int = 110) -> list[str]:
    """`== file: description`, the description whole (a YAML block's line breaks joined, never cut), wrapped
    at word boundaries with the later lines indented under it."""
    text = " ".join(description.split())
    if not text:
        return [title]
    return textwrap.wrap(f"{title}: {text}", width=max(width, len(title) + 20), subsequent_indent="   ",
                         break_long_words=False, break_on_hyphens=False)


def print_scenario(result: ScenarioResult, quiet: bool = False) -> None:
    print("\n".join(scenario_lines(result, quiet)))
