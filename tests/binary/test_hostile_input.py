"""Hostile and broken inputs: each is refused with exit 2 and one paragraph naming the file and the problem.

Objects are made on the fly by mutating copies of a real fixture (tests/fuzz/elf.py), so no
hostile binaries are committed.  Each case goes through the CLI in-process
(`emu.commands.cli.main`, stderr captured); a few also through a real subprocess.
"""
from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from emu.commands.cli import main
from emu.errors import EXIT_BAD_INPUT
from tests.fuzz import elf

ROOT = Path(__file__).resolve().parents[2]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def refused(capsys, path: Path, *needles: str, command: str = "trace") -> str:
    """Run the CLI on `path`; it must exit 2 with one error paragraph naming the file and every needle."""
    code, _out, err = cli(capsys, command, str(path))
    assert code == EXIT_BAD_INPUT, err
    assert err.startswith("emu: error: "), err
    assert "Traceback" not in err and "Warning" not in err
    assert err.count("\n") == 1, err                 # one paragraph
    assert str(path) in err
    for needle in needles:
        assert needle in err, f"{needle!r} not in {err!r}"
    return err


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(bytes(data))
    return path


@pytest.fixture
def seed() -> bytearray:
    return elf.fixture_bytes(elf.SEED_X86)


# -- not an object at all ------------------------------------------------------------------------
def test_not_elf(tmp_path, capsys):
    refused(capsys, write(tmp_path, "text.o", b"this is a C header, not an object\n" * 4), "not an ELF file")


def test_empty_file(tmp_path, capsys):
    refused(capsys, write(tmp_path, "empty.o", b""), "empty")


def test_directory(tmp_path, capsys):
    refused(capsys, tmp_path, "is a folder")


def test_nonexistent_path(tmp_path, capsys):
    refused(capsys, tmp_path / "missing.o", "No such file")


@pytest.mark.parametrize("cut", [3, 20, 63, 64, 0x40 + 0x100, 0x1000, 0x2a80, 0x2a80 + 64 * 7, -1])
def test_truncated(tmp_path, capsys, seed, cut):
    data = seed[:cut]
    needle = {3: "not an ELF", 20: "truncated ELF header", 63: "truncated ELF header"}.get(cut, "section header table")
    refused(capsys, write(tmp_path, f"cut{cut}.o", data), needle)


@pytest.mark.parametrize("cut", [0x40 + 64 * 13 + 0x100, 0x1000, 0x2000, -16])
def test_truncated_inside_the_sections(tmp_path, capsys, seed, cut):
    """With the section header table moved to just after the ELF header, a cut lands inside section data."""
    shoff, = struct.unpack_from("<Q", seed, 40)
    table = bytes(seed[shoff:shoff + 64 * 13])
    moved = bytearray(seed[:0x40]) + table + seed[0x40:shoff]
    struct.pack_into("<Q", moved, 40, 0x40)
    for index in range(13):       # every section's data moved up by the table's size
        at = 0x40 + 64 * index + 24
        offset, = struct.unpack_from("<Q", moved, at)
        struct.pack_into("<Q", moved, at, offset + len(table) if offset >= 0x40 else offset)
    # .strtab (names and section names) is the last section, so every cut reaches it first
    refused(capsys, write(tmp_path, "cut.o", moved[:cut]), "(offset 0x2ab8, size 0x302)", "runs past the end of the file")


# -- the wrong kind of ELF --------------------------------------------------------------------------
def test_big_endian(tmp_path, capsys, seed):
    seed[5] = 2
    refused(capsys, write(tmp_path, "be.o", seed), "big-endian")


def test_32_bit(tmp_path, capsys, seed):
    seed[4] = 1
    refused(capsys, write(tmp_path, "elf32.o", seed), "32-bit")


def test_other_machine(tmp_path, capsys, seed):
    struct.pack_into("<H", seed, 18, 243)      # EM_RISCV
    refused(capsys, write(tmp_path, "riscv.o", seed), "machine 243", "not supported")


@pytest.mark.parametrize("e_type,what", [(2, "an executable (ET_EXEC), neither a relocatable object"),
                                         (3, "a shared library without program headers"),
                                         (4, "a core dump (ET_CORE), neither a relocatable object")])
def test_not_relocatable_patched(tmp_path, capsys, seed, e_type, what):
    struct.pack_into("<H", seed, 16, e_type)
    refused(capsys, write(tmp_path, f"type{e_type}.o", seed), what)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("flags,what", [(["-no-pie"], "an executable (ET_EXEC)"), (["-pie", "-fPIE"], "a PIE executable"),
                                        (["-shared", "-fPIC"], "no CuTe DSL export found")])   # a library: loaded, no export
def test_not_relocatable_real(tmp_path, capsys, flags, what):
    source = tmp_path / "x.c"
    source.write_text("int main(void) { return 0; }\n")
    out = tmp_path / "x.out"
    subprocess.run(["cc", *flags, "-o", str(out), str(source)], check=True, capture_output=True)
    if struct.unpack_from("<H", out.read_bytes(), 18)[0] not in (62, 183):
        pytest.skip("the C compiler targets neither x86-64 nor AArch64")
    refused(capsys, out, what)


# -- sections -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("field,value", [("size", 0x10000000), ("offset", 0xFFFFFFFF0), ("offset", (1 << 64) - 8)])
def test_section_past_end_of_file(tmp_path, capsys, seed, field, value):
    elf.set_section_field(seed, ".ltext", field, value)
    refused(capsys, write(tmp_path, "past.o", seed), "section .ltext", f"{value:#x}", "runs past the end of the file")


def test_nobits_asks_for_a_terabyte(tmp_path, capsys, seed):
    elf.set_section_field(seed, ".lbss", "size", 1 << 40)
    refused(capsys, write(tmp_path, "tib.o", seed), "section .lbss", "0x10000000000", "MiB")


def test_bad_alignment(tmp_path, capsys, seed):
    elf.set_section_field(seed, ".ltext", "addralign", 3)
    refused(capsys, write(tmp_path, "align.o", seed), "section .ltext", "alignment 3")


def test_symtab_links_to_missing_string_table(tmp_path, capsys, seed):
    elf.set_section_field(seed, ".symtab", "link", 50)
    refused(capsys, write(tmp_path, "link.o", seed), ".symtab", "string table index 50")


def test_relocations_for_a_missing_section(tmp_path, capsys, seed):
    elf.set_section_field(seed, ".rela.ltext", "info", 50)
    refused(capsys, write(tmp_path, "info.o", seed), ".rela.ltext", "section index 50")


# -- symbols and relocations ----------------------------------------------------------------------------
def test_symbol_with_bad_section_index(tmp_path, capsys, seed):
    elf.set_symbol_field(seed, "carveout_25_cuda_load", "shndx", 99)
    refused(capsys, write(tmp_path, "shndx.o", seed), "carveout_25_cuda_load", "section index 99")


def test_relocation_names_bad_symbol_index(tmp_path, capsys, seed):
    elf.set_relocation(seed, 2, symbol=999)
    refused(capsys, write(tmp_path, "relsym.o", seed), "relocation 2", ".rela.ltext", "offset 0x34", "symbol index 999")


def test_relocation_offset_outside_section(tmp_path, capsys, seed):
    elf.set_relocation(seed, 2, offset=0x100000)
    refused(capsys, write(tmp_path, "reloff.o", seed), "R_X86_64_GOT64", ".ltext+0x100000", "_cudaLibraryLoadData", "past the end of the section")


def test_unknown_relocation_type(tmp_path, capsys, seed):
    elf.set_relocation(seed, 2, type=200)
    refused(capsys, write(tmp_path, "reltype.o", seed), "relocation type 200", ".ltext+0x34", "_cudaLibraryLoadData")


def test_relocation_value_out_of_range(tmp_path, capsys, seed):
    elf.set_relocation(seed, 2, type=10, addend=1 << 33)     # R_X86_64_32 of an address above 4 GiB
    refused(capsys, write(tmp_path, "range.o", seed), "R_X86_64_32", ".ltext+0x34", "_cudaLibraryLoadData", "out of range")


def test_aarch64_branch_out_of_range(tmp_path, capsys):
    raw = elf.fixture_bytes(elf.SEED_ARM)
    number = next(r["number"] for r in elf.relocations(raw, ".rela.text") if r["type"] == 283)     # R_AARCH64_CALL26
    elf.set_relocation(raw, number, ".rela.text", addend=1 << 30)
    refused(capsys, write(tmp_path, "call26.o", raw), "CALL26", "out of range")


def test_no_export_in_object(tmp_path, capsys, seed):
    elf.rename_symbol(seed, "carveout_25_cuda_init", "carveout_25_cuda_inix")
    refused(capsys, write(tmp_path, "noexport.o", seed), "no CuTe DSL export")


def test_subprocess_prints_no_traceback(tmp_path, seed):
    """The real `python -m emu trace`, for a few of the cases above."""
    elf.set_relocation(seed, 2, type=200)
    cases = [write(tmp_path, "reltype.o", seed), write(tmp_path, "empty.o", b""), tmp_path]
    for path in cases:
        done = subprocess.run([sys.executable, "-m", "emu", "trace", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == EXIT_BAD_INPUT, done.stderr
        assert done.stderr.startswith("emu: error: ") and str(path) in done.stderr
        assert "Traceback" not in done.stderr and done.stdout == ""


# -- scenarios ----------------------------------------------------------------------------------------------
SEED_REL = "../../fixtures/cutlass-dsl-4.8.0/x86_64/carveout_25.o"


def scenario(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    folder = tmp_path / "inputs" / "x"          # two levels down, so SEED-relative paths need an absolute form
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text.replace(SEED_REL, str(elf.SEED_X86)))
    return path


def test_scenario_not_yaml(tmp_path, capsys):
    path = scenario(tmp_path, "objects: [a.o\nentries: {\n")
    refused(capsys, path, "not valid YAML", "line 2", command="run")


def test_scenario_binary(tmp_path, capsys):
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00\x01objects")
    refused(capsys, path, "cannot read the scenario", command="run")


@pytest.mark.parametrize("text,kind", [("- a\n- b\n", "list"), ("just a string\n", "str"), ("", "NoneType"), ("42\n", "int")])
def test_scenario_not_a_mapping(tmp_path, capsys, text, kind):
    refused(capsys, scenario(tmp_path, text), "YAML mapping", kind, command="run")


def test_scenario_unknown_key(tmp_path, capsys):
    text = f"objects: [{SEED_REL}]\nruntime:\n  device_count: 1\n  device_cuont: 2\n"
    refused(capsys, scenario(tmp_path, text), "line 4", "runtime.device_cuont", command="run")


def test_scenario_unknown_top_level_key(tmp_path, capsys):
    text = f"description: x\nobjects: [{SEED_REL}]\nexpects: {{}}\n"
    refused(capsys, scenario(tmp_path, text), "line 3", "expects", command="run")


def test_scenario_missing_object(tmp_path, capsys):
    text = "description: x\nobjects:\n  - nothere.o\n"
    refused(capsys, scenario(tmp_path, text), "line 3", "objects.0", "nothere.o", "not found", command="run")


def test_scenario_object_is_a_directory(tmp_path, capsys):
    text = "objects:\n  - path: .\n"
    refused(capsys, scenario(tmp_path, text), "line 2", "objects.0", command="run")


def test_scenario_missing_file(tmp_path, capsys):
    refused(capsys, tmp_path / "none.yaml", "No such file", command="run")


def test_scenario_names_a_hostile_object(tmp_path, capsys, seed):
    elf.set_relocation(seed, 2, type=200)
    bad = write(tmp_path, "bad.o", seed)
    code, _out, err = cli(capsys, "run", str(scenario(tmp_path, f"objects: [{bad}]\n")))
    assert code == EXIT_BAD_INPUT and str(bad) in err and "relocation type 200" in err and "Traceback" not in err


@pytest.mark.parametrize("text,needles", [
    ("objects: [{o}]\nentries: [cuda_load, {{cuda_load_to_device: 1}}]\n", ["line 2", "entries.1"]),
    ("objects: [{o}]\nruntime:\n  device_attributes: [1, 2]\n", ["runtime"]),
    ("objects: [{o}]\nexpect:\n  returns: {{cuda_load: NOT_AN_ERROR}}\n", ["line 3", "expect.returns.cuda_load", "CudaError"]),
    ("objects: [{o}]\nexpect:\n  state: [{{attribute: 999, value: 1}}]\n", ["line 3", "expect.state.0.attribute"]),
    ("objects: [{o}]\nexpect:\n  calls_in_order: [{{symbol: _cudaGetDevice, ret: NOPE}}]\n", ["expect.calls_in_order.0.ret"]),
    ("a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
     "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nobjects: [{o}]\ndescription: *e\n",
     ["anchors and aliases"]),
    ("a: &a [*a]\nobjects: *a\n", ["contains itself"]),
    ("objects: [{o}]\nruntime: {{library_handle: 18446744073709551616}}\n", ["line 2", "runtime.library_handle", "64-bit"]),
    ("objects: [{o}]\nentries:\n  - mlir_cuda_load_to_device: {{device: 9223372036854775808}}\n", ["line 3", "entries.0.device"]),
    ("objects: " + "[" * 2000 + "]" * 2000 + "\n", ["nest"]),      # libyaml: "maximum nesting depth"; PyYAML: "nests too deeply"
])
def test_scenario_values_validators_trip_over(tmp_path, capsys, text, needles):
    """Shapes that once escaped as TypeError, ValueError, RecursionError or a hang (exit 4)."""
    refused(capsys, scenario(tmp_path, text.format(o=elf.SEED_X86)), *needles, command="run")
