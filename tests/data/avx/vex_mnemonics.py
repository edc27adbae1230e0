"""List the VEX/EVEX instructions in the code of a set of x86-64 objects: which forms emu must carry out.

    python tests/data/avx/vex_mnemonics.py OBJECT_OR_DIRECTORY... [--json]

Every executable section is swept linearly with capstone (these objects are compiler
output: no data in code).  An instruction counts when its encoding starts with a VEX
(C4/C5) or EVEX (62) prefix; it is reported by mnemonic and form: the vector length
(128/256/512, or `scalar` for an ss/sd operation) and whether an operand is memory.
The list in `vex_mnemonics.txt` was written by this script (command at its top).
"""
from __future__ import annotations

import argparse
import collections
import json
import struct
import sys
from pathlib import Path

from capstone import CS_ARCH_X86, CS_MODE_64, Cs

SHF_EXECINSTR = 0x4
PREFIXES = (0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x67)


def code_sections(data: bytes) -> list[bytes]:
    """The bytes of every executable section of a little-endian ELF64 relocatable object."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or struct.unpack_from("<H", data, 18)[0] != 62:
        return []
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = []
    for i in range(shnum):
        _, kind, flags, _, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        if flags & SHF_EXECINSTR and kind == 1:            # SHT_PROGBITS
            sections.append(data[offset:offset + size])
    return sections


def encoding(raw: bytes) -> str | None:
    i = 0
    while i < len(raw) and raw[i] in PREFIXES:
        i += 1
    return {0xC4: "VEX", 0xC5: "VEX", 0x62: "EVEX"}.get(raw[i]) if i < len(raw) else None


def form(mnemonic: str, op_str: str) -> str:
    width = "512" if "zmm" in op_str else "256" if "ymm" in op_str else "128" if "xmm" in op_str else "-"
    if width == "128" and mnemonic.endswith(("ss", "sd")) and not mnemonic.startswith(("vmovmsk", "vmovs", "vbroadcast")):
        width = "scalar"
    return width + (" mem" if "ptr" in op_str else "")


def survey(paths: list[Path]) -> dict:
    cs = Cs(CS_ARCH_X86, CS_MODE_64)
    found: dict[tuple[str, str, str], collections.Counter] = collections.defaultdict(collections.Counter)
    objects = 0
    for path in paths:
        sections = code_sections(path.read_bytes())
        objects += bool(sections)
        for code in sections:
            for address, size, mnemonic, op_str in cs.disasm_lite(code, 0):
                kind = encoding(code[address:address + size])
                if kind is not None and mnemonic[0] in "vk":
                    found[(mnemonic, kind, form(mnemonic, op_str))][path.name] += 1
    return {"objects": objects, "forms": [{"mnemonic": m, "encoding": e, "form": f, "count": sum(c.values()),
                                           "objects": len(c)} for (m, e, f), c in sorted(found.items())]}


def expand(arguments: list[str]) -> list[Path]:
    paths = []
    for argument in arguments:
        path = Path(argument)
        paths.extend(sorted(path.rglob("*.o")) if path.is_dir() else [path])
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = survey(expand(args.paths))
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"# {result['objects']} x86-64 objects; mnemonic, encoding, form, instructions, objects")
    for row in result["forms"]:
        print(f"{row['mnemonic']:<16} {row['encoding']:<5} {row['form']:<11} {row['count']:>6} {row['objects']:>4}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
