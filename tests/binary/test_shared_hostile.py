"""Hostile shared libraries: each is refused with exit 2 and one paragraph naming the file, the structure and
the offset; never a traceback, a hang or an allocation of what a header claims.

Each case mutates a copy of a library linked in the test from committed real-world exports
(tests/binary/shared_build.py) with the helpers of tests/fuzz/elf.py, and runs the CLI in-process.
"""
from __future__ import annotations

import struct
import subprocess

import pytest

from emu.binary.elf.dynamic import (DT_FLAGS_1, DT_JMPREL, DT_NEEDED, DT_PLTRELSZ, DT_RELA, DT_RELASZ, DT_STRSZ,
                                    DT_SYMTAB)
from tests.binary.shared_build import link
from tests.binary.test_hostile_input import refused, write
from tests.fuzz import elf


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> bytes:
    return link(tmp_path_factory.mktemp("hostile") / "lib.so", "x86_64", runtime="static").read_bytes()


@pytest.fixture(scope="module")
def arm_library(tmp_path_factory) -> bytes:
    return link(tmp_path_factory.mktemp("hostile_arm") / "lib.so", "aarch64").read_bytes()


@pytest.fixture
def raw(library) -> bytearray:
    return bytearray(library)


def _loads(raw: bytes) -> list[dict]:
    return [h for h in elf.program_headers(raw) if h["type"] == elf.PT_LOAD]


def _first_relocation(raw: bytes, name: str = ".rela.dyn") -> dict:
    return elf.relocations(raw, name)[0]


# -- what is neither an object nor a library -----------------------------------------------------------
def test_a_pie_executable_is_refused_as_such(tmp_path, capsys):
    source = tmp_path / "main.c"
    source.write_text("int main(void) { return 0; }\n")
    subprocess.run(["cc", "-pie", "-fPIE", "-o", str(tmp_path / "main"), str(source)], check=True)
    refused(capsys, tmp_path / "main", "a PIE executable", "neither a relocatable object")


def test_a_library_marked_pie_is_refused_as_such(tmp_path, capsys, raw):
    entry = next(e for e in elf.dynamic_entries(raw) if e["tag"] == DT_NEEDED)
    struct.pack_into("<qQ", raw, entry["entry_offset"], DT_FLAGS_1, 0x0800_0000)
    refused(capsys, write(tmp_path, "pie.so", raw), "a PIE executable (DT_FLAGS_1 has DF_1_PIE)")


# -- program headers --------------------------------------------------------------------------------------
def test_program_headers_past_the_end_of_the_file(tmp_path, capsys, raw):
    struct.pack_into("<Q", raw, 32, len(raw) - 8)
    refused(capsys, write(tmp_path, "ph.so", raw), "program header table at offset", "runs past the end of the file")


def test_a_huge_p_memsz_is_refused_before_anything_is_allocated(tmp_path, capsys, raw):
    load = _loads(raw)[-1]
    elf.set_program_header(raw, load["index"], "memsz", 1 << 60)
    refused(capsys, write(tmp_path, "huge.so", raw), f"loadable segment {load['index']}", "asks for 0x1000000000000000 bytes",
            "at most 48 MiB")


def test_segments_spread_wider_than_emu_maps_are_refused(tmp_path, capsys, raw):
    load = _loads(raw)[-1]
    elf.set_program_header(raw, load["index"], "vaddr", 1 << 40)
    refused(capsys, write(tmp_path, "wide.so", raw), "the loadable segments span", "at most 48 MiB")


def test_overlapping_segments_are_refused(tmp_path, capsys, raw):
    first, second = _loads(raw)[:2]
    elf.set_program_header(raw, first["index"], "memsz", second["vaddr"] - first["vaddr"] + 0x10)
    refused(capsys, write(tmp_path, "overlap.so", raw), f"loadable segments {first['index']}", f"and {second['index']}",
            "overlap")


def test_a_segment_reading_past_the_file_is_refused(tmp_path, capsys, raw):
    load = _loads(raw)[1]
    elf.set_program_header(raw, load["index"], "filesz", len(raw))
    elf.set_program_header(raw, load["index"], "memsz", len(raw))
    refused(capsys, write(tmp_path, "pastfile.so", raw), f"loadable segment {load['index']}", "past the end of the file")


def test_a_segment_with_more_file_bytes_than_memory_is_refused(tmp_path, capsys, raw):
    load = _loads(raw)[0]
    elf.set_program_header(raw, load["index"], "filesz", load["memsz"] + 1)
    refused(capsys, write(tmp_path, "filesz.so", raw), f"loadable segment {load['index']}", "bytes in the file but")


# -- the dynamic section ----------------------------------------------------------------------------------
def test_a_dynamic_section_without_dt_null_is_refused(tmp_path, capsys, raw):
    dynamic = next(h for h in elf.program_headers(raw) if h["type"] == elf.PT_DYNAMIC)
    null = elf.dynamic_entries(raw)[-1]["entry_offset"]
    for at in range(null, dynamic["offset"] + dynamic["filesz"], 16):      # DT_NULL and the padding after it
        struct.pack_into("<qQ", raw, at, 0x6FFF_F000, 0)
    refused(capsys, write(tmp_path, "nonull.so", raw), f"the dynamic section at offset {dynamic['offset']:#x}",
            "no DT_NULL entry")


def test_a_truncated_dynamic_section_is_refused(tmp_path, capsys, raw):
    dynamic = next(h for h in elf.program_headers(raw) if h["type"] == elf.PT_DYNAMIC)
    del raw[dynamic["offset"] + 40:]
    struct.pack_into("<Q", raw, 40, 0)                      # no section headers either: they were past the cut
    struct.pack_into("<HH", raw, 60, 0, 0)
    refused(capsys, write(tmp_path, "cut.so", raw), "dynamic section", f"offset {dynamic['offset']:#x}", "past the end of the file")


@pytest.mark.parametrize("tag, what", [(DT_RELA, "the relocation table DT_RELA at address"),
                                       (DT_SYMTAB, "the dynamic symbol table (DT_SYMTAB) at address"),
                                       (DT_JMPREL, "the relocation table DT_JMPREL at address")])
def test_a_table_outside_every_segment_is_refused(tmp_path, capsys, raw, tag, what):
    elf.set_dynamic(raw, tag, 0x7777_0000)
    refused(capsys, write(tmp_path, "table.so", raw), what, "0x77770000", "not inside the file bytes of any loadable segment")


def test_a_relocation_size_that_is_not_whole_entries_is_refused(tmp_path, capsys, raw):
    elf.set_dynamic(raw, DT_RELASZ, elf.dynamic_value(raw, DT_RELASZ) + 5)
    refused(capsys, write(tmp_path, "relasz.so", raw), "the relocation table DT_RELA", "not a whole number of 24-byte entries")


def test_a_lying_plt_relocation_size_is_refused(tmp_path, capsys, raw):
    elf.set_dynamic(raw, DT_PLTRELSZ, 24 << 30)
    refused(capsys, write(tmp_path, "pltrelsz.so", raw), "the relocation table DT_JMPREL",
            "not inside the file bytes of any loadable segment")


def test_a_needed_name_outside_the_string_table_is_refused(tmp_path, capsys, raw):
    elf.set_dynamic(raw, DT_NEEDED, elf.dynamic_value(raw, DT_STRSZ) + 100)
    refused(capsys, write(tmp_path, "needed.so", raw), "DT_NEEDED names string offset", "outside the dynamic string table")


def test_packed_relative_relocations_are_refused_by_name(tmp_path, capsys, raw):
    entry = next(e for e in elf.dynamic_entries(raw) if e["tag"] == DT_NEEDED)
    struct.pack_into("<qQ", raw, entry["entry_offset"], 36, 0)        # DT_RELR
    refused(capsys, write(tmp_path, "relr.so", raw), "DT_RELR (packed relative relocations", "emu does not apply")


# -- relocations and symbols -----------------------------------------------------------------------------
@pytest.mark.parametrize("kind, name", [(18, "R_X86_64_TPOFF64"), (37, "R_X86_64_IRELATIVE"), (5, "R_X86_64_COPY"),
                                        (2, "R_X86_64_PC32"), (999, "type 999")])
def test_a_relocation_type_a_library_may_not_carry_is_refused_by_name(tmp_path, capsys, raw, kind, name):
    elf.set_relocation(raw, 0, ".rela.dyn", type=kind)
    offset = _first_relocation(raw)["offset"]
    refused(capsys, write(tmp_path, "type.so", raw), f"relocation {name} at .rela.dyn+0x0", f"r_offset {offset:#x}",
            "R_X86_64_GLOB_DAT", "only")


def test_an_aarch64_relocation_type_is_refused_by_name(tmp_path, capsys, arm_library):
    raw = bytearray(arm_library)
    elf.set_relocation(raw, 0, ".rela.dyn", type=1032)
    refused(capsys, write(tmp_path, "arm.so", raw), "relocation R_AARCH64_IRELATIVE at .rela.dyn+0x0", "R_AARCH64_RELATIVE")


@pytest.mark.parametrize("offset", [0x7FFF_FFF0, 1 << 63, 0x10])
def test_a_relocation_outside_every_segment_is_refused(tmp_path, capsys, raw, offset):
    if offset == 0x10:       # between segments: past the first segment's end, before the second
        loads = _loads(raw)
        offset = loads[0]["vaddr"] + loads[0]["memsz"] + 0x10
    elf.set_relocation(raw, 1, ".rela.plt", offset=offset)
    refused(capsys, write(tmp_path, "place.so", raw), "relocation 1 in .rela.plt (entry offset 0x18)",
            f"patches r_offset {offset:#x}", "which no loadable segment holds")


def test_a_relocation_symbol_index_out_of_range_is_refused(tmp_path, capsys, raw):
    elf.set_relocation(raw, 2, ".rela.plt", symbol=100_000)
    refused(capsys, write(tmp_path, "symbol.so", raw), "relocation 2 in .rela.plt (entry offset 0x30", "symbol index 100000",
            "the dynamic symbol table has")


def test_a_dynamic_symbol_name_outside_the_string_table_is_refused(tmp_path, capsys, raw):
    dynsym = elf.section(raw, ".dynsym")
    struct.pack_into("<I", raw, dynsym.offset + 24 * 3, 0xFFFF_FF00)
    refused(capsys, write(tmp_path, "dynname.so", raw), "symbol 3 of the dynamic symbol table (DT_SYMTAB)",
            "offset 0x48 in the table", "string offset 0xffffff00")


def test_a_symtab_name_outside_the_string_table_is_refused(tmp_path, capsys, raw):
    symtab = elf.section(raw, ".symtab")
    struct.pack_into("<I", raw, symtab.offset + 24 * 5, 0xFFFF_FF00)
    refused(capsys, write(tmp_path, "symname.so", raw), "symbol 5 of .symtab", "string offset 0xffffff00")


@pytest.mark.parametrize("command", ["trace", "inspect", "check"])
def test_every_command_refuses_alike(tmp_path, capsys, raw, command):
    elf.set_relocation(raw, 0, ".rela.dyn", type=18)
    path = write(tmp_path, "cmd.so", raw)
    code, out, err = __import__("tests.binary.test_hostile_input", fromlist=["cli"]).cli(capsys, command, str(path))
    assert code == 2 and "R_X86_64_TPOFF64" in err + out and "Traceback" not in err + out
