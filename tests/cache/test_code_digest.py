"""A store's folder is keyed by a digest of the packages that shape its entries (emu.cache.image_store.CODE,
each derived store's `code`): a change to any file under them, or a module added to one, re-keys it, and
no file list is kept by hand."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from emu.cache import args_spec_store, header_store, image_store
from emu.cache.image_store import code_digest

EMU = Path(image_store.__file__).resolve().parents[1]
STORES = {"images": image_store.CODE, "headers": header_store.CODE, "args_specs": args_spec_store.CODE}


def covered(root: Path, code: tuple[str, ...]) -> list[Path]:
    return sorted(p for name in code for p in (root / name).rglob("*.py") if "__pycache__" not in p.parts)


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("checkout") / "emu"
    shutil.copytree(EMU, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.mark.parametrize("store", STORES)
def test_every_covered_file_rekeys_its_store(copy, store):
    code = STORES[store]
    before = code_digest(str(copy), code)
    assert before == code_digest(code=code)            # the copy is this checkout
    files = covered(copy, code)
    assert len(files) >= 3
    for path in files:
        text = path.read_bytes()
        path.write_bytes(text + b"\n")
        try:
            assert code_digest(str(copy), code) != before, f"{path.relative_to(copy)} changed and {store} kept its key"
        finally:
            path.write_bytes(text)
    assert code_digest(str(copy), code) == before


@pytest.mark.parametrize("store", STORES)
def test_a_module_added_to_a_covered_package_rekeys_its_store(copy, store):
    code = STORES[store]
    before = code_digest(str(copy), code)
    added = copy / code[0] / "added_later.py"
    added.write_text('"""A module nobody listed."""\n')
    try:
        assert code_digest(str(copy), code) != before
    finally:
        added.unlink()


def test_what_the_stores_cover():
    """The packages that shape each store's entries: the image's parse, layout, relocation and export description
    cover the binary layer, the architectures, the DSL conventions and the GPU-binary readers."""
    assert {"binary", "arch", "dsl", "gpu_binary"} <= set(image_store.CODE)
    assert "dsl/header" in header_store.CODE and "dsl/args_spec" in args_spec_store.CODE
    assert not any(name.endswith(".py") for code in STORES.values() for name in code)
