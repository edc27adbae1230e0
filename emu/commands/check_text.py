"""The text `python -m emu check` prints: each export's rows, the directory summary, the findings with
their ids, and what the baseline acknowledged or found stale."""
from __future__ import annotations

from ..errors import EXIT_OK
from .baseline import REFRESH, BaselineReport
from .check import CheckResult, ObjectCheck, discrepancy_summary, loader_outcome
from .check_findings import Finding, cuda_error_label

PROFILE_SOURCES = {"chosen": "chosen: its device runs the GPU binary", "given": "given",
                   "default": "default: no profile emu has runs the GPU binary"}


def table(headers: list[str], rows: list[list[str]], indent: str = "") -> list[str]:
    widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows)]
    line = lambda cells: indent + "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows]


def verdict(result: ObjectCheck) -> str:
    """`clean` only when kernel_info was checked and nothing is wrong; never for metadata that was not checked."""
    if result.findings:
        acknowledged = sum(f.acknowledged for f in result.findings)
        return f"{len(result.findings)} finding(s)" + (f", {acknowledged} acknowledged" if acknowledged else "")
    if result.metadata == "checked":
        return "clean"
    if result.metadata == "none by design (TVM-FFI)":
        return "tvm_ffi call ok; attributes not checked (a TVM-FFI export carries no kernel_info)"
    return "loaders ok; attributes not checked (a 4.3 export carries no kernel_info)"


def show_object(result: ObjectCheck, baseline: bool = False) -> list[str]:
    if result.error:
        return [f"{result.object}: cannot check: {result.error}"]
    published = "" if result.profile_measured else ", published figures, not measured"
    head = (f"{result.object} ({result.arch}, prefix {result.prefix}, profile {result.profile} "
            f"({PROFILE_SOURCES[result.profile_source]}{published}), {result.device_count} device(s)): ")
    lines = [head + verdict(result)]
    lines += [f"  {l.entry} stopped: {l.fault}" if l.fault else f"  {loader_outcome(l)}"
              for l in result.loaders if l.returned != 0 and result.metadata != TVM_FFI]     # tvm_ffi_lines say it
    if result.metadata == TVM_FFI:
        lines += tvm_ffi_lines(result)
    elif result.unchecked:
        lines.append(f"  not checked: {result.unchecked}")
    rows = [[c.kernel, f"{c.attribute} {c.attribute_name or '?'}", c.entry, str(c.expected), _shown(c.applied, c.error),
             _shown(c.state), c.status.upper() if c.status != "ok" else "ok"]
            for c in result.checks]
    if rows:
        lines += table(["kernel", "attribute", "entry", "expected", "applied", "state", "status"], rows, "  ")
    elif result.metadata == "checked":
        lines.append("  kernel_info asks nothing to compare")
    lines += [f"  {line}" for line in show_findings(result.findings, baseline)]
    return lines


TVM_FFI = "none by design (TVM-FFI)"


def tvm_ffi_lines(result: ObjectCheck) -> list[str]:
    """What a TVM-FFI object's check covered (the call: its result, its loads, each profile's answer to its launch)
    and what it could not (no kernel_info to compare the attributes set with)."""
    lines = []
    for loader in result.loaders:
        sets = loader.sets
        applied = sum(s.ret == 0 for s in sets)
        loads = (f"its library loaded inside it, {applied} of {len(sets)} kernel attribute set(s) applied" if sets
                 else "no kernel attribute set")
        outcome = f"stopped: {loader.fault}" if loader.returned is None else \
            f"returned {loader.returned}, " + (f"raised {loader.raised['kind']}: {loader.raised['message']}"
                                               if loader.raised else "raised nothing")
        lines.append(f"  checked: the tvm_ffi call with default arguments on {result.profile}: {outcome}; {loads}")
    for judged in result.tvm_ffi_launches:
        lines.append(f"  checked: its launch (call {judged.call}, {judged.symbol}) on each device profile: "
                     + "; ".join(_verdict(v) for v in judged.profiles))
    if result.loaders and not result.tvm_ffi_launches:
        lines.append("  not checked: its launch on each device profile: the call made no launch"
                     + ("" if all(l.returned == 0 for l in result.loaders) else " (it failed before)"))
    if result.unchecked:
        lines.append(f"  not checked: {result.unchecked}")
    return lines


def _verdict(verdict) -> str:
    published = "" if verdict.measured else " (published figures)"
    return f"{verdict.profile} " + ("accepted" if verdict.accepted else f"{verdict.error_name} ({verdict.error})") + published


def _launch_summary(result: ObjectCheck) -> str:
    """`launch: h200 ok, a100 209, b200 209` for the summary table."""
    return ", ".join("launch: " + ", ".join(f"{v.profile} {'ok' if v.accepted else v.error}" for v in judged.profiles)
                     for judged in result.tvm_ffi_launches)


def _shown(value: int | None, error: int | None = None) -> str:
    if value is not None:
        return str(value)
    return "missing" if error is None else f"missing (error {cuda_error_label(error)})"


def show_findings(findings: list[Finding], baseline: bool) -> list[str]:
    """`finding attribute-3f9a1c2b7d4e: ...`, marked NEW or acknowledged when a baseline was read."""
    def mark(finding: Finding) -> str:
        return ("acknowledged" if finding.acknowledged else "NEW") if baseline else "finding"
    return [f"{mark(f)} {f.id}: {f.description}" for f in findings]


def show_summary(result: CheckResult, with_findings: bool = True) -> list[str]:
    files = [o.object for o in result.objects]
    shown = lambda o: f"{o.object} ({o.prefix})" if files.count(o.object) > 1 else o.object     # noqa: E731 - an export of several
    rows = [[shown(o), o.arch or "-", o.profile, str(len(o.kernels)), "error" if o.error else str(o.discrepancies),
             _details(o)] for o in result.objects]
    bad = sum(1 for o in result.objects if o.exit_code != EXIT_OK)
    counted = (f"{len(files)} objects" if len(set(files)) == len(files)
               else f"{len(files)} exports in {len(set(files))} objects")
    findings = [f for o in result.objects for f in o.findings]
    lines = table(["object", "arch", "profile", "kernels", "discrepancies", "details"], rows)
    if findings and with_findings:
        lines += ["", "findings:"] + [f"  {line}" for line in show_findings(findings, result.baseline is not None)]
    return lines + ["", f"{counted}, {bad} with new findings or errors"]


UNCHECKED = {"none by design (4.3)": "attributes not checked: a 4.3 export has no kernel_info",
             "none by design (TVM-FFI)": "attributes not checked: a TVM-FFI export has no kernel_info",
             "missing": "NOT CHECKED: no kernel_info", "unreadable": "NOT CHECKED: kernel_info unreadable",
             "unknown format": "NOT CHECKED: unknown export format", "unknown version": "UNKNOWN VERSION"}


def _details(result: ObjectCheck) -> str:
    if result.error or result.metadata == "checked":
        return discrepancy_summary(result)
    if result.metadata == TVM_FFI:
        call = "; ".join(loader_outcome(l) for l in result.loaders)
        return "; ".join(filter(None, [call, _launch_summary(result), UNCHECKED[result.metadata]]))
    return ", ".join(filter(None, [UNCHECKED[result.metadata], discrepancy_summary(result)]))


def show_baseline(report: BaselineReport) -> list[str]:
    """What the baseline acknowledged, and loudly, each stale entry (its finding no longer appears)."""
    lines = [f"baseline {report.file}: {report.acknowledged} acknowledged finding(s), {report.new} new, "
             f"{len(report.stale)} stale"]
    if report.stale:
        lines.append(f"{len(report.stale)} acknowledged finding(s) no longer appear (the upstream fix landed, or the "
                     "object changed, is gone or was not among the paths checked): this check fails until the baseline "
                     f"is written again ({REFRESH}, with the paths it was written for):")
        lines += [f"  STALE {entry.id}: {entry.description}" for entry in report.stale]
    return lines


def show_check(result: CheckResult, directories: bool) -> list[str]:
    """Every row of each object; for a directory, the summary table alone; then the baseline's report."""
    lines = []
    if not directories:
        for obj in result.objects:
            lines += show_object(obj, result.baseline is not None)
    if directories or len(result.objects) > 1:
        lines += ([""] if lines else []) + show_summary(result, with_findings=directories)   # else under each object
    if result.baseline is not None:
        lines += [""] + show_baseline(result.baseline)
    cute_abi = any(o.metadata != TVM_FFI for o in result.objects)      # a TVM-FFI check shows its launch itself
    return lines + (["", LAUNCH_NOTE] if cute_abi else [])


# check runs the loaders only: judging the launch would run each launch wrapper with arguments check does not have
# (and can fail to build them), at several times check's per-object cost: `trace` judges each launch it runs.
LAUNCH_NOTE = ("launch feasibility per device profile (h200, a100, b200) is in `python -m emu trace OBJECT`: "
               "check runs a CuTe-ABI export's loaders, not its launch (a TVM-FFI export's call, loads and launch, "
               "runs whole, and its check shows the launch)")
