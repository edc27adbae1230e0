"""Every committed facts file is valid (team contract 3), names objects that are committed with the
recorded sha256, and round-trips through the models line for line."""
from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from emu.probe.facts import CONTRACT_KINDS, FactsError, dump_fact, fact_files, parse_fact, read_facts
from emu.probe.store import store

ROOT = Path(__file__).resolve().parents[2]
FACTS = ROOT / "tests" / "data" / "facts" / "h200"
FILES = fact_files(FACTS)


def test_there_are_facts():
    assert len(FILES) >= 40


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_file_is_valid_and_round_trips(path):
    lines = [line for line in gzip.decompress(path.read_bytes()).decode().splitlines() if line.strip()]
    assert lines, f"{path.name} is empty"
    for number, line in enumerate(lines, 1):
        fact = parse_fact(line, f"{path.name}:{number}")
        assert dump_fact(fact) == line, f"{path.name}:{number} does not round-trip"
        raw = json.loads(line)
        assert list(raw)[:3] == ["kind", "object", "sha256"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_file_names_one_committed_object(path):
    facts = read_facts(path)
    objects = {(f.object, f.sha256) for f in facts if f.kind != "device"}
    assert len(objects) == 1, objects
    (label, sha), = objects
    obj = ROOT / label
    if not obj.parent.exists():
        pytest.skip(f"{label}: its folder is not in this checkout (real-world and old-release fixtures land with their branches)")
    assert obj.exists(), f"{path.name} measures {label}, which is not committed"
    assert hashlib.sha256(obj.read_bytes()).hexdigest() == sha
    devices = [f for f in facts if f.kind == "device"]
    assert len(devices) == 1 and devices[0].object is None and devices[0].name == "NVIDIA H200"
    assert any(f.kind == "load" for f in facts)


def test_contract_kinds_are_all_measured():
    kinds = {f.kind for path in FILES for f in read_facts(path)}
    assert set(CONTRACT_KINDS) <= kinds


def test_bad_lines_are_named(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"kind":"load","object":null,"sha256":null,"result":0}\n{"kind":"load","object":null}\n')
    with pytest.raises(FactsError, match=r"bad.jsonl:2: not a probe fact"):
        read_facts(path)
    with pytest.raises(FactsError, match="not a probe fact"):
        parse_fact('{"kind":"occupancy","object":null,"sha256":null,"kernel":"k","block_size":32,"dynamic_smem":0,'
                   '"carveout":null,"result":0,"num_blocks":1,"extra":1}')
    with pytest.raises(FactsError):
        parse_fact("not json")


def test_store_drops_printed_lines_and_is_reproducible(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    load = '{"kind":"load","object":"a.o","sha256":"00","result":209}'
    (raw / "a.jsonl").write_text(f"{load}\nAll threads arrived at barrier\n\n")
    assert store(raw, tmp_path / "one") == [("a", 1, 2)]
    store(raw, tmp_path / "two")
    assert (tmp_path / "one" / "a.jsonl.gz").read_bytes() == (tmp_path / "two" / "a.jsonl.gz").read_bytes()
    assert [f.result for f in read_facts(tmp_path / "one" / "a.jsonl.gz")] == [209]
    (raw / "a.jsonl").write_text('{"kind":"load","object":"a.o"}\n')
    with pytest.raises(FactsError, match="a.jsonl:1"):
        store(raw, tmp_path / "three")


def test_launch_values_keep_their_shape():
    line = ('{"kind":"launch","object":"a.o","sha256":"00","kernel":"k","via":"cudaLaunchKernelEx","config":{"grid":[2,1,1],'
            '"block":[128,1,1],"dynamic_smem":0,"attrs":[{"id":4,"value":[2,1,1]},{"id":2,"value":1}]},"pre":{"14":0},"result":912}')
    fact = parse_fact(line)
    assert fact.config.attrs[0].value == (2, 1, 1) and fact.config.attrs[1].value == 1
    assert fact.pre == {"14": 0} and dump_fact(fact) == line
