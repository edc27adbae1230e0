"""The AArch64 processor as Unicorn provides it, with FP/SIMD enabled.

The loaders copy kernel names with `ldr q0`/`stp q0, q1`.  Architecturally those trap
unless CPACR_EL1.FPEN (bits 20-21) is 0b11; Unicorn 2.1.4 reports CPACR_EL1 = 0 and runs
them anyway (tests/machine/test_run_aarch64.py checks both), but emu sets FPEN so that it does not
depend on that leniency, as other Unicorn versions and QEMU configurations trap.
"""
from __future__ import annotations

from unicorn import UC_ARCH_ARM64, UC_MODE_ARM, Uc
from unicorn import arm64_const as arm64

from ...fast_uc import reg_read64

REGISTERS = tuple((f"x{n}", getattr(arm64, f"UC_ARM64_REG_X{n}")) for n in range(31)) + (
    ("sp", arm64.UC_ARM64_REG_SP), ("pc", arm64.UC_ARM64_REG_PC), ("nzcv", arm64.UC_ARM64_REG_NZCV))
CPACR_FPEN = 0b11 << 20
RET = 0xD65F03C0          # ret (to x30)


class Aarch64Cpu:
    name = "aarch64"
    page_size = 0x1000

    @staticmethod
    def stub_slot_code(address: int, target: int) -> bytes:
        return (0x14000000 | ((target - address) >> 2 & 0x3FFFFFF)).to_bytes(4, "little")      # b target

    @staticmethod
    def stub_return_code(address: int, result: int) -> bytes:
        load = 0x58000000 | ((result - address) >> 2 & 0x7FFFF) << 5                            # ldr x0, result
        return load.to_bytes(4, "little") + RET.to_bytes(4, "little")

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
