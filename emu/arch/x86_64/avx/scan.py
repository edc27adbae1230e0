"""Find the VEX/EVEX instructions in a code range without disassembling all of it.

In 64-bit mode every such instruction starts with C4, C5 or 62, after at most a few
segment/address-size prefixes.  Each such byte is decoded as if an instruction started
there; where that gives a vector instruction, it and the run of prefixes just before it
are sites.  Some sites are bytes inside another instruction: a code hook fires only
where an instruction starts, so those never run, and every real vector instruction is
found without sweeping the code (a linear disassembly costs ten times more).  The
verdict depends only on the instruction's form (its prefix, opcode and ModRM bytes),
so capstone decodes each form once per process.
"""
from __future__ import annotations

import ctypes
from typing import Callable

from capstone import CS_ARCH_X86, CS_MODE_64, Cs
from capstone import _cs as _CAPSTONE_LIB
from capstone import _cs_insn as _CS_INSN

_CS_DISASM, _CS_FREE = _CAPSTONE_LIB.cs_disasm, _CAPSTONE_LIB.cs_free
ADDRESS_PREFIXES = (0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x67)

# An instruction's form: its VEX (C5 xx, C4 xx xx) or EVEX (62 xx xx xx) prefix, opcode
# and ModRM.  These decide capstone's mnemonic and operand kinds (bytes after them are
# SIB, displacement and immediate), so the scan's verdict on a form is kept for the
# process.  Bounded: hostile code can hold any number of forms.
FORM_LENGTH = {0xC5: 4, 0xC4: 5, 0x62: 6}
FORMS: dict[bytes, bool] = {}
FORMS_MAX = 1 << 16

# A C4 byte starts a VEX instruction only if its next byte names opcode map 1, 2 or 3
# (its low five bits; the other values are reserved and fault on hardware).  Code is
# full of C4 bytes inside displacements and immediates, and each candidate costs a
# disassembly: the map check drops most of them before that.
_VEX3_MAPS = frozenset(b for b in range(256) if b & 0x1F in (1, 2, 3))


def vex_leads(code: bytes) -> list[int]:
    """Offsets of every C4, C5 and 62 byte (bytes.find: ten times faster than a regex class)."""
    offsets = []
    for lead in (0xC4, 0xC5, 0x62):
        offset = code.find(lead)
        while offset >= 0:
            offsets.append(offset)
            offset = code.find(lead, offset + 1)
    offsets.sort()
    return offsets


def is_xmm_store(mnemonic: str, op_str: str) -> bool:
    """A VEX.128 move from an xmm register to memory: Unicorn carries it out correctly.

    It writes no register (so no upper bits to zero) and has no third operand, the two
    things Unicorn gets wrong; leaving it unhooked saves a Python call per execution.
    """
    return (mnemonic.startswith("vmov") and op_str.startswith(("xmmword ptr", "qword ptr", "dword ptr"))
            and "ymm" not in op_str and "zmm" not in op_str and "{" not in op_str)


def is_vector_vex(raw: bytes, mnemonic: str) -> bool:
    """VEX (C4/C5) or EVEX (62) encoded, and a vector or mask instruction (not BMI)."""
    i = 0
    while i < len(raw) and raw[i] in ADDRESS_PREFIXES:
        i += 1
    return i < len(raw) and raw[i] in (0xC4, 0xC5, 0x62) and mnemonic[0] in "vk"


class Scanner:
    """scan(code, address): the addresses where a vector instruction to carry out may start.

    Unicorn runs VEX.128 instructions itself, wrongly (no third operand, no zeroing of
    bits 255:128, `vzeroupper` as a no-op), so those are sites; VEX.256/EVEX ones are
    too (a code hook is cheaper than the invalid-instruction fault).  VEX.128 stores are
    left out (see is_xmm_store).
    """

    def __init__(self) -> None:
        self._lite = Cs(CS_ARCH_X86, CS_MODE_64)

    def scan(self, code: bytes, address: int) -> list[int]:
        decode, sites, forms, length = None, [], FORMS, len(code)
        for lead in vex_leads(code):
            byte = code[lead]
            if byte == 0xC4 and (lead + 1 >= length or code[lead + 1] not in _VEX3_MAPS):
                continue
            form = code[lead:lead + FORM_LENGTH[byte]]
            verdict = forms.get(form)
            if verdict is None:
                if decode is None:
                    decode = self._decoder(code, address)
                insn = decode(lead)
                verdict = (insn is not None and is_vector_vex(code[lead:lead + insn[0]], insn[1])
                           and not is_xmm_store(insn[1], insn[2]))
                if (insn is not None or lead + 15 <= length) and len(form) == FORM_LENGTH[byte] and len(forms) < FORMS_MAX:
                    forms[form] = verdict        # not a decode cut short by the end of the code
            if verdict:
                first = lead
                while first > 0 and lead - first < 4 and code[first - 1] in ADDRESS_PREFIXES:
                    first -= 1
                sites.extend(range(address + first, address + lead + 1))
        return sorted(set(sites))

    def _decoder(self, code: bytes, address: int) -> Callable[[int], tuple[int, str, str] | None]:
        """decode(offset) -> (size, mnemonic, op_str) of one instruction in `code`, or None.

        A scan decodes a few dozen single instructions; capstone's disasm_lite copies the
        window and builds a generator for each.  This calls cs_disasm on the code in place
        (a quarter cheaper).
        """
        buffer = bytearray(code)
        base, found = ctypes.c_char.from_buffer(buffer), ctypes.POINTER(_CS_INSN)()
        handle, found_ref, length = self._lite.csh, ctypes.byref(found), len(code)

        def decode(offset: int):
            count = _CS_DISASM(handle, ctypes.byref(base, offset), min(15, length - offset), address + offset, 1, found_ref)
            if count <= 0:
                return None
            insn = found[0]
            result = (insn.size, insn.mnemonic.decode("ascii"), insn.op_str.decode("ascii"))
            _CS_FREE(found, count)
            return result
        return decode
