"""The derived stores (emu.derived_store) key their folders by a digest of the code that computes an entry
and by the releases of the libraries it uses, so that a change to that code (here: one line added to a file
it lists) or an upgrade of such a library makes the next run compute again."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from emu import args_spec_store, header_store
from emu.image_store import code_digest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("store, edited", [(header_store, "c_source.py"), (args_spec_store, "pickle_walk.py")],
                         ids=["header: the parser", "args_spec: the pickle walker"])
def test_the_code_digest_covers_the_code_that_computes_an_entry(tmp_path, store, edited):
    shutil.copytree(ROOT / "emu", tmp_path / "emu", ignore=shutil.ignore_patterns("__pycache__"))
    before = code_digest(str(tmp_path / "emu"), store.CODE)
    assert before == code_digest(code=store.CODE)
    source = tmp_path / "emu" / edited
    source.write_text(source.read_text() + "\n")
    assert code_digest(str(tmp_path / "emu"), store.CODE) != before


@pytest.mark.parametrize("store, uses_pycparser", [(header_store, True), (args_spec_store, False)],
                         ids=["header: parsed by pycparser", "args_spec: no library"])
def test_a_pycparser_upgrade_recomputes_what_pycparser_parsed(tmp_path, monkeypatch, store, uses_pycparser):
    from emu import library_releases
    monkeypatch.setenv("EMU_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(store.STORE, "_folders", {})
    before = store.STORE.entry("the same input")
    monkeypatch.setattr(store.STORE, "_folders", {})
    monkeypatch.setitem(library_releases._RELEASES, "pycparser", "pycparser 0.0.1+another")
    assert (store.STORE.entry("the same input") != before) is uses_pycparser
