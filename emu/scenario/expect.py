"""Check a run against a scenario's expectations and explain every failure with a diff."""
# No `from __future__ import annotations`: pydantic reads these annotations as objects, not strings to evaluate.

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from stub_models.enums import CudaError, FuncAttribute, enum_value

from ..commands.render import param_kinds, show_call, show_ret, show_value
from ..support.model import empty_list
from ..run.trace import CallRecord, ObjectRun
from .model import CallPattern, Expectations


class ExpectationResult(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)   # built on first use: a scenario may check nothing

    object: str = Field(description="the object the expectation was checked on")
    kind: str = Field(description="calls_in_order, calls_any_order, no_calls, exact_calls, returns, raises, state or fault")
    line: int | None = Field(default=None, description="line of the expectation in the scenario file")
    passed: bool = Field(description="whether it holds")
    summary: str = Field(description="one line: what was required and what happened")
    diff: list[str] = Field(default_factory=empty_list, description="expected vs actual, line by line, for failures")


def _resolve(pattern_value: Any, c) -> Any:
    if c is not None and c.enum is not None and isinstance(pattern_value, str):
        return enum_value(c.enum, pattern_value)
    return pattern_value


def value_matches(expected: Any, actual: Any, c=None) -> bool:
    expected = _resolve(expected, c)
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and value_matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(value_matches(e, a) for e, a in zip(expected, actual))
    return expected == actual


def matches(pattern: CallPattern, call: CallRecord) -> bool:
    if pattern.symbol != call.symbol or (pattern.entry is not None and pattern.entry != call.entry):
        return False
    kinds = param_kinds(call.symbol)
    if any(name not in call.args or not value_matches(v, call.args[name], kinds.get(name)) for name, v in pattern.args.items()):
        return False
    if any(call.outputs.get(name) != v for name, v in pattern.outputs.items()):
        return False
    return pattern.ret is None or enum_value(CudaError, pattern.ret) == call.ret


def _raised_text(want) -> str:
    return "nothing raised" if want == "nothing" else want.show()


def _show_arg(value, kind) -> str:
    try:
        return show_value(_resolve(value, kind), kind)
    except (TypeError, AttributeError, ValueError, KeyError):   # a pattern the user wrote need not be a well-formed struct
        return repr(value)


def show_pattern(pattern: CallPattern) -> str:
    kinds = param_kinds(pattern.symbol)
    args = ", ".join(f"{k}={_show_arg(v, kinds.get(k))}" for k, v in pattern.args.items())
    text = f"{pattern.symbol}({args})"
    if pattern.outputs:
        text += " => " + ", ".join(f"*{k}={v}" for k, v in pattern.outputs.items())
    if pattern.ret is not None:
        text += f" -> {show_ret(enum_value(CudaError, pattern.ret))}"
    if pattern.entry:
        text += f" in {pattern.entry}"
    return text


def _relevant(run: ObjectRun, patterns: list[CallPattern]) -> list[str]:
    symbols = {p.symbol for p in patterns}
    return [f"  {c.entry}: {show_call(c, with_caller=False)}" for c in run.calls if c.symbol in symbols]


class Checker:
    """Evaluates one Expectations block on one ObjectRun; `lines` maps expectation keys to YAML lines."""

    def __init__(self, run: ObjectRun, kernel_info: dict[str, dict[int, int]], lines: dict[str, int | None]):
        self.run, self.kernel_info, self.lines = run, kernel_info, lines
        self.results: list[ExpectationResult] = []

    def add(self, kind: str, passed: bool, summary: str, diff: list[str] | None = None) -> None:
        self.results.append(ExpectationResult(object=self.run.object, kind=kind, line=self.lines.get(kind),
                                              passed=passed, summary=summary, diff=diff or []))

    def check(self, expect: Expectations) -> list[ExpectationResult]:
        fault = self.run.fault
        if expect.fault is not None:
            got = fault.kind if fault else "none (every entry returned)"
            self.add("fault", fault is not None and fault.kind == expect.fault, f"fault {expect.fault} required, got {got}")
        elif fault is not None:
            self.add("fault", False, f"the run stopped: {fault.kind}: {fault.message}")
        if expect.calls_in_order:
            self._in_order(expect.calls_in_order)
        if expect.calls_any_order:
            self._any_order(expect.calls_any_order)
        if expect.no_calls:
            self._none(expect.no_calls)
        if expect.exact_calls is not None:
            self._exact(expect.exact_calls)
        if expect.returns:
            self._returns(expect.returns)
        if expect.raises is not None:
            self._raises(expect.raises)
        if expect.state:
            self._state(expect.state)
        return self.results

    def _in_order(self, patterns: list[CallPattern]) -> None:
        position, missing, marks = 0, [], []
        for pattern in patterns:
            found = next((i for i in range(position, len(self.run.calls)) if matches(pattern, self.run.calls[i])), None)
            if found is None:
                missing.append(pattern)
                marks.append(f"- {show_pattern(pattern)}   <- missing")
            else:
                position = found + 1
                marks.append(f"  {show_pattern(pattern)}")
        summary = (f"all {len(patterns)} calls appear in order" if not missing else
                   f"{len(missing)} of {len(patterns)} calls missing (in order): " + "; ".join(show_pattern(p) for p in missing))
        diff = ["expected (in order):", *marks, "actual calls to these symbols:", *_relevant(self.run, patterns)] if missing else []
        self.add("calls_in_order", not missing, summary, diff)

    def _any_order(self, patterns: list[CallPattern]) -> None:
        used: set[int] = set()
        missing = []
        for pattern in patterns:
            found = next((i for i, c in enumerate(self.run.calls) if i not in used and matches(pattern, c)), None)
            if found is None:
                missing.append(pattern)
            else:
                used.add(found)
        summary = (f"all {len(patterns)} calls appear" if not missing else
                   f"{len(missing)} of {len(patterns)} calls missing: " + "; ".join(show_pattern(p) for p in missing))
        diff = ["missing:", *(f"- {show_pattern(p)}" for p in missing), "actual calls to these symbols:", *_relevant(self.run, patterns)] if missing else []
        self.add("calls_any_order", not missing, summary, diff)

    def _none(self, patterns: list[CallPattern]) -> None:
        hits = [(p, c) for p in patterns for c in self.run.calls if matches(p, c)]
        summary = "no forbidden call appears" if not hits else f"{len(hits)} forbidden call(s) appear: " + "; ".join(show_call(c) for _, c in hits)
        self.add("no_calls", not hits, summary, [f"+ {show_call(c)}   (matches {show_pattern(p)})" for p, c in hits])

    def _exact(self, exact) -> None:
        symbols = set(exact.symbols) if exact.symbols else None
        actual = [c for c in self.run.calls if symbols is None or c.symbol in symbols]
        ok = len(actual) == len(exact.calls) and all(matches(p, c) for p, c in zip(exact.calls, actual))
        diff = []
        if not ok:
            import difflib
            expected_lines = [show_pattern(p) for p in exact.calls]
            actual_lines = [f"{c.symbol}: {show_call(c, with_caller=False)} in {c.entry}" for c in actual]
            diff = list(difflib.unified_diff(expected_lines, actual_lines, "expected", "actual", lineterm="", n=50))
            first = next((i for i, (p, c) in enumerate(zip(exact.calls, actual)) if not matches(p, c)), min(len(actual), len(exact.calls)))
            summary = f"trace differs from call {first}: expected {len(exact.calls)} calls, got {len(actual)}"
        else:
            summary = f"the trace equals the {len(actual)} expected calls"
        self.add("exact_calls", ok, summary, diff)

    def _returns(self, returns: dict) -> None:
        bad = []
        for name, code in returns.items():
            plain = name == "tvm_ffi"          # an int32 of TVM-FFI's, not a cudaError_t
            if isinstance(code, list):         # tvm_ffi, call by call
                runs = [e for e in self.run.entries if e.entry == name]
                for number, want in enumerate(code, 1):
                    if want is None:
                        continue
                    if number > len(runs):
                        bad.append(f"- {name} call {number} -> {want}: the call did not run")
                    elif runs[number - 1].returned != want:
                        got = runs[number - 1].returned
                        bad.append(f"- {name} call {number} -> {want}, got {'a fault' if got is None else got}")
                continue
            want = int(code) if plain else enum_value(CudaError, code)
            show = str if plain else show_ret
            runs = [e for e in self.run.entries if e.entry == name]
            if not runs:
                bad.append(f"- {name} -> {show(want)}: the entry did not run")
            bad.extend(f"- {name}{e.args or ''} -> {show(want)}, got {'a fault' if e.returned is None else show(e.returned)}"
                       for e in runs if e.returned != want)
        self.add("returns", not bad, "every entry returned as required" if not bad else f"{len(bad)} entry result(s) differ", bad)

    def _raises(self, expected) -> None:
        """Every tvm_ffi run raised `expected` (or nothing, for "nothing"), as Python would see it raised; a list
        expects call by call (null: not checked)."""
        runs = [e for e in self.run.entries if e.entry == "tvm_ffi"]
        per_call = isinstance(expected, list)
        wants = expected if per_call else [expected] * max(len(runs), 1)
        bad = []
        for number, want in enumerate(wants, 1):
            if want is None:
                continue
            label = f"tvm_ffi call {number}" if per_call else "tvm_ffi"
            text = _raised_text(want)
            if number > len(runs):
                bad.append(f"- {label} -> {text}: the {'call' if per_call else 'entry'} did not run")
                continue
            run = runs[number - 1]
            if run.fault or not (run.raised is None if want == "nothing" else want.holds(run.raised)):
                got = "a fault" if run.fault else (f"{run.raised['kind']}: {run.raised['message']}" if run.raised
                                                   else "nothing raised")
                bad.append(f"- {label} -> {text}, got {got}")
        summary = ("tvm_ffi calls: " + "; ".join("not checked" if w is None else _raised_text(w) for w in wants)) \
            if per_call else f"every tvm_ffi call: {_raised_text(expected)}"
        self.add("raises", not bad, summary if not bad else f"{len(bad)} tvm_ffi call(s) differ", bad)

    def _state(self, expectations) -> None:
        bad, checked = [], 0
        for expect in expectations:
            attribute = enum_value(FuncAttribute, expect.attribute)
            name = FuncAttribute(attribute).name
            chosen = self.run.state.kernels_matching(expect.kernel)
            if not chosen:
                bad.append(f"- kernel {expect.kernel}: no such kernel in the runtime")
            for kernel in chosen:
                if expect.value == "metadata":
                    want = self.kernel_info.get(kernel.name, {}).get(attribute)
                    if want is None:
                        continue
                else:
                    want = expect.value
                devices = [int(d) for d in kernel.devices] if expect.device == "all" else [expect.device]
                for device in devices:
                    checked += 1
                    got = kernel.attribute(device, attribute)
                    if got != want:
                        bad.append(f"- {kernel.name} on device {device}: {attribute} {name} = {want} required, holds {got}")
        summary = f"{checked} attribute value(s) hold" if not bad else f"{len(bad)} of {checked} attribute value(s) differ"
        self.add("state", not bad, summary, bad)
