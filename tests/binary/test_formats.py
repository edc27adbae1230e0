"""The format registry: the first format that accepts a file's bytes loads it; a file no format accepts is
refused with what it is.  And what every format's LoadedBinary answers: its symbols, `read` and `c_string`."""
from __future__ import annotations

import hashlib
import struct

import pytest
from conftest import fixture

from emu.binary import formats
from emu.binary.elf.reader import load_object
from emu.binary.image import LoadedBinary, Segment
from emu.errors import ObjectFormatError
from tests.fuzz import elf


def _load(raw: bytes, path: str = "t.o") -> LoadedBinary:
    return formats.load_binary(bytes(raw), path, hashlib.sha256(raw).hexdigest())


@pytest.mark.parametrize("host", ["x86_64", "aarch64"])
def test_a_relocatable_object_is_loaded_by_the_elf_relocatable_format(host):
    raw = elf.fixture_bytes(elf.X86 / "carveout_25.o" if host == "x86_64" else elf.SEED_ARM)
    binary = _load(raw, "seed.o")
    assert (binary.format, binary.arch, binary.path) == ("elf-relocatable", host, "seed.o")
    assert binary.sha256 == hashlib.sha256(raw).hexdigest()
    assert "carveout_25_cuda_load" in binary.functions and binary.stub_symbols[0] == ""


@pytest.mark.parametrize("e_type, message", [
    (2, "this is an executable (ET_EXEC), neither a relocatable object (ET_REL) nor a shared library; pass the .o "
        "that export_to_c wrote or a shared library linked from it"),
    (4, "this is a core dump (ET_CORE), neither a relocatable object (ET_REL) nor a shared library; pass the .o "
        "that export_to_c wrote or a shared library linked from it"),
    (3, "a shared library without program headers (e_phnum 0): nothing says what to load"),     # ET_DYN: a library's load
])
def test_an_elf_file_no_format_accepts_is_refused_with_its_type(e_type, message):
    raw = elf.fixture_bytes(elf.SEED_X86)
    struct.pack_into("<H", raw, 16, e_type)
    with pytest.raises(ObjectFormatError) as error:
        _load(raw, "x.so")
    assert str(error.value) == f"x.so: {message}"


def test_a_file_that_is_not_elf_is_refused_as_such():
    with pytest.raises(ObjectFormatError, match=r"^n\.o: not an ELF file \(no \\x7fELF magic at offset 0\)$"):
        _load(b"not an object at all, " * 4, "n.o")


class _Fake:
    """A format of its own: files that start with FAKE, one read-only segment of their bytes."""

    name = "fake"

    @staticmethod
    def accepts(raw: bytes) -> bool:
        return raw.startswith(b"FAKE")

    @staticmethod
    def load(raw: bytes, path: str, sha256: str) -> LoadedBinary:
        return LoadedBinary(path=path, arch="x86_64", sha256=sha256, format="fake", segments=[Segment(0x1000, raw, 1)],
                            functions={}, data_symbols={"magic": 0x1000}, sizes={"magic": 4}, stub_symbols=[""],
                            got_base=0, obj=None)


def test_a_registered_format_is_picked_for_its_bytes_and_only_for_them(monkeypatch):
    monkeypatch.setattr(formats, "FORMATS", [*formats.FORMATS, _Fake()])
    fake = _load(b"FAKE\0 and the rest", "f.bin")
    assert fake.format == "fake" and fake.c_string("magic") == "FAKE" and fake.read(0x1004, 5) == b"\0 and"
    assert _load(elf.fixture_bytes(elf.SEED_X86)).format == "elf-relocatable"


@pytest.mark.parametrize("host", ["x86_64", "aarch64"])
def test_the_readers_answer_from_the_segments_what_the_object_says(host):
    obj = load_object(fixture(host, "carveout_25"))
    binary = _load(open(obj.path, "rb").read(), obj.path)
    for name in ("carveout_25_kernel_info", "carveout_25_version", "carveout_25_function_name"):
        assert binary.c_string(name) == obj.c_string(name), name
    symbol = obj.symbol("carveout_25_cuda_load")
    defined = binary.defined("carveout_25_cuda_load")
    assert (defined.kind, defined.size) == ("function", symbol.size)
    assert binary.read(defined.address, 4) == binary.segments[0].data[defined.address - binary.segments[0].address:][:4]
    assert binary.defined("carveout_25_kernel_info").kind == "object" and binary.defined("no_such_symbol") is None
    with pytest.raises(ValueError, match="not inside one segment"):
        binary.read(binary.segments[0].address - 2, 4)
