"""emu.cache.args_spec_store: an export's args_spec is decoded once, stored as JSON, and validated back as the same
description; an entry that is not exactly an ArgSpec is never served, and a warm store spares the pickle walker."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from emu.dsl.args_spec import reader as args_spec
from emu.cache import args_spec_store
from emu.dsl.args_spec.reader import decode_args_spec
from emu.cache.loaded import load_image

ROOT = Path(__file__).resolve().parents[2]
OBJECTS = sorted(ROOT.glob("tests/fixtures/cutlass-dsl-*/x86_64/*.o")) + sorted(ROOT.glob("tests/fixtures/realworld/x86_64/*.o"))
CARVEOUT = ROOT / "tests/fixtures/cutlass-dsl-4.8.0/x86_64/carveout_25.o"


def _spec_text(path: Path) -> str | None:
    image, (export,) = load_image(str(path))
    return image.obj.c_string(f"{export.prefix}_args_spec")


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A private store; the in-process cache emptied before and after."""
    monkeypatch.setenv("EMU_CACHE_DIR", str(tmp_path))
    args_spec_store.stored_args_spec.cache_clear()
    yield tmp_path
    args_spec_store.stored_args_spec.cache_clear()


def _stored(text: str):
    """The description as a fresh process would get it: not from this process's cache."""
    args_spec_store.stored_args_spec.cache_clear()
    return args_spec_store.stored_args_spec(text)


def _never_decode(monkeypatch):
    def fail(*_):
        raise AssertionError("decoded, though the store holds the description")
    monkeypatch.setattr(args_spec, "decode_args_spec", fail)


def test_every_fixture_args_spec_reads_back_from_the_store_as_decoded(store, monkeypatch):
    texts = {text for text in map(_spec_text, OBJECTS) if text is not None}
    decoded = {text: decode_args_spec(text) for text in texts}
    assert all(_stored(text) == (decoded[text], None) for text in texts)        # decoded, stored
    _never_decode(monkeypatch)
    assert all(_stored(text) == (decoded[text], None) for text in texts)        # read back
    assert len(texts) >= 5


def _entry(text: str) -> Path:
    return Path(args_spec_store.STORE.entry(text))


def test_the_stored_description_is_the_one_served(store):
    text = _spec_text(CARVEOUT)
    _stored(text)
    record = json.loads(_entry(text).read_text())
    record["value"]["parameters"][0]["name"] = "from_the_store"
    _entry(text).write_text(json.dumps(record))
    assert _stored(text)[0].parameters[0].name == "from_the_store"


@pytest.mark.parametrize("spoil", ["not json", "wrong format", "an extra field", "a number for a name", "no parameters"])
def test_a_corrupt_entry_is_ignored_and_the_args_spec_decoded_again(store, spoil):
    text = _spec_text(CARVEOUT)
    expected = _stored(text)
    record = json.loads(_entry(text).read_text())
    if spoil == "wrong format":
        record["format"] = 0
    elif spoil == "an extra field":
        record["value"]["parameters"][0]["extra"] = 1
    elif spoil == "a number for a name":
        record["value"]["parameters"][0]["name"] = 7
    elif spoil == "no parameters":
        del record["value"]["parameters"]
    _entry(text).write_text("{" if spoil == "not json" else json.dumps(record))
    assert _stored(text) == expected
    assert json.loads(_entry(text).read_text())["value"] == expected[0].model_dump(mode="json")     # stored right again


def test_an_args_spec_that_does_not_decode_says_why_and_is_never_stored(store):
    spec, why = _stored("not base64!")
    assert spec is None and "base64" in why
    assert not any(name.endswith(".json") for _, _, names in os.walk(store) for name in names)


_READ_AND_TELL = ("import sys; from emu.cache.args_spec_store import stored_args_spec; "
                  "spec, _ = stored_args_spec(sys.argv[1]); "
                  "print(spec.parameters[0].name, 'emu.dsl.args_spec.pickle_walk' in sys.modules, 'pickletools' in sys.modules)")


def test_a_process_that_finds_the_description_stored_never_walks_the_pickle(tmp_path):
    env = {**os.environ, "EMU_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    text = _spec_text(CARVEOUT)

    def run() -> list[str]:
        out = subprocess.run([sys.executable, "-c", _READ_AND_TELL, text], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout.split()

    first = decode_args_spec(text).parameters[0].name
    assert run() == [first, "True", "True"]         # decoded (walking the pickle) and stored
    assert run() == [first, "False", "False"]       # read back
