"""The entry points emu can run, and how each one's arguments are built.

Plain entries take a pointer to the library slot (and a device); the `_mlir_` packed
forms take one pointer to a struct of pointers, exactly as the generated header builds
it; `module_load` is the header's Kernel_Module_Load sequence; `launch` is the launch
wrapper the header calls.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

EntryName = Literal["cuda_init", "cuda_load", "cuda_load_to_device", "mlir_cuda_init", "mlir_cuda_load",
                    "mlir_cuda_load_to_device", "module_load", "launch"]
TAKES_DEVICE = {"cuda_load_to_device", "mlir_cuda_load_to_device"}


class EntrySpec(BaseModel):
    """One entry to run. In YAML: `cuda_load`, or `cuda_load_to_device: {device: 1}`."""

    model_config = ConfigDict(extra="forbid")

    name: EntryName = Field(description="which entry point to call")
    device: int | None = Field(default=None, ge=0, description="device argument for *_cuda_load_to_device (default 0)")
    args: dict[str, Any] | None = Field(default=None, description="launch only: arguments by parameter name (a number for a "
                                        "scalar, an int for the stream, {data, dynamic_shapes, dynamic_strides} or {shape, "
                                        "stride, data} for a tensor); the rest get defaults")

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
        if self.args is not None and self.name != "launch":
            raise ValueError(f"entry {self.name} takes no args (only launch does)")
        return self

    def label(self) -> str:
        return f"{self.name}(device={self.device or 0})" if self.name in TAKES_DEVICE else self.name


DEFAULT_ENTRIES = [EntrySpec(name="cuda_init"), EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]


def loaders_for_devices(device_count: int) -> list[EntrySpec]:
    """cuda_init, cuda_load, then cuda_load_to_device for every device: what `trace` and `check` run."""
    return ([EntrySpec(name="cuda_init"), EntrySpec(name="cuda_load")]
            + [EntrySpec(name="cuda_load_to_device", device=d) for d in range(device_count)])
