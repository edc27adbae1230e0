"""emu.cache.header_store: a header's launch signature is parsed once, stored as JSON, and read back as the same
signature; an entry that is corrupt or of another header is never served, and a warm store spares pycparser."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from emu.dsl.header import parse as header
from emu.cache import header_store
from emu.dsl.header.parse import HeaderError, parse_header

ROOT = Path(__file__).resolve().parents[2]
HEADERS = sorted(ROOT.glob("tests/fixtures/cutlass-dsl-*/*/*.h")) + [Path(__file__).parents[1] / "data" / "export" / "rich.h"]
CARVEOUT = ROOT / "tests/fixtures/cutlass-dsl-4.8.0/x86_64/carveout_25.h"


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A private store; the in-process cache of signatures emptied before and after."""
    monkeypatch.setenv("EMU_CACHE_DIR", str(tmp_path))
    header_store.header_signature.cache_clear()
    yield tmp_path
    header_store.header_signature.cache_clear()


def _stored(text: str, path: str, arch: str = "x86_64"):
    """The signature as a fresh process would get it: not from this process's cache."""
    header_store.header_signature.cache_clear()
    return header_store.header_signature(text, path, arch)


def _never_parse(monkeypatch):
    def fail(*_):
        raise AssertionError("parsed, though the store holds the signature")
    monkeypatch.setattr(header, "parse_header", fail)


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_every_fixture_header_reads_back_from_the_store_as_parsed(store, monkeypatch, arch):
    texts = {path: path.read_text() for path in HEADERS}
    parsed = {path: parse_header(text, str(path), arch) for path, text in texts.items()}
    assert all(_stored(text, str(path), arch) == parsed[path] for path, text in texts.items())     # parsed, stored
    _never_parse(monkeypatch)
    assert all(_stored(text, str(path), arch) == parsed[path] for path, text in texts.items())     # read back
    assert sum(p is not None and p.params != () for p in parsed.values()) >= 10


def _marked_entry() -> str:
    """carveout_25.h's text, its signature stored for x86-64 with the wrapper renamed `from_the_store`."""
    text = CARVEOUT.read_text()
    _stored(text, str(CARVEOUT))
    entry = Path(header_store.entry_path(text, "x86_64"))
    record = json.loads(entry.read_text())
    record["value"]["wrapper"] = "from_the_store"
    entry.write_text(json.dumps(record))
    return text


def test_the_stored_signature_is_the_one_served(store):
    text = _marked_entry()
    assert _stored(text, str(CARVEOUT)).wrapper == "from_the_store"


def test_a_changed_header_or_another_architecture_is_parsed_not_served(store):
    text = _marked_entry()
    changed = text.replace("int32_t", "int64_t")
    assert _stored(changed, str(CARVEOUT)) == parse_header(changed, str(CARVEOUT))
    assert _stored(text, str(CARVEOUT), "aarch64").wrapper != "from_the_store"
    assert len({header_store.entry_path(t, a) for t in (text, changed) for a in ("x86_64", "aarch64")}) == 4


def _spoil(record: dict, how: str) -> str:
    signature = record["value"]
    tensor = next(p for p in signature["params"] if p["struct"] is not None)
    if how == "not json":
        return "{"
    if how == "wrong format":
        record["format"] = -1
    elif how == "a string for an offset":
        tensor["struct"]["fields"][0]["offset"] = "0"
    elif how == "a negative size":
        tensor["struct"]["size"] = -8
    elif how == "a boolean for an index":
        signature["slots"][0]["index"] = True
    elif how == "an unknown parameter kind":
        tensor["kind"] = "mystery"
    elif how == "an unknown slot kind":
        signature["slots"][0]["how"] = "indirect"
    elif how == "a missing field":
        del tensor["struct"]["fields"][0]["count"]
    elif how == "an extra field":
        signature["slots"][0]["extra"] = 1
    elif how == "structs nested without end":
        deep = {"name": "s", "size": 8, "align": 8, "fields": []}
        for _ in range(200):
            deep = {"name": "s", "size": 8, "align": 8,
                    "fields": [{"name": "f", "ctype": "s", "offset": 0, "size": 8, "count": None, "struct": deep}]}
        tensor["struct"] = deep
    elif how == "a list for the record":
        return json.dumps([record])
    return json.dumps(record)


@pytest.mark.parametrize("how", ["not json", "wrong format", "a string for an offset", "a negative size", "a boolean for an index",
                                 "an unknown parameter kind", "an unknown slot kind", "a missing field", "an extra field",
                                 "structs nested without end", "a list for the record"])
def test_a_corrupt_entry_is_ignored_and_the_header_parsed_again(store, how):
    text = CARVEOUT.read_text()
    expected = _stored(text, str(CARVEOUT))
    entry = Path(header_store.entry_path(text, "x86_64"))
    entry.write_text(_spoil(json.loads(entry.read_text()), how))
    assert _stored(text, str(CARVEOUT)) == expected
    assert header_store._read(str(entry)) == expected                   # and stored right again


def test_a_header_without_a_wrapper_is_stored_as_none(store, monkeypatch):
    text = "typedef struct { void *data; } t;\nint f(int x);\n"
    assert _stored(text, "plain.h") is None
    _never_parse(monkeypatch)
    assert _stored(text, "plain.h") is None


def test_a_header_that_does_not_parse_is_never_stored(store):
    for _ in range(2):
        with pytest.raises(HeaderError, match="bad.h"):
            _stored("int f( {\n", "bad.h")
    assert not any(name.endswith(".json") for _, _, names in os.walk(store) for name in names)


def test_off_stores_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("EMU_CACHE_DIR", "off")
    header_store.header_signature.cache_clear()
    assert _stored(CARVEOUT.read_text(), str(CARVEOUT)) == parse_header(CARVEOUT.read_text(), str(CARVEOUT))
    assert header_store.entry_path("", "x86_64") is None and not os.listdir(tmp_path)


_READ_AND_TELL = ("import sys; from emu.cache.header_store import header_signature; "
                  "print(header_signature(open(sys.argv[1]).read(), sys.argv[1], 'x86_64').wrapper, 'pycparser' in sys.modules)")


def test_a_process_that_finds_the_signature_stored_never_imports_pycparser(tmp_path):
    env = {**os.environ, "EMU_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}

    def run() -> str:
        out = subprocess.run([sys.executable, "-c", _READ_AND_TELL, str(CARVEOUT)], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout.split()

    wrapper = parse_header(CARVEOUT.read_text(), str(CARVEOUT)).wrapper
    assert run() == [wrapper, "True"]           # parsed (with pycparser) and stored
    assert run() == [wrapper, "False"]          # read back
