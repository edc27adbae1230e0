"""Human-readable text for calls, patterns and runs (enum numbers shown with their names)."""
from __future__ import annotations

import re
from typing import Any

from stub_models import recorded_model
from stub_models.enums import CudaError, enum_label

from ..run.trace import CallRecord, ObjectRun


def param_kinds(symbol: str) -> dict[str, Any]:
    model = recorded_model(symbol)
    return {p.name: p.c for p in model.params()} if model else {}


def show_launch_config(config: dict) -> str:
    """`{grid=(2,1,1) block=(128,1,1) smem=512 stream=0x5000 attrs=[...]}`; partial configs (patterns) too."""
    def dims(values) -> str:
        return "(" + ",".join(str(v) for v in values) + ")"
    parts = []
    for key, label in (("gridDim", "grid"), ("blockDim", "block")):
        if key in config:
            parts.append(f"{label}={dims(config[key])}")
    if "dynamicSmemBytes" in config:
        parts.append(f"smem={config['dynamicSmemBytes']}")
    if "stream" in config:
        parts.append(f"stream={config['stream']:#x}")
    if "attrs" in config:
        attrs = []
        for attribute in config["attrs"]:
            fields = attribute.get("value", {})
            shown = dims(fields.values()) if len(fields) > 1 else next(iter(fields.values()), "")
            attrs.append(f"{attribute.get('name') or attribute.get('id')}={shown}")
        parts.append(f"attrs=[{', '.join(attrs)}]")
    parts.extend(f"{k}={v}" for k, v in config.items() if k not in ("gridDim", "blockDim", "dynamicSmemBytes", "stream", "attrs"))
    return "{" + " ".join(parts) + "}"


def show_value(value: Any, c=None) -> str:
    if isinstance(value, dict) and c is not None and c.struct == "cudaLaunchConfig_t":
        return show_launch_config(value)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int) and c is not None:
        if c.enum is not None:
            return enum_label(c.enum, value)
        if c.kind in ("handle", "ptr", "out", "struct"):
            return f"{value:#x}"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {show_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(show_value(v) for v in value) + "]"
    return str(value)


def show_ret(value: int) -> str:
    return enum_label(CudaError, value) if value else "0 SUCCESS"


NO_IMAGE = "cudaErrorNoKernelImageForDevice"
VOID_ENTRY = "process_exit"             # a TVM-FFI export's destructor: a void function (EntryRun.returned 0)
_VOID = re.compile(r"void\s+\w")          # `void f(...)`, not `void *f(...)`


def _int32(value: int) -> int:
    value &= 0xFFFF_FFFF
    return value - (1 << 32) if value & 0x8000_0000 else value


def show_call(call: CallRecord, with_caller: bool = True) -> str:
    """`symbol(args) -> result  => *outputs`: by the call's model (a stub's, or a helper's inner runtime call's,
    stub_models.recorded_model): pointers in hex, enums named, a void function's result left out, a function
    returning text (cudaGetErrorName) shown with the text it returned."""
    model = recorded_model(call.symbol)
    kinds = {p.name: p.c for p in model.params()} if model else {}
    api = getattr(model, "api", None)
    libc = api == "libc"
    text_result = getattr(model, "returns_text", False) and "text" in call.args
    args = ", ".join(f"{name}={show_value(value, kinds.get(name))}" for name, value in call.args.items()
                     if (kinds.get(name) is None or kinds[name].kind != "out") and not (text_result and name == "text"))
    if libc and "text" in call.args:              # output: the text written says it all
        args = ", ".join([f"{k}={show_value(v, kinds.get(k))}" for k, v in call.args.items() if k not in ("format", "s", "text")]
                         + [f"text={call.args['text']!r}"])
    if text_result:
        text = f"{call.symbol}({args}) -> {call.args['text']!r}"
    elif model is not None and _VOID.match(model.prototype):
        text = f"{call.symbol}({args})"               # a void function returns nothing to show
    elif (libc and call.ret > 0xFFFF) or api == "tvm_ffi":
        text = f"{call.symbol}({args}) -> {call.ret:#x}"
    elif model is not None and model.prototype.startswith("int "):    # init_library_once: 0, or -1 with an error raised
        text = f"{call.symbol}({args}) -> {_int32(call.ret)}"
    else:
        text = f"{call.symbol}({args}) -> {call.ret if libc else show_ret(call.ret)}"
    if call.outputs:
        text += "  => " + ", ".join(f"*{k}={show_value(v, kinds.get(k) if kinds.get(k) and kinds[k].pointee == 'handle' else None)}"
                                    for k, v in call.outputs.items())
    if call.injected:
        text += "  [injected]"
    if with_caller:
        text += f"  [{call.caller}]"
    return text


def show_run(run: ObjectRun) -> list[str]:
    lines = [f"{run.object} ({run.arch}, prefix {run.prefix})"]
    if run.format_warning:
        lines.append(f"  WARNING: {format_warning(run)}")
    position = 0
    for entry in run.entries:
        for call in run.calls[position:entry.first_call]:      # calls made by header code between entries
            lines.append(f"  {show_call(call)}")
        label = entry.entry + (f"(device={entry.args['device']})" if "device" in entry.args else "")
        tvm_ffi = entry.entry == "tvm_ffi"
        result = (str(entry.returned) if tvm_ffi else show_ret(entry.returned)) if entry.fault is None \
            else f"FAULT {entry.fault.kind}"
        if entry.entry == VOID_ENTRY:       # the destructor returns nothing: say that it ran to its end
            lines.append(f"  {label} {entry.function} -> " + ("returned (void)" if entry.fault is None else result))
        else:
            lines.append(f"  {label} {entry.function} -> {result}" if tvm_ffi else f"  {label} -> {result}")
        if entry.launch:
            lines.append(f"    {show_tvm_ffi_args(entry.launch) if tvm_ffi else show_launch_args(entry.launch)}")
        for depth, call in nested(run.calls[entry.first_call:entry.end_call]):
            lines.append(f"    {'  ' * depth}{show_call(call)}")
        if tvm_ffi and entry.fault is None:
            lines.append(f"    {show_tvm_ffi_outcome(entry)}")
            if entry.raised is not None and run.state.load_error and NO_IMAGE in entry.raised["message"]:
                # why the load inside the call failed, and which profile would run the binary
                lines.append(f"    on profile {run.state.profile}: {run.state.load_error}")
        for judged in run.launch_feasibility:
            if entry.first_call <= judged.call < entry.end_call:
                lines.extend(show_feasibility(judged))
        position = entry.end_call
        if entry.fault is not None:
            lines.extend(show_fault_lines(entry.fault))
    return lines


def nested(calls: list[CallRecord]) -> list[tuple[int, CallRecord]]:
    """The calls in the order they were made, each with its depth: a stub that calls back (its `inner_calls`
    recorded just before it, as the native runs print it) comes before the calls made inside it, one deeper."""
    nodes: list[tuple[CallRecord, list, int]] = []          # (call, its inner nodes, calls it covers)
    for call in calls:
        inner, covered = [], 0
        while covered < call.inner_calls and nodes:
            node = nodes.pop()
            inner.insert(0, node)
            covered += node[2]
        nodes.append((call, inner, covered + 1))

    def flat(items, depth: int):
        for call, inner, _ in items:
            yield depth, call
            yield from flat(inner, depth + 1)
    return list(flat(nodes, 0))


def show_feasibility(judged) -> list[str]:
    """The block after a launch entry: each profile's answer to the launch call."""
    lines = [f"    launch feasibility of call {judged.call} ({judged.symbol}) per device profile:"]
    for verdict in judged.profiles:
        answer = "accepted" if verdict.accepted else f"{verdict.error_name} ({verdict.error}): {verdict.reason}"
        published = "" if verdict.measured else "  [published figures, not measured]"
        lines.append(f"      {verdict.profile} ({verdict.device_name}): {answer}{published}")
        if verdict.caveat:
            lines.append(f"        caveat: {verdict.caveat}")
    return lines


def format_warning(run: ObjectRun) -> str:
    """The one wording of ObjectRun.format_warning, for the text output and stderr alike."""
    return (f"emu does not know this export's format or metadata: {run.format_warning}; what it recorded may not be "
            "what the loaders do on a GPU")


def show_launch_args(launch: dict) -> str:
    """`args (header): a={data=0xd0000000 dynamic_shapes=[128,128]} n=1 stream=0x5000`: streams and pointers
    (`handles`) in hex, as the CUDA calls show them (`_cudaLaunchKernelEx(config={... stream=0x5000 ...})`)."""
    def value(v, handle: bool = False) -> str:
        if isinstance(v, dict):
            return "{" + " ".join(f"{k}={value(v[k], k == 'data')}" for k in v) + "}"
        if isinstance(v, list):
            return "[" + ",".join(value(i) for i in v) + "]"
        return f"{v:#x}" if handle and isinstance(v, int) else str(v)
    source = launch.get("signature", "?") + (f", {launch['args_file']}" if launch.get("args_file") else "")
    given, handles = set(launch.get("given") or ()), set(launch.get("handles") or ())
    args = " ".join(f"{name}{'' if name in given else '~'}={value(v, name in handles)}"
                    for name, v in launch.get("args", {}).items())
    return f"args ({source}; ~ = default): {args}" if args else f"args ({source}): none"


def show_tvm_ffi_args(launch: dict) -> str:
    """A tvm_ffi entry's arguments as the framework passed them (a shape as `Shape([...])`, a tuple's ffi.Array as
    a Python tuple of its items)."""

    def item(v) -> str:
        if v is None:
            return "None"
        (kind, value), = v.items()
        if kind == "tensor":
            strides = "NULL" if value["strides"] is None else value["strides"]
            offset = f" byte_offset={value['byte_offset']}" if value["byte_offset"] else ""
            return (f"Tensor({value['dtype']} shape={value['shape']} strides={strides} data={value['data']:#x}"
                    f"{offset} {value['device']})")
        if kind == "shape":
            return f"Shape({value})"
        if kind == "tuple":
            return f"({', '.join(map(item, value))}{',' if len(value) == 1 else ''})"
        return f"{value:#x}" if kind == "stream" else repr(value)
    source = launch.get("signature") or "signature not in the object"
    args = ", ".join(item(v) for v in launch.get("args") or ())
    return f"args ({source}; {'given' if launch.get('given') else 'defaults'}): {args or 'none'}"


def show_tvm_ffi_outcome(entry) -> str:
    """What a Python caller sees: the error raised as Python prints it (`TypeError: ...`), or the result."""
    if entry.raised is not None:
        return f"raised {entry.raised['kind']}: {entry.raised['message']}"
    cell = (entry.launch or {}).get("result") or {"type_index": 0}
    return "result: None" if cell["type_index"] == 0 else f"result: type index {cell['type_index']}, value {cell['value']}"


def show_fault_lines(fault) -> list[str]:
    lines = [f"    fault: {fault.kind}: {fault.message}"]
    if fault.instruction:
        lines.append(f"    instruction: {fault.instruction}")
    if fault.registers:
        regs = " ".join(f"{k}={v:#x}" for k, v in fault.registers.items())
        lines.append(f"    registers: {regs}")
    return lines
