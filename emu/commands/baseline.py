"""The baseline file of `python -m emu check`: the findings a project has acknowledged.

A small JSON file the project commits (`check --write-baseline FILE` writes it):

    {"baseline": "emu check", "version": 1,
     "findings": [{"id": "attribute-3f9a1c2b7d4e", "description": "x86_64/carveout_25.o (carveout_25): ...",
                   "object": "x86_64/carveout_25.o", "export": "carveout_25", "note": "NVIDIA/cutlass#3715"}]}

Each entry carries the finding's stable id (emu.commands.check_findings) and its description; `object`
and `export` say where it was found, and `note` is the project's own word on why it is accepted (kept
when the baseline is written again).  `check --baseline FILE` shows the findings the file lists as
acknowledged and does not fail on them; an entry whose finding no longer appears is stale (the upstream
fix landed, the object changed or is gone, or it was not among the paths checked) and fails the check
until the baseline is written again: left in place, it would acknowledge the same bug coming back.
"""
from __future__ import annotations

import json
import os
from typing import Literal

from pydantic import Field, ValidationError

from ..errors import BadInput
from ..support.model import Model

REFRESH = "python -m emu check PATH... --write-baseline FILE"


class BaselineEntry(Model):
    id: str = Field(description="the finding's stable id, as `check` prints it")
    description: str = Field(description="what the finding is, in words (as `check` wrote it)")
    object: str | None = Field(default=None, description="the object's key: its path under the folder checked, or its file name")
    export: str | None = Field(default=None, description="the export (its prefix)")
    note: str | None = Field(default=None, description="why the project accepts it, e.g. the upstream issue; kept by "
                             "--write-baseline")


class Baseline(Model):
    """The file: findings a project acknowledges (known upstream bugs), by id."""

    baseline: Literal["emu check"] = Field(description="what the file is: always \"emu check\"")
    version: Literal[1] = Field(description="the file format's version: 1")
    findings: list[BaselineEntry] = Field(description="the acknowledged findings")


class BaselineReport(Model):
    file: str = Field(description="the baseline file read")
    acknowledged: int = Field(description="findings of this run that the baseline lists (shown, not failing)")
    new: int = Field(description="findings of this run that it does not list (failing)")
    stale: list[BaselineEntry] = Field(description="entries whose finding no longer appears (the upstream fix landed, "
                                       "or the object is not checked): the check fails until the baseline is written again")


def read_baseline(path: str) -> Baseline:
    """The baseline at `path`; BadInput (exit 2) naming the file when it cannot be read or is not one."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read the baseline file: {getattr(error, 'strerror', None) or error}", path=path) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise BadInput(f"the baseline file is not JSON: {error.msg} at line {error.lineno} column {error.colno}; "
                       f"write one with {REFRESH}", path=path) from None
    try:
        baseline = Baseline.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise BadInput(f"not an emu check baseline: field {field}: {first['msg']} (the file is "
                       '{"baseline": "emu check", "version": 1, "findings": [{"id": ..., "description": ...}]}; '
                       f"write one with {REFRESH})", path=path) from None
    ids = [entry.id for entry in baseline.findings]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise BadInput(f"the baseline lists {', '.join(twice)} more than once", path=path)
    return baseline


def apply_baseline(baseline: Baseline, file: str, results: list) -> BaselineReport:
    """Mark each finding of `results` (ObjectChecks) the baseline lists as acknowledged; say which entries are stale."""
    listed = {entry.id for entry in baseline.findings}
    found = set()
    acknowledged = new = 0
    for result in results:
        for finding in result.findings:
            found.add(finding.id)
            finding.acknowledged = finding.id in listed
            acknowledged += finding.acknowledged
            new += not finding.acknowledged
    return BaselineReport(file=file, acknowledged=acknowledged, new=new,
                          stale=[entry for entry in baseline.findings if entry.id not in found])


def write_baseline(path: str, results: list) -> int:
    """Write every finding of `results` to `path` as a baseline, keeping the notes of the entries already there;
    returns how many.  Refused (BadInput) when an object could not be checked: its findings would be left out."""
    failed = [result.object for result in results if result.error is not None]
    if failed:
        raise BadInput(f"baseline not written: {len(failed)} object(s) could not be checked ({', '.join(failed)}), "
                       "so their findings are unknown", path=path)
    notes = {e.id: e.note for e in read_baseline(path).findings} if os.path.exists(path) else {}
    entries, seen = [], set()
    for result in results:
        for finding in result.findings:
            if finding.id not in seen:
                seen.add(finding.id)
                entries.append(BaselineEntry(id=finding.id, description=finding.description, object=finding.object,
                                             export=finding.export, note=notes.get(finding.id)))
    text = Baseline(baseline="emu check", version=1, findings=entries).model_dump_json(indent=1, exclude_none=True)
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as error:
        raise BadInput(f"cannot write the baseline file: {error.strerror or error}", path=path) from None
    return len(entries)
