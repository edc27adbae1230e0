"""The private Unicorn the SSE twins run on (sse_twin.py, wide.py): one code page, one data page."""
from __future__ import annotations

from unicorn import UC_ARCH_X86, UC_MODE_64, UC_PROT_ALL, Uc
from unicorn import x86_const as UX

from ....emulator.unicorn_c import mem_write

CODE, DATA = 0x1000, 0x2000            # the twin's code; a memory operand's bytes
MXCSR, EFLAGS = UX.UC_X86_REG_MXCSR, UX.UC_X86_REG_EFLAGS


class Calculator:
    """The private emulator the twins run on: one code page, one data page for a memory operand."""

    def __init__(self) -> None:
        self.uc = Uc(UC_ARCH_X86, UC_MODE_64)
        self.uc.mem_map(CODE, 0x2000, UC_PROT_ALL)
        self.loaded = b""

    def run(self, code: bytes) -> None:
        if code != self.loaded:
            mem_write(self.uc, CODE, code)
            self.loaded = code
        self.uc.emu_start(CODE, CODE + len(code), count=1)


_CALCULATOR: Calculator | None = None


def calculator() -> Calculator:
    global _CALCULATOR
    if _CALCULATOR is None:
        _CALCULATOR = Calculator()
    return _CALCULATOR
