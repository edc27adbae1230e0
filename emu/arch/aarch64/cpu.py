"""The AArch64 processor as Unicorn provides it, with FP/SIMD enabled.

The loaders copy kernel names with `ldr q0`/`stp q0, q1`.  Architecturally those trap
unless CPACR_EL1.FPEN (bits 20-21) is 0b11; Unicorn 2.1.4 reports CPACR_EL1 = 0 and runs
them anyway (tests/emulator/test_run_aarch64.py checks both), but emu sets FPEN so that it does not
depend on that leniency, as other Unicorn versions and QEMU configurations trap.
"""
from __future__ import annotations

from unicorn import UC_ARCH_ARM64, UC_MODE_ARM, Uc
from unicorn import arm64_const as arm64

from ...emulator.unicorn_c import reg_read64
from ...binary.memory_map import FRAME_RETURN, FRAME_SLOT, FRAME_SP

REGISTERS = tuple((f"x{n}", getattr(arm64, f"UC_ARM64_REG_X{n}")) for n in range(31)) + (
    ("sp", arm64.UC_ARM64_REG_SP), ("pc", arm64.UC_ARM64_REG_PC), ("nzcv", arm64.UC_ARM64_REG_NZCV))
CPACR_FPEN = 0b11 << 20
RET = 0xD65F03C0          # ret (to x30)
assert FRAME_RETURN == FRAME_SLOT + 1     # stored as one pair


def _move32(register: int, value: int) -> tuple[int, int]:
    """movz x<register>, #low16; movk x<register>, #high16, lsl 16: a 32-bit address."""
    return 0xD2800000 | (value & 0xFFFF) << 5 | register, 0xF2A00000 | (value >> 16 & 0xFFFF) << 5 | register


def _branch(address: int, target: int) -> int:
    return 0x14000000 | ((target - address) >> 2 & 0x3FFFFFF)                  # b target


class Aarch64Cpu:
    name = "aarch64"
    page_size = 0x1000

    stub_window_fill = b"\0\0\0\0"       # udf #0 around the slots: a stray jump there stops at once

    @staticmethod
    def stub_slot_code(address: int, target: int) -> bytes:
        # movz/movk x16, address; b target.  x16 (IP0) is the scratch register calls may clobber.
        return b"".join(word.to_bytes(4, "little") for word in (*_move32(16, address), _branch(address + 8, target)))

    @staticmethod
    def jump_code(address: int, target: int) -> bytes:
        distance = target - address
        if -(1 << 27) <= distance < 1 << 27 and not distance & 3:
            return _branch(address, target).to_bytes(4, "little")                      # b target
        # ldr x16, 8; br x16; the target: x16 (IP0) is the scratch register a call may clobber
        return (0x58000050).to_bytes(4, "little") + (0xD61F0200).to_bytes(4, "little") + target.to_bytes(8, "little")

    @staticmethod
    def stub_entry_code(address: int, frame: int, result: int) -> tuple[bytes, int]:
        """The shared entry path (see emu.binary.memory_map) and the offset of its trap, the result load."""
        def pair(first: int, second: int, word: int) -> int:      # stp x<first>, x<second>, [x17, #8 word]
            return 0xA9000000 | word << 15 | second << 10 | 17 << 5 | first
        words = [*_move32(17, frame), pair(0, 1, 0), pair(2, 3, 2), pair(4, 5, 4), pair(6, 7, 6),
                 pair(16, 30, FRAME_SLOT),                          # the slot and the return address (x30)
                 0x910003F0,                                        # mov x16, sp
                 0xF9000000 | FRAME_SP << 10 | 17 << 5 | 16,        # str x16, [x17, #8 FRAME_SP]
                 0xD2800010]                                        # movz x16, #0
        trap = 4 * len(words)
        words += [0x58000000 | ((result - (address + trap)) >> 2 & 0x7FFFF) << 5, RET]     # ldr x0, result; ret
        return b"".join(word.to_bytes(4, "little") for word in words), trap

    def __init__(self) -> None:
        self._disassembler = None

    def create(self) -> Uc:
        uc = Uc(UC_ARCH_ARM64, UC_MODE_ARM)
        uc.reg_write(arm64.UC_ARM64_REG_CPACR_EL1, uc.reg_read(arm64.UC_ARM64_REG_CPACR_EL1) | CPACR_FPEN)
        return uc

    def pc(self, uc: Uc) -> int:
        return reg_read64(uc, arm64.UC_ARM64_REG_PC)

    def registers(self, uc: Uc) -> dict[str, int]:
        return {name: uc.reg_read(reg) for name, reg in REGISTERS}

    def extension_sites(self, image) -> list[int]:
        return []

    def create_extension(self, uc: Uc) -> None:
        return None                  # Unicorn runs every AArch64 instruction the loaders use

    def disassemble(self, code: bytes, address: int) -> str:
        if self._disassembler is None:
            from capstone import CS_ARCH_ARM64, CS_MODE_ARM, Cs
            self._disassembler = Cs(CS_ARCH_ARM64, CS_MODE_ARM)
        for insn in self._disassembler.disasm(code, address, 1):
            return f"{insn.mnemonic} {insn.op_str}".strip()
        return f"(undecodable bytes {code[:4].hex()})"
