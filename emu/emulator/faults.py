"""The record of why an entry stopped: what the emulator produces, and part of the trace contract.

Defined here, beside the emulator that fills it in, so that the emulator imports nothing
from emu.run; emu.run.trace re-exports it, and the JSON contract is unchanged.
"""
from typing import Literal

from pydantic import Field

from ..support.model import Model


class Fault(Model):
    """Why an entry stopped before returning."""

    kind: Literal["unmapped_read", "unmapped_write", "unmapped_fetch", "protected_read", "protected_write",
                  "protected_fetch", "invalid_instruction", "unsupported_instruction", "instruction_budget",
                  "timeout", "missing_stub", "stub_error", "cpu_exception", "exit", "abort"] = Field(description="what went wrong")
    message: str = Field(description="one-paragraph explanation")
    address: int | None = Field(default=None, description="the faulting data address, where there is one")
    pc: int | None = Field(default=None, description="the program counter at the fault")
    location: str | None = Field(default=None, description="the program counter as function+offset")
    instruction: str | None = Field(default=None, description="the disassembled instruction at the program counter")
    registers: dict[str, int] = Field(default_factory=dict, description="general registers at the fault")
