"""The persistent image store: what it writes reads back as the same image, and a bad entry is ignored."""
from __future__ import annotations

import json
import os

import pytest
from conftest import fixture

from emu.cache import image_store
from emu.dsl.exports import discover
from emu.binary.elf.relocatable import build_image
from emu.binary.elf.reader import load_object


@pytest.fixture
def stored(tmp_path, monkeypatch):
    """An x86-64 fixture's image saved to a store in tmp_path: (object, image, exports, entry path)."""
    monkeypatch.setenv("EMU_CACHE_DIR", str(tmp_path))
    obj = load_object(fixture("x86_64", "carveout_25"))
    image = build_image(obj)
    exports = discover(obj, image)
    image_store.save(image, exports)
    return obj, image, exports, os.path.join(tmp_path, "images", image_store.folder_name(), f"{obj.sha256}.json")


def test_an_entry_reads_back_as_the_same_image(stored):
    obj, image, exports, _ = stored
    loaded, loaded_exports = image_store.load(obj.sha256, obj.path)
    assert loaded.segments == image.segments and loaded.stub_symbols == image.stub_symbols
    assert loaded.functions == image.functions and loaded.got_base == image.got_base
    assert loaded_exports == exports
    assert loaded.obj.relocation_tables == obj.relocation_tables and loaded.obj.relocations == obj.relocations


@pytest.mark.parametrize("spoil", ["not json", "wrong format", "truncated relocation table", "piece past the bytes",
                                   "bytes cut short", "no bytes"])
def test_a_bad_entry_is_ignored(stored, spoil):
    obj, _, _, entry = stored
    with open(entry) as handle:
        record = json.load(handle)
    blob = entry[:-len(".json")] + ".bin"
    if spoil == "not json":
        text = "{"
    elif spoil == "bytes cut short":
        with open(blob, "r+b") as handle:
            handle.truncate(record["bytes"] - 1)
        text = json.dumps(record)
    elif spoil == "no bytes":
        os.remove(blob)
        text = json.dumps(record)
    else:
        if spoil == "wrong format":
            record["format"] = -1
        elif spoil == "truncated relocation table":
            index, (offset, _) = record["relocation_tables"][0]
            record["relocation_tables"][0] = [index, [offset, 3]]       # 3 bytes, not whole 24-byte entries
        else:
            address, _, perms = record["segments"][0]
            record["segments"][0] = [address, [record["bytes"] - 8, 16], perms]
        text = json.dumps(record)
    with open(entry, "w") as handle:
        handle.write(text)
    assert image_store.load(obj.sha256, obj.path) is None


@pytest.mark.parametrize("library", ["lief", "capstone"])
def test_another_release_of_a_library_an_entry_holds_the_output_of_is_a_miss(stored, monkeypatch, library):
    """LIEF parsed the entry and capstone found its vector sites: after an upgrade of either, the next run parses again."""
    from emu.cache import library_releases
    obj, _, _, entry = stored
    assert image_store.load(obj.sha256, obj.path) is not None
    monkeypatch.setattr(image_store, "_IMAGES_DIRS", {})          # the folder is resolved once per process
    monkeypatch.setitem(library_releases._RELEASES, library, f"{library} 0.0.1+another")
    assert image_store.load(obj.sha256, obj.path) is None
    assert os.path.dirname(image_store._entry_path(obj.sha256)) != os.path.dirname(entry)


def test_off_stores_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("EMU_CACHE_DIR", "off")
    obj = load_object(fixture("x86_64", "carveout_25"))
    image = build_image(obj)
    image_store.save(image, discover(obj, image))
    assert image_store.load(obj.sha256, obj.path) is None and not os.listdir(tmp_path)


# A fresh process loads one object through the store and says whether it had to parse it.
_LOAD_AND_TELL = """import sys
from emu.binary import formats
from emu.cache import loaded as images
parsed = []
load_binary = formats.load_binary          # imported by load_image on a store miss only
formats.load_binary = lambda *args: parsed.append(args) or load_binary(*args)
images.load_image(sys.argv[1])
print(bool(parsed))
"""


def test_changing_a_line_of_the_relocation_code_re_relocates_a_stored_object(tmp_path):
    """The store's key includes a digest of the code that made the entry, not just the object's bytes."""
    import shutil
    import subprocess
    import sys
    from conftest import ROOT
    checkout = tmp_path / "checkout"
    for package in ("emu", "stub_models"):
        shutil.copytree(ROOT / package, checkout / package, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "EMU_CACHE_DIR": str(tmp_path / "store"), "PYTHONPATH": str(checkout)}

    def parsed() -> bool:
        out = subprocess.run([sys.executable, "-c", _LOAD_AND_TELL, fixture("x86_64", "carveout_25")], env=env,
                             cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip() == "True"

    assert parsed()                    # first run: parsed, relocated, stored
    assert not parsed()                # same code: read back from the store
    relocation = checkout / "emu" / "binary" / "relocation.py"
    relocation.write_text(relocation.read_text().replace("class _GiveUp(Exception):", "class _GiveUp(Exception):  # changed", 1))
    assert parsed()                    # one line of relocation code changed: parsed and relocated again
    assert len(os.listdir(tmp_path / "store" / "images")) == 2


_RUN_AND_TELL = """import sys
from emu.cuda import loading
read = []
parse_cubin = loading.parse_cubin
loading.parse_cubin = lambda payload: read.append(payload) or parse_cubin(payload)
from emu.cuda.loading import library_image, load_verdict
from emu.cuda.profile import load_profile
from emu.dsl.entries import EntrySpec
from emu.cache.loaded import load_image
from emu.run.session import run_object
run = run_object(sys.argv[1], entries=[EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")])
image, (export,) = load_image(sys.argv[1])
error, facts = load_verdict(library_image(image, export.binary), load_profile("h200"))
print(bool(read))
print(run.model_dump_json())
print(error, sorted((name, fact.cubin.model_dump_json(), fact.binary_version, fact.ptx_version) for name, fact in facts.items()))
"""


def test_a_second_run_of_an_object_reads_its_cubins_from_the_store(tmp_path):
    """The cubins' facts are stored with the image: the second process runs the object without reading
    its cubin and sees the same kernel facts and the same run as the first, which parsed the cubin."""
    import subprocess
    import sys
    env = {**os.environ, "EMU_CACHE_DIR": str(tmp_path / "store")}

    def run() -> tuple[bool, str, str]:
        out = subprocess.run([sys.executable, "-c", _RUN_AND_TELL, fixture("x86_64", "carveout_25")], env=env,
                             cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        read, trace, facts = out.stdout.splitlines()
        return read == "True", trace, facts

    first, second = run(), run()
    assert first[0] and not second[0]
    assert first[1:] == second[1:]
    assert "registers" in second[2]         # the cubin's facts were there to compare


def test_the_sections_and_symbols_read_back_when_first_asked_for(stored):
    obj, image, _, _ = stored
    loaded, _ = image_store.load(obj.sha256, obj.path)
    assert "sections" not in loaded.obj.__dict__ and "symbols" not in loaded.obj.__dict__      # not decoded yet
    assert loaded.obj.symbol("carveout_25_cuda_load") == obj.symbol("carveout_25_cuda_load")
    assert loaded.obj.sections == obj.sections and loaded.obj.symbols == obj.symbols
    assert loaded.obj.c_string("carveout_25_kernel_info") == obj.c_string("carveout_25_kernel_info")


def _object_document(entry: str) -> tuple[str, int, int]:
    with open(entry) as handle:
        offset, length, _ = json.load(handle)["object"]
    return entry[:-len(".json")] + ".bin", offset, length


def test_a_spoilt_object_document_makes_the_entry_ignored(stored):
    obj, _, _, entry = stored
    blob, offset, length = _object_document(entry)
    with open(blob, "r+b") as handle:
        handle.seek(offset + length // 2)
        handle.write(b"#")
    assert image_store.load(obj.sha256, obj.path) is None


def test_an_object_document_that_does_not_decode_is_a_clear_error(stored):
    """One whose CRC-32 matches (not something emu writes): reading the tables names the entry, never a traceback."""
    import zlib
    from emu.errors import ObjectFormatError
    obj, _, _, entry = stored
    blob, offset, length = _object_document(entry)
    with open(blob, "r+b") as handle:
        handle.seek(offset)
        handle.write(b" " * length)
    with open(entry) as handle:
        record = json.load(handle)
    record["object"][2] = zlib.crc32(b" " * length)
    with open(entry, "w") as handle:
        json.dump(record, handle)
    loaded, _ = image_store.load(obj.sha256, obj.path)
    with pytest.raises(ObjectFormatError, match="image store entry .* does not read back") as error:
        loaded.obj.symbols
    assert obj.path in str(error.value)
