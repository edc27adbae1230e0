"""Why the AVX unit stopped: an instruction it does not carry out, or one that faults as on hardware."""
from __future__ import annotations

from unicorn import UcError


class UnsupportedInstruction(Exception):
    """An instruction this unit does not carry out (or cannot, see subclasses)."""

    def __init__(self, address: int, size: int, mnemonic: str, op_str: str, why: str = "") -> None:
        self.address, self.size, self.mnemonic, self.op_str = address, size, mnemonic, op_str
        text = f"{mnemonic} {op_str}".strip()
        super().__init__(f"unsupported instruction '{text}' at {address:#x}" + (f": {why}" if why else ""))

    @property
    def text(self) -> str:
        return f"{self.mnemonic} {self.op_str}".strip()


class MisalignedAccess(UnsupportedInstruction):
    """An aligned vector move with a misaligned memory operand (#GP on real hardware)."""

    def __init__(self, address: int, size: int, mnemonic: str, op_str: str, ea: int, width: int) -> None:
        self.ea, self.width = ea, width
        super().__init__(address, size, mnemonic, op_str)
        self.args = (f"misaligned {width}-byte access at {ea:#x} by '{mnemonic} {op_str}' "
                     f"at {address:#x} (#GP on hardware)",)


class MemoryFault(UnsupportedInstruction):
    """Emulated memory could not be read or written."""

    def __init__(self, address: int, size: int, mnemonic: str, op_str: str,
                 ea: int, width: int, err: UcError) -> None:
        self.ea, self.width, self.error = ea, width, err
        super().__init__(address, size, mnemonic, op_str)
        self.args = (f"memory fault ({err}) accessing {width} bytes at {ea:#x} "
                     f"by '{mnemonic} {op_str}' at {address:#x}",)
