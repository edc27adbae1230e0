"""The derived stores (emu.cache.derived_store) key their folders by a digest of the code that computes an entry
and by the releases of the libraries it uses, so that a change to that code (here: one line added to a file
it lists) or an upgrade of such a library makes the next run compute again."""
from __future__ import annotations

import pytest

from emu.cache import args_spec_store
from emu.cache import header_store


@pytest.mark.parametrize("store, uses_pycparser", [(header_store, True), (args_spec_store, False)],
                         ids=["header: parsed by pycparser", "args_spec: no library"])
def test_a_pycparser_upgrade_recomputes_what_pycparser_parsed(tmp_path, monkeypatch, store, uses_pycparser):
    from emu.cache import library_releases
    monkeypatch.setenv("EMU_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(store.STORE, "_folders", {})
    before = store.STORE.entry("the same input")
    monkeypatch.setattr(store.STORE, "_folders", {})
    monkeypatch.setitem(library_releases._RELEASES, "pycparser", "pycparser 0.0.1+another")
    assert (store.STORE.entry("the same input") != before) is uses_pycparser
