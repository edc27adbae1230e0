"""Discovery in shared libraries (emu.dsl.exports): every export a library was linked from, each with its own
GPU binary; in a stripped library, found by the fatbin headers in its read-only data, never guessed."""
from __future__ import annotations

import subprocess

import pytest

from emu.cache.loaded import load_image
from emu.dsl.exports import stripped_library_binaries
from emu.errors import ObjectFormatError
from tests.binary.shared_build import REALWORLD, link


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("shared_exports")


def test_each_export_of_a_library_has_the_gpu_binary_of_the_object_it_came_from(folder):
    library, exports = load_image(str(link(folder / "three.so", "aarch64")))
    for export in exports:
        source, (source_export,) = load_image(str(REALWORLD / "aarch64" / f"{export.name}.o"))
        size = 16 + int.from_bytes(source.read(source_export.binary + 8, 8), "little")
        assert library.read(export.binary, size) == source.read(source_export.binary, size), export.name
    assert stripped_library_binaries(library) == []           # it has its kernels_binary symbols


def test_an_object_never_looks_for_fatbin_headers():
    image, _ = load_image(str(REALWORLD / "x86_64" / "cooperative.o"))
    assert stripped_library_binaries(image) == []


def test_a_stripped_library_whose_fatbins_do_not_match_its_exports_is_refused(folder):
    full = link(folder / "two.so", "x86_64", ("cooperative", "dynamic_smem"))
    stripped = folder / "two.stripped.so"
    subprocess.run(["strip", "-o", str(stripped), str(full)], check=True)
    raw = bytearray(stripped.read_bytes())
    raw[raw.index(b"\x50\xed\x55\xba\x01\x00\x10\x00")] ^= 0xFF       # the first fatbin's magic spoilt
    stripped.write_bytes(bytes(raw))
    with pytest.raises(ObjectFormatError, match=r"2 exports .* but 1 fatbins found by their headers \(the library is stripped"):
        load_image(str(stripped))


def test_a_stripped_one_export_library_without_a_fatbin_header_is_refused_not_run_without_its_binary(folder):
    stripped = folder / "one.stripped.so"
    subprocess.run(["strip", "-o", str(stripped), str(link(folder / "one.so", "x86_64", ("cooperative",)))], check=True)
    raw = bytearray(stripped.read_bytes())
    raw[raw.index(b"\x50\xed\x55\xba\x01\x00\x10\x00")] ^= 0xFF
    stripped.write_bytes(bytes(raw))
    with pytest.raises(ObjectFormatError, match=r"1 exports \(cooperative\) but 0 fatbins found by their headers"):
        load_image(str(stripped))
