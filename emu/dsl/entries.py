"""The entry points emu can run: the one list of their names, symbols and arguments.

Plain loaders take the library (a pointer to its slot, or the handle itself in 4.3
exports: see emu.dsl.generations) and a device; the `_mlir_` packed forms take one pointer
to a struct of pointers, exactly as the generated header builds it; `module_load` is
the header's Kernel_Module_Load (Kernel_Metadata_Load in 4.3) sequence; `launch` is the
launch wrapper the header calls.  Everything else (scenario validation, the export's
symbol for an entry, inspect's entry list, run's dispatch) reads ENTRY_KINDS.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import EmuError
from ..emulator.limits import DEFAULT_BUDGET, DEFAULT_TIMEOUT_S     # noqa: F401 - a scenario's defaults, read from here


@dataclass(frozen=True)
class EntryKind:
    name: str
    symbol: str | None        # "{prefix}_cuda_load" etc.; None: no single function (module_load, launch)
    packed: bool = False      # the `_mlir_` form: one pointer to a struct of argument pointers
    takes_device: bool = False
    loads: bool = False       # a cuda_load form: takes the library as the export's generation says


ENTRY_KINDS = (
    EntryKind("cuda_init", "{prefix}_cuda_init"),
    EntryKind("cuda_load", "{prefix}_cuda_load", loads=True),
    EntryKind("cuda_load_to_device", "{prefix}_cuda_load_to_device", takes_device=True, loads=True),
    EntryKind("mlir_cuda_init", "_mlir_{prefix}_cuda_init", packed=True),
    EntryKind("mlir_cuda_load", "_mlir_{prefix}_cuda_load", packed=True, loads=True),
    EntryKind("mlir_cuda_load_to_device", "_mlir_{prefix}_cuda_load_to_device", packed=True, takes_device=True, loads=True),
    EntryKind("module_load", None),
    EntryKind("launch", None),
    EntryKind("tvm_ffi", None),       # a TVM-FFI export's __tvm_ffi_<name>, called as a framework calls it
    EntryKind("process_exit", None),  # a TVM-FFI export's destructor (.fini_array): the library's unload at exit
)
KINDS = {kind.name: kind for kind in ENTRY_KINDS}
ENTRY_NAMES = tuple(KINDS)
LOADER_KINDS = tuple(kind for kind in ENTRY_KINDS if kind.symbol)
EntryName = Literal[ENTRY_NAMES]      # type: ignore[valid-type]
TAKES_DEVICE = frozenset(kind.name for kind in ENTRY_KINDS if kind.takes_device)
# module_load runs the packed loaders (emu.run.session._module_load): init, then load_to_device per device (4.4+) or
# load (4.3); each is recorded under its own name, and the header's device count as a call of module_load's own.
MODULE_LOAD_RUNS = ("mlir_cuda_init", "mlir_cuda_load_to_device", "mlir_cuda_load")
HEADER_DEVICE_COUNT = "cudaGetDeviceCount"


def recorded_as(entry: str) -> tuple[str, ...]:
    """The names a run of `entry` records its entry runs under (EntryRun.entry): itself, or what module_load runs."""
    return MODULE_LOAD_RUNS if entry == "module_load" else (entry,)


class EntrySpec(BaseModel):
    """One entry to run. In YAML: `cuda_load`, or `cuda_load_to_device: {device: 1}`."""

    model_config = ConfigDict(extra="forbid")

    name: EntryName = Field(description="which entry point to call")
    device: int | None = Field(default=None, ge=0, description="device argument for *_cuda_load_to_device (default 0)")
    args: dict[str, Any] | list[Any] | None = Field(
        default=None, description="launch: arguments by parameter name (a number for a scalar, an int for the stream, "
        "{data, dynamic_shapes, dynamic_strides} or {shape, stride, data} for a tensor), the rest defaulted; tvm_ffi: "
        "the positional list of {tensor: {dtype, shape, strides, data, byte_offset, device}}, {int: N}, {float: X}, "
        "{bool: B}, {stream: HANDLE}, {shape: [N, ...]} (an ffi.Shape), {tuple: [...]} (an ffi.Array of items) or null "
        "(all defaulted when left out)")
    export: str | None = Field(default=None, description="tvm_ffi only: the export whose entry is called (its name N "
                               "of __tvm_ffi_N); needed only when the object holds several")
    env_stream: dict[int, int] | None = Field(default=None, description="tvm_ffi only: the stream TVMFFIEnvGetStream "
                                              "answers per CUDA device id, as a framework sets it (others: NULL)")

    @model_validator(mode="before")
    @classmethod
    def _short_forms(cls, value):
        if isinstance(value, str):
            return {"name": value}
        if isinstance(value, dict) and len(value) == 1 and "name" not in value:
            (name, args), = value.items()
            return {"name": name, **(args or {})}
        return value

    @model_validator(mode="after")
    def _device_only_where_taken(self):
        if self.device is not None and self.name not in TAKES_DEVICE:
            raise ValueError(f"entry {self.name} takes no device argument")
        if self.args is not None and self.name not in ("launch", "tvm_ffi"):
            raise ValueError(f"entry {self.name} takes no args (only launch and tvm_ffi do)")
        if self.name == "launch" and isinstance(self.args, list):
            raise ValueError("launch takes its args by parameter name (a mapping); a positional list is tvm_ffi's")
        if self.name == "tvm_ffi" and self.args is not None:
            from .tvm_ffi.arguments import parse_arguments
            try:
                parse_arguments(self.args)
            except EmuError as error:
                raise ValueError(error.message) from None
        for field in ("export", "env_stream"):
            if getattr(self, field) is not None and self.name != "tvm_ffi":
                raise ValueError(f"entry {self.name} takes no {field} (only tvm_ffi does)")
        return self

    def label(self) -> str:
        return f"{self.name}(device={self.device or 0})" if self.name in TAKES_DEVICE else self.name


DEFAULT_ENTRIES = [EntrySpec(name="cuda_init"), EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]


# a framework's first call (the library loads inside it), then the process's end (its destructor unloads it)
TVM_FFI_ENTRIES = [EntrySpec(name="tvm_ffi"), EntrySpec(name="process_exit")]


def loaders_for_devices(device_count: int) -> list[EntrySpec]:
    """cuda_init, cuda_load, then cuda_load_to_device for every device: what `trace` and `check` run."""
    return ([EntrySpec(name="cuda_init"), EntrySpec(name="cuda_load")]
            + [EntrySpec(name="cuda_load_to_device", device=d) for d in range(device_count)])
