"""What a scenario may configure about the CUDA runtime the stubs model."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from stub_models.enums import CudaError, DeviceAttribute, FuncAttribute, enum_value

from ..support.model import empty_list


class InjectedError(BaseModel):
    model_config = ConfigDict(extra="forbid")

    symbol: str = Field(description="wrapper symbol to fail, e.g. _cudaFuncSetAttribute")
    call: int = Field(default=1, ge=1, description="fail the N-th call of this symbol in each object run (1 = first)")
    error: int | str = Field(description="cudaError_t to return, by number or name (INVALID_VALUE)")
    every: bool = Field(default=False, description="fail this call and every later call of the symbol")

    @field_validator("error")
    @classmethod
    def _error_number(cls, value: int | str) -> int:
        return enum_value(CudaError, value)


class RuntimeConfig(BaseModel):
    """The CUDA runtime the stubs present: devices, kernels, handles, failures."""

    model_config = ConfigDict(extra="forbid")

    profile: Literal["h200", "a100", "b200"] = Field(default="h200", description="device profile: h200 (measured on a real H200), a100 or b200 (from cited public figures, not measured)")
    device_count: int = Field(default=1, ge=0, le=64, description="number of devices cudaGetDeviceCount reports")
    current_device: int = Field(default=0, ge=0, description="device cudaGetDevice reports")
    device_attributes: dict[int, int] = Field(default_factory=dict, description="cudaDeviceAttr overrides, by number or name (MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 101376)")
    kernel_attributes: dict[str, dict[int, int]] = Field(default_factory=dict, description="per kernel name ('*' for every kernel): CUfunction_attribute -> initial value, by number or name (SHARED_SIZE_BYTES: 1024)")
    library_handle: int = Field(default=0x1000, description="the library handle the loaders find in their slot when cuda_init has not run")
    first_kernel_handle: int = Field(default=0x2000, description="handle given to the first kernel; later kernels count up from it")
    errors: list[InjectedError] = Field(default_factory=empty_list, description="stub calls that fail with a chosen error")
    missing_symbols: Literal["error", "return_zero"] = Field(default="error", description="what a call to an undefined symbol with no stub does: stop with an error naming it, or return 0")

    @field_validator("device_attributes", mode="before")
    @classmethod
    def _device_attr_numbers(cls, value):
        return {enum_value(DeviceAttribute, k): v for k, v in (value or {}).items()}

    @field_validator("kernel_attributes", mode="before")
    @classmethod
    def _kernel_attr_numbers(cls, value):
        return {name: {enum_value(FuncAttribute, k): v for k, v in (attrs or {}).items()} for name, attrs in (value or {}).items()}
