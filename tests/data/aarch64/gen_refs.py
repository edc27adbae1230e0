"""Rebuild the AArch64 relocation references with GNU binutils (see README.md).

Assembles refs.s and range.s, links refs.o at fixed addresses against the absolute
symbols below, and writes refs.expected.json: each section's linked address and bytes,
the symbol values, and the GOT slot the linker gave each GOT-referenced symbol.  The
test needs none of the toolchain; it recomputes every relocation of refs.o with emu's
table and compares against these bytes.
"""
from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PREFIX = "aarch64-linux-gnu-"
TEXT = 0x1000_0000
DATA = 0x1020_0000

SYMBOLS = {
    "call_fwd": TEXT + 0x7FF_FFFC,           # bl at +0: the largest forward CALL26 offset
    "call_back": TEXT - 0x7FF_FF00,          # near the backward limit
    "jump_fwd": TEXT + 0x12_3458,
    "cond_fwd": TEXT + 0x10 + 0xF_FFFC,      # b.eq at +0x10: the largest forward CONDBR19 offset
    "cond_back": TEXT + 0x14 - 0x10_0000,    # cbz at +0x14: the most negative one
    "tst_fwd": TEXT + 0x18 + 0x7FFC,         # tbz at +0x18: the largest forward TSTBR14 offset
    "tst_back": TEXT + 0x1C - 0x8000,        # tbnz at +0x1c: the most negative one
    "lit_fwd": TEXT + 0x20 + 0x4_5678,
    "adr_fwd": TEXT + 0x24 + 0xF_FFFF,       # adr at +0x24: the largest ADR offset
    "adr_back": TEXT + 0x28 - 0xF_FFFF,
    "far_up": TEXT + 0xFFFF_E345,            # ADRP page delta 0xffffe000 (0xfffff000 with +0x1000)
    "far_down": 0xABC,
    "data_b": 0x1234_5677,
    "data_h": 0x1234_5FFE,
    "data_w": 0x1234_5A5C,
    "data_x": 0x1234_5AB8,
    "data_q": 0x1234_5FF0,
    "small16": 0xBEEF,
    "mid32": 0xDEAD_BEEF,
    "mid48": 0xCAFE_DEAD_BEEF,
    "big64": 0xFEDC_BA98_7654_3210,
    "got_sym": 0x1357_2468,
    "prel16_near": DATA + 0x34 + 0x7FF0,
    "prel16_back": DATA + 0x36 - 0x8000,
}


def run(*command: str) -> str:
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def section_table(path: Path) -> dict[str, tuple[int, int]]:
    """name -> (address, size) from readelf -SW."""
    table = {}
    for line in run(f"{PREFIX}readelf", "-SW", str(path)).splitlines():
        match = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]{16})\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if match:
            table[match[1]] = (int(match[2], 16), int(match[3], 16))
    return table


def section_bytes(path: Path, name: str) -> bytes:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "section.bin"
        run(f"{PREFIX}objcopy", "-O", "binary", f"--only-section={name}", str(path), str(out))
        return out.read_bytes()


def main() -> None:
    for name in ("refs", "range"):
        run(f"{PREFIX}as", "-o", str(HERE / f"{name}.o"), str(HERE / f"{name}.s"))
    linked = HERE / "refs.linked"
    defsyms = [arg for name, value in SYMBOLS.items() for arg in ("--defsym", f"{name}={value:#x}")]
    run(f"{PREFIX}ld", "-static", "--no-relax", "-Ttext", f"{TEXT:#x}", "-Tdata", f"{DATA:#x}",
        *defsyms, "-o", str(linked), str(HERE / "refs.o"))
    sections = section_table(linked)
    assert sections[".text"][0] == TEXT and sections[".data"][0] == DATA, sections
    got_address, got_size = sections[".got"]
    got = section_bytes(linked, ".got")
    slots = [int.from_bytes(got[i:i + 8], "little") for i in range(0, got_size, 8)]
    expected = {
        "command": "python gen_refs.py (GNU binutils " + run(f"{PREFIX}ld", "--version").splitlines()[0] + ")",
        "sections": {name: {"address": sections[name][0], "linked": section_bytes(linked, name).hex()}
                     for name in (".text", ".data")},
        "symbols": SYMBOLS,
        "got_slots": {"got_sym": got_address + 8 * slots.index(SYMBOLS["got_sym"])},
    }
    (HERE / "refs.expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
