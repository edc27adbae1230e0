"""The vector registers of one emulator, as the AVX unit reads and writes them.

Only this unit ever sets bits above 127 of zmm0-15: Unicorn runs no AVX, and its own
SSE instructions leave those bits alone.  So the file keeps a bit per register that
may hold such bits (`wide`): set when an instruction here writes them, cleared by
vzeroupper/vzeroall, and all set until the first clear (the registers' state before is
unknown).  A vzeroupper after a loader's one or two ymm moves then rewrites those
registers alone instead of all sixteen.
"""
from __future__ import annotations

from unicorn import Uc
from unicorn import x86_const as UX

from ....emulator.unicorn_c import WideRegisterBatch, reg_clear_above, reg_read_bytes, reg_write_bytes

ZMM = tuple(getattr(UX, f"UC_X86_REG_ZMM{i}") for i in range(32))
LOW16 = {reg: 1 << i for i, reg in enumerate(ZMM[:16])}     # the registers vzeroupper and vzeroall clear -> bit
ALL16 = 0xFFFF
# Bits 128-511 of each of the sixteen 512-bit registers, as one integer over the batch buffer.
_UPPERS = sum(((1 << 384) - 1) << (512 * i + 128) for i in range(16))


class VectorFile:
    """zmm0-31 of one emulator, with the record of which of zmm0-15 may be wider than 128 bits."""

    __slots__ = ("uc", "wide", "_low16", "observer", "masks")

    def __init__(self, uc: Uc) -> None:
        self.uc = uc
        self.wide = ALL16
        # Called with (address, size) for each memory load the unit carries out, when set: Unicorn's
        # read hooks never see these loads (emu.emulator.machine.Machine.probe_reads).
        self.observer = None
        self._low16 = WideRegisterBatch(ZMM[:16])
        self.masks = [0] * 8                       # k0-k7 (AVX-512): Unicorn has none (avx512.py)

    def read(self, zmm: int, nbytes: int) -> int:
        return int.from_bytes(reg_read_bytes(self.uc, zmm, nbytes), "little")

    def read_bytes(self, zmm: int, nbytes: int) -> bytes:
        return reg_read_bytes(self.uc, zmm, nbytes)

    def write(self, zmm: int, value: int) -> None:
        """Write a register as VEX/EVEX do: zero-extended to the full 512 bits."""
        if value >> 128:
            self.wide |= LOW16.get(zmm, 0)
        reg_write_bytes(self.uc, zmm, value.to_bytes(64, "little"))

    def write_bytes(self, zmm: int, data: bytes) -> None:
        """As write(), for `data` of 16 to 64 bytes."""
        if len(data) > 16 and data.count(0, 16) != len(data) - 16:
            self.wide |= LOW16.get(zmm, 0)
        reg_write_bytes(self.uc, zmm, data)

    def clear_upper(self, zmm: int) -> None:
        """Zero bits 511:128 of one register (a VEX.128 result), if it may hold any."""
        bit = LOW16.get(zmm, 0)
        if bit == 0 or self.wide & bit:
            reg_clear_above(self.uc, zmm, 16)
            self.wide &= ~bit

    def clear(self, keep: int) -> None:
        """Zero zmm0-15 from byte `keep` up (16: vzeroupper, 0: vzeroall)."""
        if keep and self.wide != ALL16:
            for index in range(16):
                if self.wide >> index & 1:          # its bits 511:128 cleared
                    reg_clear_above(self.uc, ZMM[index], 16)
        elif keep:
            registers = int.from_bytes(self._low16.read(self.uc), "little")
            if registers & _UPPERS:                 # else the usual case: nothing above bit 127 is set
                self._low16.write(self.uc, (registers & ~_UPPERS).to_bytes(64 * 16, "little"))
        else:
            self._low16.write(self.uc, bytes(64 * 16))
        self.wide = 0
