"""The AArch64 relocation table (ELF for the Arm 64-bit Architecture, AAELF64).

Numbered like the psABI; types emu does not implement stay as comments so the table
doubles as a coverage list.  Formulas use S (symbol), A (addend), P (place), GOT (GOT
base), G (the symbol's slot offset from GOT) and Page(x) = x & ~0xFFF.  Instruction
fields are written by the shared `instruction_field` encoder; the few field shapes
AArch64 has (ADR's split immediate, the scaled load/store offset, MOVW's imm16) are
built once here by the factories below and reused by every type that has that shape.
"""
from __future__ import annotations

from ...binary.relocation import Recipe, instruction_field, word


def _adr_immediate(insn: int, imm21: int) -> int:
    """ADR/ADRP: immlo is bits 29-30, immhi bits 5-23."""
    immlo, immhi = imm21 & 0x3, imm21 >> 2
    return (insn & ~((0x3 << 29) | (0x7FFFF << 5))) | (immlo << 29) | (immhi << 5)


def _adr(scale: int, check: bool = True):
    """ADR (byte offset, scale 0) or ADRP (page offset, scale 12): a signed 21-bit split field."""
    return instruction_field(21, 0, signed=True, scale=scale, check=check, place=_adr_immediate)


def _lo12(size_log2: int):
    """The imm12 of ADD (size_log2 0) or LDR/STR of 2**size_log2 bytes: bits 11:size_log2 of the value.

    The psABI requires the dropped low bits to be zero (lld errors); so does emu.
    """
    return instruction_field(12 - size_log2, 10, signed=False, scale=size_log2, check=False, align=size_log2)


def _branch(bits: int):
    """B/BL (26), B.cond/CBZ/LDR literal (19, at bit 5) and TBZ (14, at bit 5): a word offset."""
    return instruction_field(bits, 0 if bits == 26 else 5, signed=True, scale=2, align=2)


def _movw(group: int, check: bool):
    """MOVZ/MOVK imm16 (bits 5-20) from bits [16*group+15 : 16*group]; checked forms need X < 2**(16*group+16)."""
    return instruction_field(16, 5, signed=False, scale=16 * group, check=check)


# The psABI formulas; Page(x) = x & ~0xFFF, and G(GDAT(S + A)) = GOT + G + A: like lld,
# a non-zero addend offsets the address of the symbol's GOT slot.
ABS = "S + A"
PREL = "S + A - P"
PAGE_PREL = "Page(S + A) - Page(P)"
LO12 = "(S + A) & 0xFFF"
GOT_PAGE_PREL = "Page(GOT + G + A) - Page(P)"
GOT_LO12 = "(GOT + G + A) & 0xFFF"


R = Recipe
TABLE: dict[int, Recipe] = {
    # 0 and 256: R_AARCH64_NONE
    257: R("R_AARCH64_ABS64", 8, ABS, word(64, None)),                                    # S + A
    258: R("R_AARCH64_ABS32", 4, ABS, word(32, None)),                                    # S + A, -2^31 <= X < 2^32
    259: R("R_AARCH64_ABS16", 2, ABS, word(16, None)),                                    # S + A, -2^15 <= X < 2^16
    260: R("R_AARCH64_PREL64", 8, PREL, word(64, True)),                                  # S + A - P
    261: R("R_AARCH64_PREL32", 4, PREL, word(32, None)),                                  # S + A - P, -2^31 <= X < 2^32
    262: R("R_AARCH64_PREL16", 2, PREL, word(16, None)),                                  # S + A - P, -2^15 <= X < 2^16
    263: R("R_AARCH64_MOVW_UABS_G0", 4, ABS, _movw(0, True)),                             # S + A, 0 <= X < 2^16
    264: R("R_AARCH64_MOVW_UABS_G0_NC", 4, ABS, _movw(0, False)),                         # S + A
    265: R("R_AARCH64_MOVW_UABS_G1", 4, ABS, _movw(1, True)),                             # S + A, 0 <= X < 2^32
    266: R("R_AARCH64_MOVW_UABS_G1_NC", 4, ABS, _movw(1, False)),                         # S + A
    267: R("R_AARCH64_MOVW_UABS_G2", 4, ABS, _movw(2, True)),                             # S + A, 0 <= X < 2^48
    268: R("R_AARCH64_MOVW_UABS_G2_NC", 4, ABS, _movw(2, False)),                         # S + A
    269: R("R_AARCH64_MOVW_UABS_G3", 4, ABS, _movw(3, False)),                            # S + A, bits 63:48, no check
    # 270-272: R_AARCH64_MOVW_SABS_G0..G2 (S + A, MOVN/MOVZ chosen by sign)
    273: R("R_AARCH64_LD_PREL_LO19", 4, PREL, _branch(19)),                              # S + A - P, -2^20 <= X < 2^20
    274: R("R_AARCH64_ADR_PREL_LO21", 4, PREL, _adr(0)),                                  # S + A - P, -2^20 <= X < 2^20
    275: R("R_AARCH64_ADR_PREL_PG_HI21", 4, PAGE_PREL, _adr(12)),                         # Page(S + A) - Page(P), -2^32 <= X < 2^32
    276: R("R_AARCH64_ADR_PREL_PG_HI21_NC", 4, PAGE_PREL, _adr(12, check=False)),         # Page(S + A) - Page(P)
    277: R("R_AARCH64_ADD_ABS_LO12_NC", 4, LO12, _lo12(0)),                               # S + A, bits 11:0
    278: R("R_AARCH64_LDST8_ABS_LO12_NC", 4, LO12, _lo12(0)),                             # S + A, bits 11:0
    279: R("R_AARCH64_TSTBR14", 4, PREL, _branch(14)),                                    # S + A - P, -2^15 <= X < 2^15
    280: R("R_AARCH64_CONDBR19", 4, PREL, _branch(19)),                                   # S + A - P, -2^20 <= X < 2^20
    # 281: unallocated
    282: R("R_AARCH64_JUMP26", 4, PREL, _branch(26)),                                     # S + A - P, -2^27 <= X < 2^27
    283: R("R_AARCH64_CALL26", 4, PREL, _branch(26)),                                     # S + A - P (S = stub), as JUMP26
    284: R("R_AARCH64_LDST16_ABS_LO12_NC", 4, LO12, _lo12(1)),                            # S + A, bits 11:1
    285: R("R_AARCH64_LDST32_ABS_LO12_NC", 4, LO12, _lo12(2)),                            # S + A, bits 11:2
    286: R("R_AARCH64_LDST64_ABS_LO12_NC", 4, LO12, _lo12(3)),                            # S + A, bits 11:3
    # 287-293: R_AARCH64_MOVW_PREL_G0..G3 (S + A - P)
    299: R("R_AARCH64_LDST128_ABS_LO12_NC", 4, LO12, _lo12(4)),                           # S + A, bits 11:4
    # 300-306: R_AARCH64_MOVW_GOTOFF_G0..G3 (G(GDAT(S + A)) - GOT)
    # 307: R_AARCH64_GOTREL64 (S + A - GOT), 308: R_AARCH64_GOTREL32
    # 309: R_AARCH64_GOT_LD_PREL19 (G(GDAT(S + A)) - P), 310: R_AARCH64_LD64_GOTOFF_LO15
    311: R("R_AARCH64_ADR_GOT_PAGE", 4, GOT_PAGE_PREL, _adr(12), uses_got=True),           # Page(G(GDAT(S + A))) - Page(P)
    312: R("R_AARCH64_LD64_GOT_LO12_NC", 4, GOT_LO12, _lo12(3), uses_got=True),           # G(GDAT(S + A)), bits 11:3
    # 313: R_AARCH64_LD64_GOTPAGE_LO15, 314: R_AARCH64_PLT32, 315: R_AARCH64_GOTPCREL32
    # 512-573: TLS (TLSGD, TLSLD, TLSIE, TLSLE, TLSDESC)
    # 1024-1032: dynamic only (COPY, GLOB_DAT, JUMP_SLOT, RELATIVE, TLS_*, IRELATIVE)
}


# The dynamic relocations a shared library built from DSL exports carries, applied by emu.binary.elf.shared at
# the library's load base B.  A dynamic plan gives symbol 0 (RELATIVE's) S = B, so Delta(S) + A is S + A.
DYNAMIC_TABLE: dict[int, Recipe] = {
    257: R("R_AARCH64_ABS64", 8, ABS, word(64, None)),                                    # S + A
    1025: R("R_AARCH64_GLOB_DAT", 8, ABS, word(64, None)),                                # S + A
    1026: R("R_AARCH64_JUMP_SLOT", 8, ABS, word(64, None)),                               # S + A
    1027: R("R_AARCH64_RELATIVE", 8, ABS, word(64, None)),                                # Delta(S) + A = B + A
}

# Names of the types neither table implements, for the message that refuses them.
NAMES: dict[int, str] = {
    0: "R_AARCH64_NONE", 256: "R_AARCH64_NONE", 1024: "R_AARCH64_COPY", 1028: "R_AARCH64_TLS_DTPMOD64",
    1029: "R_AARCH64_TLS_DTPREL64", 1030: "R_AARCH64_TLS_TPREL64", 1031: "R_AARCH64_TLSDESC",
    1032: "R_AARCH64_IRELATIVE", 314: "R_AARCH64_PLT32", 315: "R_AARCH64_GOTPCREL32",
}
