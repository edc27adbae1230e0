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
    return obj, image, export, os.path.join(tmp_path, "images", f"{obj.sha256}.json")


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
