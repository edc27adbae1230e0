"""What `inspect` says of a TVM-FFI export: its entry, its compiled signature, and what the form does not carry.

A TVM-FFI object (emu.dsl.tvm_ffi) has no header, no `_version`, `_kernel_info` or `_args_spec`: its
parameters are the signature its `__tvm_ffi_<name>` quotes in its argument errors, and the attributes its
loaders set are not written down anywhere `check` could compare them with.
"""
from __future__ import annotations

from pydantic import Field

from ..dsl.tvm_ffi.signature import parse_signature
from ..support.model import Model

NOT_CARRIED = ("no header: __tvm_ffi_{name} is the entry a framework calls, with TVMFFIAny arguments",
               "no {prefix}_version: the release is not stated",
               "no {prefix}_kernel_info: check cannot compare the kernel attributes the loaders set with requested ones",
               "no {prefix}_args_spec: the parameters are the signature the entry quotes in its errors")


class TvmFfiParameter(Model):
    name: str = Field(description="the parameter's name in the compiled signature")
    type: str = Field(description="its type as the signature writes it: Tensor([n0, 64], float16), int32, Stream, ...")
    kind: str = Field(description="tensor, int, float, bool, stream, pointer, none, const_int, const_bool, const_float, "
                      "shape, tuple or unknown: which argument-form item it takes")


class TvmFfiInspection(Model):
    name: str = Field(description="N of the entry __tvm_ffi_N: what traces, checks and scenarios call the export")
    entry: str = Field(description="the entry symbol, __tvm_ffi_N")
    internal_prefix: str = Field(description="the loaders' prefix, __cute_internal_N")
    launch_function: str | None = Field(description="the internal launch function, __cute_internal_N_cutlass_<fn>_<mangled "
                                        "args>, whose name spells the tensors' layouts")
    signature: str | None = Field(description="the compiled signature the entry quotes; null when the object holds none")
    parameters: list[TvmFfiParameter] = Field(description="the signature's parameters, in order")
    device_type: str | None = Field(description="the one device type the entry's tensor checks expect (cuda, cpu); "
                                    "null when they name none or several")
    env_stream: bool = Field(description="true when the entry calls TVMFFIEnvGetStream (it imports it). Whether the "
                             "launch uses its answer the object does not say: with a Stream parameter the launch uses "
                             "the parameter (the entry may ask TVMFFIEnvGetStream all the same); without one, the "
                             "framework's stream if the kernel was compiled with make_fake_stream("
                             "use_tvm_ffi_env_stream=True), else the default stream; `trace` shows the launch's stream")
    not_carried: list[str] = Field(description="what this form does not carry, and what that means for emu")


def inspect_tvm_ffi(export, undefined: set[str]) -> TvmFfiInspection | None:
    """The TVM-FFI part of an export's inspection; None for a CuTe-ABI export."""
    if not export.ffi_name:
        return None
    params = parse_signature(export.ffi_signature) if export.ffi_signature else []
    return TvmFfiInspection(
        name=export.ffi_name, entry=export.entry_symbol("tvm_ffi"), internal_prefix=export.prefix,
        launch_function=export.mangled_function, signature=export.ffi_signature,
        parameters=[TvmFfiParameter(name=p.name, type=p.type_text, kind=p.kind) for p in params],
        device_type=export.ffi_device_type, env_stream="TVMFFIEnvGetStream" in undefined,
        not_carried=[text.format(name=export.ffi_name, prefix=export.prefix) for text in NOT_CARRIED])


def tvm_ffi_lines(found: TvmFfiInspection) -> list[str]:
    """The text report's TVM-FFI block, in place of the CuTe ABI's format, launch-wrapper and args_spec lines."""
    lines = [f"  TVM-FFI export {found.name}: entry {found.entry}(self, args, num_args, result), loaders "
             f"{found.internal_prefix}_*",
             f"  signature (quoted by the entry): {found.signature or 'not in the object'}"]
    lines += [f"    {p.name}: {p.type} [{p.kind}]" for p in found.parameters]
    lines.append(f"  tensors checked for device type: {found.device_type or 'none, or several'}")
    lines.append(f"  stream: {stream_text(found)}")
    lines.append(f"  launch function: {found.launch_function or 'none'}")
    lines.append("  not carried by this form:")
    lines += [f"    {text}" for text in found.not_carried]
    return lines


def stream_text(found) -> str:
    """Where the launch's stream comes from, as far as the object tells (see `env_stream`)."""
    if any(p.kind == "stream" for p in found.parameters):
        return "the Stream parameter" + (" (the entry also asks TVMFFIEnvGetStream, whose answer does not choose the "
                                         "launch's stream)" if found.env_stream else "")
    if found.env_stream:
        return ("no Stream parameter: the framework's current stream (TVMFFIEnvGetStream) if the kernel was compiled "
                "with make_fake_stream(use_tvm_ffi_env_stream=True), else the default stream (trace shows which)")
    return "no Stream parameter and no TVMFFIEnvGetStream: the default stream"
