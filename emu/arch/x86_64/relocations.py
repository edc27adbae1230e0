"""The x86-64 relocation table (System V psABI, large and small code models).

Numbered like the psABI; types emu does not implement stay as comments so the table
doubles as a coverage list.  Formulas are the psABI's, over S (symbol), A (addend),
P (place), GOT (GOT base) and G (the symbol's slot offset from GOT).
"""
from __future__ import annotations

from ...binary.relocation import Recipe, word

R = Recipe
TABLE: dict[int, Recipe] = {
    # 0: R_X86_64_NONE
    1: R("R_X86_64_64", 8, "S + A", word(64, None)),
    2: R("R_X86_64_PC32", 4, "S + A - P", word(32, True)),
    # 3: R_X86_64_GOT32 (G + A): 32-bit only in practice
    4: R("R_X86_64_PLT32", 4, "S + A - P", word(32, True)),  # L + A - P (L = stub)
    # 5: R_X86_64_COPY, 6: GLOB_DAT, 7: JUMP_SLOT, 8: RELATIVE: dynamic only
    9: R("R_X86_64_GOTPCREL", 4, "GOT + G + A - P", word(32, True), uses_got=True),
    10: R("R_X86_64_32", 4, "S + A", word(32, False)),  # zero-extended
    11: R("R_X86_64_32S", 4, "S + A", word(32, True)),  # sign-extended
    12: R("R_X86_64_16", 2, "S + A", word(16, False)),
    # 13: R_X86_64_PC16, 14: R_X86_64_8, 15: R_X86_64_PC8
    # 16-23: TLS (DTPMOD64, DTPOFF64, TPOFF64, TLSGD, TLSLD, DTPOFF32, GOTTPOFF, TPOFF32)
    24: R("R_X86_64_PC64", 8, "S + A - P", word(64, True)),
    25: R("R_X86_64_GOTOFF64", 8, "S + A - GOT", word(64, True)),
    26: R("R_X86_64_GOTPC32", 4, "GOT + A - P", word(32, True)),
    27: R("R_X86_64_GOT64", 8, "G + A", word(64, True), uses_got=True),
    28: R("R_X86_64_GOTPCREL64", 8, "GOT + G + A - P", word(64, True), uses_got=True),
    29: R("R_X86_64_GOTPC64", 8, "GOT + A - P", word(64, True)),
    # 30: R_X86_64_GOTPLT64, 31: R_X86_64_PLTOFF64
    # 32: R_X86_64_SIZE32, 33: R_X86_64_SIZE64, 34-36: TLS descriptors, 37: IRELATIVE
    41: R("R_X86_64_GOTPCRELX", 4, "GOT + G + A - P", word(32, True), uses_got=True),  # as GOTPCREL
    42: R("R_X86_64_REX_GOTPCRELX", 4, "GOT + G + A - P", word(32, True), uses_got=True),  # as GOTPCREL
}


# The dynamic relocations a shared library built from DSL exports carries (its .rela.dyn and .rela.plt), applied
# by emu.binary.elf.shared at the library's load base B.  A dynamic plan gives symbol 0 (RELATIVE's) S = B, so
# the psABI's B + A is written S + A; GLOB_DAT and JUMP_SLOT are S, as the psABI says (glibc ignores their addend).
DYNAMIC_TABLE: dict[int, Recipe] = {
    1: R("R_X86_64_64", 8, "S + A", word(64, None)),
    6: R("R_X86_64_GLOB_DAT", 8, "S", word(64, None)),
    7: R("R_X86_64_JUMP_SLOT", 8, "S", word(64, None)),
    8: R("R_X86_64_RELATIVE", 8, "S + A", word(64, None)),             # B + A
}

# Names of the types neither table implements, for the message that refuses them.
NAMES: dict[int, str] = {
    0: "R_X86_64_NONE", 3: "R_X86_64_GOT32", 5: "R_X86_64_COPY", 13: "R_X86_64_PC16", 14: "R_X86_64_8",
    15: "R_X86_64_PC8", 16: "R_X86_64_DTPMOD64", 17: "R_X86_64_DTPOFF64", 18: "R_X86_64_TPOFF64", 19: "R_X86_64_TLSGD",
    20: "R_X86_64_TLSLD", 21: "R_X86_64_DTPOFF32", 22: "R_X86_64_GOTTPOFF", 23: "R_X86_64_TPOFF32",
    30: "R_X86_64_GOTPLT64", 31: "R_X86_64_PLTOFF64", 32: "R_X86_64_SIZE32", 33: "R_X86_64_SIZE64",
    34: "R_X86_64_GOTPC32_TLSDESC", 35: "R_X86_64_TLSDESC_CALL", 36: "R_X86_64_TLSDESC", 37: "R_X86_64_IRELATIVE",
    38: "R_X86_64_RELATIVE64",
}
