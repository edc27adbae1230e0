"""The x86-64 processor as Unicorn provides it."""
from __future__ import annotations

from unicorn import UC_ARCH_X86, UC_MODE_64, Uc
from unicorn import x86_const as x86

from ...emulator.unicorn_c import reg_read64
from ...binary.memory_map import FRAME_RETURN, FRAME_SLOT, FRAME_SP

REGISTER_NAMES = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
                  "r12", "r13", "r14", "r15", "rip", "eflags")
REGISTERS = tuple((name, getattr(x86, f"UC_X86_REG_{name.upper()}")) for name in REGISTER_NAMES)


class X86_64Cpu:
    name = "x86_64"
    page_size = 0x1000

    # A byte no x86-64 decoder accepts (push es, invalid in 64-bit mode) at every offset:
    # what fills the stub window around the slots, so a stray jump there stops at once.
    stub_window_fill = b"\x06"

    @staticmethod
    def stub_slot_code(address: int, target: int) -> bytes:
        # mov r11d, address; jmp target.  r11 is a scratch register no argument uses.
        return b"\x41\xbb" + address.to_bytes(4, "little") + b"\xe9" + (target - (address + 11)).to_bytes(4, "little", signed=True)

    @staticmethod
    def jump_code(address: int, target: int) -> bytes:
        relative = target - (address + 5)
        if -(1 << 31) <= relative < 1 << 31:
            return b"\xe9" + relative.to_bytes(4, "little", signed=True)               # jmp rel32
        return b"\x49\xbb" + target.to_bytes(8, "little") + b"\x41\xff\xe3"          # movabs r11, target; jmp r11

    @staticmethod
    def stub_entry_code(address: int, frame: int, result: int) -> tuple[bytes, int]:
        """The shared entry path (see emu.binary.memory_map) and the offset of its trap, the result load."""
        def store(rex: int, reg: int, word: int) -> bytes:        # mov [frame + 8 word], reg64 (absolute disp32)
            return bytes((rex, 0x89, 0x04 | reg << 3, 0x25)) + (frame + 8 * word).to_bytes(4, "little")
        code = b"".join(store(rex, reg, word) for rex, reg, word in (
            (0x48, 7, 0), (0x48, 6, 1), (0x48, 2, 2), (0x48, 1, 3), (0x4C, 0, 4), (0x4C, 1, 5),   # rdi rsi rdx rcx r8 r9
            (0x4C, 3, FRAME_SLOT)))                                                                # r11: the slot
        code += b"\x4c\x8b\x1c\x24" + store(0x4C, 3, FRAME_RETURN)     # mov r11, [rsp]: the return address
        code += store(0x48, 4, FRAME_SP) + b"\x45\x31\xdb"               # rsp; xor r11d, r11d
        trap = len(code)                                                # mov rax, [rip + disp32]; ret
        code += b"\x48\x8b\x05" + (result - (address + trap + 7)).to_bytes(4, "little", signed=True) + b"\xc3"
        return code, trap

    def __init__(self) -> None:
        self._disassembler = None
        self._scanner = None

    def create(self) -> Uc:
        return Uc(UC_ARCH_X86, UC_MODE_64)   # SSE is on by default in Unicorn's x86-64

    def pc(self, uc: Uc) -> int:
        return reg_read64(uc, x86.UC_X86_REG_RIP)

    def registers(self, uc: Uc) -> dict[str, int]:
        return {name: uc.reg_read(reg) for name, reg in REGISTERS}

    def extension_sites(self, image) -> list[int]:
        """Addresses of VEX/EVEX instructions in the image's code (see avx.scan)."""
        if self._scanner is None:
            from .avx.scan import Scanner
            self._scanner = Scanner()
        return [address for segment in image.segments if segment.perms & 4
                for address in self._scanner.scan(segment.data, segment.address)]

    def create_extension(self, uc: Uc):
        """The unit that carries out the AVX instructions Unicorn's QEMU 5 core lacks (host-CPU exports)."""
        from .avx.unit import AvxUnit
        return AvxUnit(uc, verify_cache=False)     # the Machine calls code_changed() when code changes

    def disassemble(self, code: bytes, address: int) -> str:
        if self._disassembler is None:
            from capstone import CS_ARCH_X86, CS_MODE_64, Cs
            self._disassembler = Cs(CS_ARCH_X86, CS_MODE_64)
        for insn in self._disassembler.disasm(code, address, 1):
            return f"{insn.mnemonic} {insn.op_str}".strip()
        return f"(undecodable bytes {code[:8].hex()})"
