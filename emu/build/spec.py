"""What a scenario says to build: a user's `@cute.jit` function, its fake arguments, its options.

An object entry may name a Python kernel instead of a file; emu then exports it with the
installed nvidia-cutlass-dsl (`emu.build.cache`) and runs the result like any object.
These models are the YAML format of that entry; they carry only plain data, so the cache
key is their JSON and the build itself runs in a separate DSL process (`emu.build.worker`).
"""
# No `from __future__ import annotations`: pydantic reads these annotations as objects, not strings to evaluate.

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..support.model import empty_list

Host = Literal["x86_64", "aarch64", "native"]

# `--host-target` per host; "native" passes none, so the loaders use the build machine's CPU.
HOST_TARGET_OPTIONS: dict[str, str] = {
    "x86_64": "--host-target 'llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64'",
    "aarch64": "--host-target linux-aarch64",
    "native": "",
}


class Block(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)   # built once, inside the scenario's validator


class SymbolicExtent(Block):
    """A dynamic extent (`cute.sym_int`): the export takes its value at launch time."""

    width: Literal[32, 64] = Field(default=32, description="integer width of the extent in the launch signature")
    divisibility: int = Field(default=1, ge=1, description="the extent is declared a multiple of this")


class TensorArg(Block):
    """A fake tensor (`make_fake_compact_tensor`): dtype, shape, stride order, alignment."""

    dtype: str = Field(description="element type as the DSL names it: Float32, Float16, BFloat16, Int32, ...")
    shape: list[int | str] = Field(min_length=1, description="extent per mode: a number, or the name of a symbolic extent (see `symbols`)")
    stride_order: list[int] | None = Field(default=None, description="stride order per mode as make_fake_compact_tensor takes it (default: the DSL's, the first mode contiguous)")
    align: int | None = Field(default=None, ge=1, description="assumed alignment of the data pointer in bytes")
    stride_32bit: bool = Field(default=False, description="dynamic strides as 32-bit integers (use_32bit_stride)")


class ScalarArg(Block):
    """A runtime scalar argument of a DSL numeric type (`cutlass.Int32(value)`)."""

    dtype: str = Field(description="DSL numeric type: Int32, Int64, Float32, ...")
    value: int | float = Field(default=1, description="the value used at compile time (the export takes the real one at launch)")


class FakeArg(Block):
    """One argument of the `@cute.jit` function, in order. In YAML: `{tensor: {...}}`, `stream`,
    `{scalar: {...}}`, or `{value: X}` for a compile-time constant (a `Constexpr`)."""

    tensor: TensorArg | None = Field(default=None, description="a fake tensor")
    stream: bool = Field(default=False, description="a fake CUDA stream (write the argument as just `stream`)")
    scalar: ScalarArg | None = Field(default=None, description="a runtime scalar of a DSL numeric type")
    value: Any = Field(default=None, description="a compile-time constant (Constexpr); a bare YAML value means this")

    @model_validator(mode="before")
    @classmethod
    def _short_forms(cls, data):
        if data == "stream":
            return {"stream": True}
        if not isinstance(data, dict):
            return {"value": data}
        return data

    @model_validator(mode="after")
    def _exactly_one(self):
        given = [name for name in ("tensor", "scalar", "value") if getattr(self, name) is not None] + (["stream"] if self.stream else [])
        if len(given) != 1:
            raise ValueError(f"an argument is exactly one of tensor, stream, scalar or value (got {', '.join(given) or 'none'})")
        return self


class BuildOptions(Block):
    """Compile options: which GPU and which host the export is for."""

    gpu_arch: str = Field(default="sm_90a", pattern=r"^sm_\d+[af]?$", description="--gpu-arch (CUTE_DSL_ARCH is set to the same)")
    host: Host = Field(default="x86_64", description="host target of the loaders: x86_64, aarch64, or native (this machine's CPU)")
    extra: str = Field(default="", description="further options passed to cute.compile verbatim")

    def compile_options(self) -> str:
        return " ".join(part for part in (f"--gpu-arch {self.gpu_arch}", HOST_TARGET_OPTIONS[self.host], self.extra) if part)


class BuildSpec(Block):
    """Export a `@cute.jit` function of a Python file with the installed nvidia-cutlass-dsl."""

    module: str = Field(description="the Python file defining the function, relative to the scenario file")
    function: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="name of the @cute.jit function in that file")
    args: list[FakeArg] = Field(default_factory=empty_list, description="fake arguments for cute.compile, in order")
    symbols: dict[str, SymbolicExtent] = Field(default_factory=dict, description="symbolic extents named in tensor shapes")
    options: BuildOptions = Field(default_factory=BuildOptions, description="GPU architecture and host target")
    prefix: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="symbol prefix and file name of the export (default: the function name)")

    @model_validator(mode="after")
    def _extents_are_names(self):
        """A string extent names a symbolic extent; undeclared names get the defaults."""
        for arg in self.args:
            for extent in (arg.tensor.shape if arg.tensor else []):
                if isinstance(extent, str) and not extent.isidentifier():
                    raise ValueError(f"symbolic extent {extent!r} is not a name")
        return self

    def export_prefix(self) -> str:
        return self.prefix or self.function

    def label(self) -> str:
        return f"{self.module.rsplit('/', 1)[-1]}::{self.function}"
