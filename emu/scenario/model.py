"""The scenario file format, as pydantic models (the JSON Schema is generated from these).

Every block forbids unknown keys and describes every field, so a typo is an error that
names the file, line and field, and `python -m emu schema` documents the format.
"""
# No `from __future__ import annotations`: pydantic reads these annotations as objects, not strings to evaluate.

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..build.spec import BuildSpec
from ..cuda.config import RuntimeConfig
from ..dsl.entries import DEFAULT_BUDGET, DEFAULT_ENTRIES, DEFAULT_TIMEOUT_S, EntrySpec
from ..support.model import defaults_of, empty_list


class Block(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)   # built once, inside Scenario's validator


class CallPattern(Block):
    """A call to look for. Unlisted arguments match anything; enum arguments take names or numbers."""

    symbol: str = Field(description="wrapper symbol, e.g. _cudaKernelSetAttributeForDevice")
    entry: str | None = Field(default=None, description="only calls made while this entry ran (cuda_load, cuda_load_to_device, ...)")
    args: dict[str, Any] = Field(default_factory=dict, description="argument values by CUDA parameter name; nested mappings match struct fields partially")
    outputs: dict[str, int] = Field(default_factory=dict, description="values the stub wrote through out-parameters")
    ret: int | str | None = Field(default=None, description="return code, by number or cudaError name")


class ExactCalls(Block):
    """The trace, restricted to some symbols, must equal this list call for call."""

    symbols: list[str] | None = Field(default=None, description="compare only calls to these symbols (all calls when omitted)")
    calls: list[CallPattern] = Field(description="the expected calls, in order")


class StateExpectation(Block):
    """A kernel attribute the runtime model must hold after the run."""

    kernel: str = Field(default="*", description="kernel name, or '*' for every kernel of the object")
    device: int | Literal["all"] = Field(default="all", description="device ordinal, or 'all' for every device")
    attribute: int | str = Field(description="CUfunction_attribute, by number or name (PREFERRED_SHARED_MEMORY_CARVEOUT)")
    value: int | Literal["metadata"] = Field(description="the value required, or 'metadata' for the value the object's kernel_info asks for")


class RaisedExpectation(Block):
    """The error a tvm_ffi entry must raise, as Python would raise it: `kind: message`."""

    kind: str = Field(description="the error kind: TypeError, ValueError, RuntimeError, CUDADialectError, ...")
    message: str | None = Field(default=None, description="the whole message, word for word")
    message_contains: str | None = Field(default=None, description="instead of message: a part the message must contain")

    @model_validator(mode="after")
    def _one_message_form(self):
        if self.message is not None and self.message_contains is not None:
            raise ValueError("give message (exact) or message_contains (a part of it), not both")
        return self

    def holds(self, raised: dict | None) -> bool:
        if raised is None or raised.get("kind") != self.kind:
            return False
        text = raised.get("message", "")
        return (self.message is None or text == self.message) and \
            (self.message_contains is None or self.message_contains in text)

    def show(self) -> str:
        if self.message is not None:
            return f"{self.kind}: {self.message}"
        return self.kind + (f": ...{self.message_contains}..." if self.message_contains is not None else "")


class Expectations(Block):
    """What must hold for each object's run."""

    calls_in_order: list[CallPattern] = Field(default_factory=empty_list, description="calls that must appear in this order (others may come between)")
    calls_any_order: list[CallPattern] = Field(default_factory=empty_list, description="calls that must each appear, in any order")
    no_calls: list[CallPattern] = Field(default_factory=empty_list, description="calls that must not appear")
    exact_calls: ExactCalls | None = Field(default=None, description="the whole (filtered) trace, call for call")
    returns: dict[str, int | str | list[int | None]] = Field(
        default_factory=dict, description="entry name -> required return code (every run of that entry; tvm_ffi: the "
        "int32 it returns, 0 or -1, or a list of them, one per tvm_ffi entry of `entries` in order, null: unchecked)")
    raises: RaisedExpectation | Literal["nothing"] | list[RaisedExpectation | Literal["nothing"] | None] | None = Field(
        default=None, description="every tvm_ffi entry run must raise this error ({kind, message} exact, or {kind, "
        "message_contains}), or `nothing`: no error raised; or a list, one item per tvm_ffi entry of `entries` in "
        "order (null: that call is not checked), for a scenario whose calls differ (the first fails, the second works)")
    state: list[StateExpectation] = Field(default_factory=empty_list, description="kernel attributes the runtime must hold after the run")
    fault: str | None = Field(default=None, description="require the run to stop with this fault kind (e.g. missing_stub) instead of returning")

    def merged(self, other: "Expectations | None") -> "Expectations":
        if other is None:
            return self
        return Expectations(
            calls_in_order=self.calls_in_order + other.calls_in_order,
            calls_any_order=self.calls_any_order + other.calls_any_order,
            no_calls=self.no_calls + other.no_calls,
            exact_calls=other.exact_calls or self.exact_calls,
            returns={**self.returns, **other.returns},
            raises=other.raises if other.raises is not None else self.raises,
            state=self.state + other.state,
            fault=other.fault or self.fault,
        )


class ObjectRef(Block):
    """An object to run: a file relative to the scenario, or a kernel to build, with optional extra expectations."""

    path: str | None = Field(default=None, description="the .o file, relative to the scenario file")
    build: BuildSpec | None = Field(default=None, description="instead of a file: export this @cute.jit function with the installed nvidia-cutlass-dsl (cached by content)")
    export: str | None = Field(default=None, description="which export of the object to run, by name (its prefix): "
                               "needed only when the object holds several")
    expect: Expectations | None = Field(default=None, description="expectations for this object only, added to the scenario's")

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, value):
        return {"path": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _file_or_build(self):
        if (self.path is None) == (self.build is None):
            raise ValueError("an object is either `path:` (a file) or `build:` (a kernel to export), not both or neither")
        return self

    def label(self) -> str:
        """How test ids and reports name the object: `folder/file.o`, or `file.py::function` for a build."""
        if self.build is not None:
            return self.build.label()
        return f"{os.path.basename(os.path.dirname(self.path))}/{os.path.basename(self.path)}"


BugExpectation = Literal["calls_in_order", "calls_any_order", "no_calls", "exact_calls", "returns", "raises", "state"]


class UpstreamBug(Block):
    """Marks a scenario that documents a known bug: pytest reports it as an expected failure, but only
    when the run fails exactly as `fails` says (every entry returned, no fault, every other expectation held)."""

    reason: str = Field(description="why it fails, e.g. the upstream issue")
    issue: str | None = Field(default=None, description="upstream issue, e.g. NVIDIA/cutlass#3715")
    fails: list[BugExpectation] = Field(min_length=1, description="the expectations the bug makes fail, for every object; any other failure, a fault or an entry that did not return is a real failure")
    strict: bool = Field(default=True, description="an unexpected pass fails the test (so a fixed upstream flips it)")


class Scenario(Block):
    """One scenario file."""

    description: str = Field(default="", description="what the scenario shows")
    matrix: dict[str, list[Any]] | None = Field(default=None, description="axes that expand the scenario into one variant per combination; values replace ${axis} (or ${axis.key}) anywhere in the scenario")
    objects: list[ObjectRef] = Field(min_length=1, description="objects to run, each on its own fresh runtime")
    entries: list[EntrySpec] = Field(default_factory=lambda: list(DEFAULT_ENTRIES), description="entries to run in order: cuda_init, cuda_load, cuda_load_to_device (with device), mlir_* packed forms, module_load, launch; for a TVM-FFI export tvm_ffi (with export, args, env_stream), as often as wanted")
    runtime: RuntimeConfig = Field(default_factory=RuntimeConfig, description="the CUDA runtime the stubs present")
    expect: Expectations = Field(default_factory=defaults_of(Expectations), description="expectations for every object")
    upstream_bug: UpstreamBug | None = Field(default=None, description="mark the scenario as documenting a known upstream bug (expected failure in pytest)")
    budget: int = Field(default=DEFAULT_BUDGET, ge=1, description="guest instructions each entry may execute")
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, description="wall-clock seconds each entry may run")
