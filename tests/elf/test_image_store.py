"""The persistent image store: what it writes reads back as the same image, and a bad entry is ignored."""
from __future__ import annotations

import json
import os

import pytest
from conftest import fixture

from emu import image_store
from emu.export import describe_export
from emu.layout import build_image
from emu.objfile import load_object


@pytest.fixture
def stored(tmp_path, monkeypatch):
    """An x86-64 fixture's image saved to a store in tmp_path: (object, image, export, entry path)."""
    monkeypatch.setenv("EMU_CACHE_DIR", str(tmp_path))
    obj = load_object(fixture("x86_64", "carveout_25"))
    image, export = build_image(obj), describe_export(obj)
    image_store.save(image, export)
    return obj, image, export, os.path.join(tmp_path, "images", image_store.code_digest()[:24], f"{obj.sha256}.json")


def test_an_entry_reads_back_as_the_same_image(stored):
    obj, image, export, _ = stored
    loaded, loaded_export = image_store.load(obj.sha256, obj.path)
    assert loaded.segments == image.segments and loaded.stub_symbols == image.stub_symbols
    assert loaded.functions == image.functions and loaded.got_base == image.got_base
    assert loaded_export == export
    assert loaded.obj.relocation_tables == obj.relocation_tables and loaded.obj.relocations == obj.relocations


@pytest.mark.parametrize("spoil", ["not json", "wrong format", "truncated relocation table"])
def test_a_bad_entry_is_ignored(stored, spoil):
    obj, _, _, entry = stored
    with open(entry) as handle:
        record = json.load(handle)
    if spoil == "not json":
        text = "{"
    else:
        if spoil == "wrong format":
            record["format"] = -1
        else:
            index, _ = record["relocation_tables"][0]
            record["relocation_tables"][0] = [index, "AAAA"]       # 3 bytes, not whole 24-byte entries
        text = json.dumps(record)
    with open(entry, "w") as handle:
        handle.write(text)
    assert image_store.load(obj.sha256, obj.path) is None


def test_off_stores_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("EMU_CACHE_DIR", "off")
    obj = load_object(fixture("x86_64", "carveout_25"))
    image_store.save(build_image(obj), describe_export(obj))
    assert image_store.load(obj.sha256, obj.path) is None and not os.listdir(tmp_path)


# A fresh process loads one object through the store and says whether it had to parse it
# (parsing is the only thing that imports LIEF).
_LOAD_AND_TELL = "import sys; from emu.images import load_image; load_image(sys.argv[1]); print('lief' in sys.modules)"


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
    relocation = checkout / "emu" / "relocation.py"
    relocation.write_text(relocation.read_text().replace("class _GiveUp(Exception):", "class _GiveUp(Exception):  # changed", 1))
    assert parsed()                    # one line of relocation code changed: parsed and relocated again
    assert len(os.listdir(tmp_path / "store" / "images")) == 2


def test_the_code_digest_covers_the_relocation_tables(tmp_path):
    import shutil
    from conftest import ROOT
    shutil.copytree(ROOT / "emu", tmp_path / "emu", ignore=shutil.ignore_patterns("__pycache__"))
    before = image_store.code_digest(str(tmp_path / "emu"))
    assert before == image_store.code_digest()
    table = tmp_path / "emu" / "arch" / "aarch64" / "relocations.py"
    table.write_text(table.read_text() + "\n")
    assert image_store.code_digest(str(tmp_path / "emu")) != before
