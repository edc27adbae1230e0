"""The CuTe DSL's launch plan: what the launch wrapper's signature is and which value fills each parameter.

emu describes what `_mlir_<prefix>__mlir_ciface_<fn>` takes from the header beside the object
(parsed with a C parser, cross-checked against `args_spec`), or from `args_spec` and what the
launch code itself reads (CodeProbe, emu.dsl.launch.discovery: each tensor's struct, which
Optional parameters were None, how many slots a list or Shape takes); and fills every
parameter with the value the user gave or a default (emu.dsl.launch.arguments).  Arguments
come from the scenario or command line and, when there is one, from `<prefix>.args.json`
beside the object (`{"args": {...}}`, the form the real-world corpus stores next to each
fixture); a value given explicitly wins.  emu.abi.ciface writes them and calls the wrapper.
"""
from __future__ import annotations

import json
import os
import struct
from functools import cached_property
from typing import Any

from ...abi.base import LaunchPlan, LaunchSite
from ...cache.args_spec_store import stored_args_spec
from ...cache.header_store import header_signature
from ...errors import BadInput, ObjectFormatError
from .arguments import TENSOR_DATA_BASE, TENSOR_DATA_STRIDE, LaunchArgumentError, default_extent, resolve, shown
from .discovery import (PROBE_BUDGET, PROBE_SLOTS, SlotReads, export_widths, is_struct, pattern, read_layout,
                        slot_reads, slots_fit)
from .mangled import tensor_tokens
from .signature import (LaunchParam, LaunchSignature, LaunchSignatureError, apply_width_markers, cross_check,
                        from_args_spec, from_header, with_spec_defaults)
from .tensor_struct import POINTER_SIZE, TensorLayout

MAX_ARGS_FILE_BYTES = 1 << 20


def load_args_file(path: str) -> dict[str, Any]:
    """`{"args": {...}}` (or a bare mapping) from a JSON file; BadInput naming the file when it is not one."""
    try:
        if os.path.getsize(path) > MAX_ARGS_FILE_BYTES:
            raise BadInput(f"launch arguments file is larger than {MAX_ARGS_FILE_BYTES} bytes", path=path)
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as error:
        raise BadInput(f"cannot read launch arguments: {error.strerror}", path=path) from None
    except (ValueError, UnicodeDecodeError) as error:
        raise BadInput(f"launch arguments are not JSON: {error}", path=path) from None
    if isinstance(data, dict) and set(data) == {"args"}:
        data = data["args"]
    if not isinstance(data, dict):
        raise BadInput('launch arguments must be a JSON object {"args": {name: value}}', path=path)
    return data


def beside(object_path: str, suffix: str) -> str:
    return os.path.splitext(object_path)[0] + suffix


def launch_plan(site: LaunchSite, given: dict[str, Any] | None = None) -> LaunchPlan:
    """What the launch runs with: the signature, every value, and where each came from.

    Without a header, what args_spec cannot say (which optional parameters were None, each
    tensor's struct) is read from the launch code (CodeProbe, emu.dsl.launch.discovery); an
    object without the launch function's code cannot tell it, which is an error.
    """
    object_path, export, obj = site.path, site.export, site.image.obj
    function = site.image.functions.get(export.entry_symbol("launch"))
    probe = CodeProbe(site.session, function, PROBE_SLOTS, default_extent(export.launch_function)) if function else None
    args_file = beside(object_path, ".args.json")
    merged: dict[str, Any] = {}
    if os.path.isfile(args_file):
        merged.update(load_args_file(args_file))
    merged.update(given or {})
    signature = _signature(object_path, export, obj, obj.arch, merged, probe)
    if signature.unread():
        signature = _read_from_code(signature, export.launch_function, probe, object_path)
    try:
        values = resolve(signature, merged, default_extent(export.launch_function))
    except LaunchArgumentError as error:
        raise LaunchArgumentError(error.message, path=object_path) from None
    return LaunchPlan(signature, values,
                      {"signature": signature.source, "args": shown(signature, values), "given": sorted(merged),
                       "layouts": {p.name: p.tensor.describe() for p in signature.params if p.tensor is not None},
                       "handles": [p.name for p in signature.params if p.kind in HANDLE_KINDS],
                       "args_file": os.path.basename(args_file) if os.path.isfile(args_file) else None})


HANDLE_KINDS = ("stream", "pointer")     # values that are addresses or handles: shown in hex, as CUDA calls show them


def _read_from_code(signature: LaunchSignature, launch_function: str | None, probe: CodeProbe | None,
                    path: str) -> LaunchSignature:
    """The signature with each unread parameter's kind and struct taken from the launch code's loads."""
    if probe is None:
        raise LaunchSignatureError(f"without the header, what {', '.join(signature.unread())} are can only be read from "
                                   "the launch code, which is not run here; put the header beside the object", path=path)
    result = probe.result
    signature = _lengths_from_code(signature, result, path)
    unread = signature.unread()             # every length is known now: what is left needs its struct read
    first_slot: dict[str, int] = {}
    for index, (name, _, _) in enumerate(signature.slots):
        first_slot.setdefault(name, index)
    reads = {name: result.slot(first_slot[name]) for name in unread}
    tensors = []
    for param in signature.params:
        if param.kind == "unknown" and not reads[param.name]:
            raise LaunchSignatureError(f"parameter {param.name} has no annotation in args_spec and the launch code never "
                                       "reads it before its first CUDA call, so what it is cannot be told; give it, or put "
                                       "the header beside the object", path=path)
        if param.kind == "unknown" and not is_struct(reads[param.name]):
            loads = ", ".join(f"{size}@{offset}" for offset, size in sorted(reads[param.name]))
            raise LaunchSignatureError(f"parameter {param.name} has no annotation in args_spec and the launch code reads "
                                       f"it as a plain value (bytes@offset: {loads}), whose type emu cannot tell; put the "
                                       "header beside the object", path=path)
        if param.kind in ("tensor", "unknown", "tensor_list"):
            tensors.extend([param.name] * (param.count or 1))
    parts = tensor_tokens(launch_function, len(tensors)) or []
    tokens = {name: token for name, token in reversed(list(zip(tensors, parts)))}     # a list's first element's part
    widths = export_widths(parts)
    params = {}
    for name in unread:
        reading = read_layout(name, reads[name], tokens.get(name), widths)
        if reading.reason is not None:
            raise LaunchSignatureError(f"without the header, {reading.reason}; put the header beside the object, or give "
                                       f"the struct's fields, e.g. --arg '{name}={{\"dynamic_shapes\": [1024, 512], "
                                       f"\"dynamic_strides\": [512]}}'", path=path)
        param = signature.param(name)
        if param.kind == "tensor_list":
            params[name] = LaunchParam(name, "tensor_list", tensor=reading.layouts[0], count=param.count,
                                       list_size=_list_size(reading.layouts[0], param.count))
        else:
            params[name] = LaunchParam(name, "tensor", tensor=reading.layouts[0])
    return signature.replaced(params, "args_spec+code")


def _lengths_from_code(signature: LaunchSignature, result: SlotReads, path: str) -> LaunchSignature:
    """The signature, with each tensor list's and Shape's length taken from the args[] slots the code reads.

    The header passes each element of a list or Shape in a slot of its own; args_spec says
    `List[Tensor]` or `Shape` (or, unannotated, nothing) and never how many.  Every way of giving
    those parameters (and the unannotated ones, which may be lists) lengths that adds up to the
    slots read, and whose slots are each read as their parameter's kind is (a struct for a tensor,
    a plain value for a scalar), is tried: exactly one must remain.  Anything else cannot be
    launched right, so it is refused rather than run with later arguments shifted.
    """
    open_ = [p for p in signature.params if p.kind in ("tensor_list", "array") and p.count is None]
    unknown = [p for p in signature.params if p.kind == "unknown"]
    passed = len(signature.slots) - 1
    if result.passed is None or (not open_ and result.passed <= passed):
        arrays = [p.name for p in open_ if p.kind == "array"]
        if arrays:
            raise LaunchSignatureError(f"without the header, the number of dynamic elements of {', '.join(arrays)} is "
                                       f"unknown: give them, e.g. --arg '{arrays[0]}=[128, 64]'", path=path)
        if open_:
            raise LaunchSignatureError(f"without the header, how many tensors {', '.join(p.name for p in open_)} "
                                       "hold cannot be read from the launch code; give them, or put the header beside "
                                       "the object", path=path)
        return signature                 # fewer slots read: a parameter the code never reads (a trailing one)
    sizable = open_ + unknown

    def described(counts: tuple[int, ...]) -> list[tuple[str | None, str | None, int]]:
        widths = dict(zip((p.name for p in sizable), counts))
        return [(p.kind, p.ctype, widths.get(p.name, p.count if p.kind in ("array", "tensor_list") else 1) or 1)
                for p in signature.params]
    fixed = sum(p.count or 1 for p in signature.params if p not in sizable)
    fits = [counts for counts in _lengths(len(sizable), result.passed - fixed) if slots_fit(described(counts), result)]
    if len(fits) != 1:
        why = "no way" if not fits else f"{len(fits)} ways"
        raise LaunchSignatureError(f"without the header, the launch code reads {result.passed} args[] slots and there is "
                                   f"{why} to split them among the parameters args_spec describes; put the header beside "
                                   "the object", path=path)
    counts = dict(zip((p.name for p in sizable), fits[0]))
    params, slots = [], []
    for param in signature.params:
        count = counts.get(param.name)
        if count is not None and param.kind == "array":
            param = LaunchParam(param.name, "array", ctype=param.ctype, count=count)
        elif count is not None and (param.kind == "tensor_list" or count > 1):
            param = LaunchParam(param.name, "tensor_list", tensor=param.tensor, count=count)
        params.append(param)
    by_name = {p.name: p for p in params}
    for slot in signature.slots:               # a parameter of unknown length had one placeholder slot
        param = by_name.get(slot[0])
        if param is not None and param.name in counts and param.kind in ("array", "tensor_list"):
            how = "element" if param.kind == "array" else "list_element"
            slots.extend((param.name, how, i) for i in range(param.count))
        else:
            slots.append(slot)
    return LaunchSignature(signature.source, tuple(params), tuple(slots))


def _lengths(lists: int, total: int):
    """Every way to give `lists` parameters lengths adding up to `total` (each at least 1)."""
    if lists == 0:
        if total == 0:
            yield ()
        return
    for first in range(1, total - (lists - 1) + 1):
        for rest in _lengths(lists - 1, total - first):
            yield (first, *rest)


def _list_size(element: TensorLayout, count: int) -> int:
    """sizeof `{element elements[count]; int32_t count;}` under the LP64 rules."""
    end = element.size * count + 4
    return (end + POINTER_SIZE - 1) // POINTER_SIZE * POINTER_SIZE


def _signature(object_path: str, export, obj, arch: str, given: dict[str, Any], probe: CodeProbe | None) -> LaunchSignature:
    """From the header beside the object (cross-checked against args_spec), else from args_spec."""
    spec_text = obj.c_string(f"{export.prefix}_args_spec")
    spec, spec_error = stored_args_spec(spec_text) if spec_text is not None else (None, None)
    header_path = beside(object_path, ".h")
    if os.path.isfile(header_path):
        with open(header_path, encoding="utf-8", errors="replace") as handle:
            parsed = header_signature(handle.read(), header_path, arch)
        if parsed is not None:
            if export.launch_function and parsed.launch_function != export.launch_function:
                raise LaunchSignatureError(f"{os.path.basename(header_path)} calls {parsed.launch_function}, but the object's "
                                           f"launch function is {export.launch_function}: the header is not this object's",
                                           path=object_path)
            signature = from_header(parsed, header_path)
            if spec is not None:
                cross_check(signature, spec, object_path, os.path.basename(header_path))
                signature = with_spec_defaults(signature, spec)
            return signature
    if spec is None:
        why = spec_error or f"no {export.prefix}_args_spec symbol"
        raise ObjectFormatError(f"cannot build the launch arguments: no header {os.path.basename(header_path)} beside the "
                                f"object with a launch wrapper, and {why}", path=object_path)
    signature = from_args_spec(spec, given, export.launch_function, object_path,
                               (lambda: probe.result) if probe is not None else None)
    return apply_width_markers(signature, export.launch_function)


class CodeProbe:
    """The launch wrapper, run once (on first use) up to its first CUDA call with every slot of `args[]`
    pointing at a block of the discovery pattern: which slots it reads and how it reads each block."""

    def __init__(self, session, function: int, slots: int, extent: int):
        self.session, self.function, self.slots, self.extent = session, function, slots, extent

    @cached_property
    def result(self) -> SlotReads:
        host = self.session.machine.host
        blocks = [host.alloc(pattern(TENSOR_DATA_BASE + i * TENSOR_DATA_STRIDE, self.extent)) for i in range(self.slots)]
        array = host.alloc(struct.pack(f"<{self.slots}Q", *blocks))
        end = array + 8 * self.slots
        loads = self.session.machine.probe_reads(self.function, [array, self.slots - 1], blocks[0], end, PROBE_BUDGET)
        return slot_reads(loads, blocks, array)
