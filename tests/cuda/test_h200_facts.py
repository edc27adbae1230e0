"""The model against the probe's H200 facts (tests/data/facts/h200/*.jsonl), field by field:
attributes after module_load, occupancy answers, setter results, launch verdicts and load failures
for every export the facts name (tests/cuda/h200_facts.py prints the per-file table)."""
from __future__ import annotations

from pathlib import Path

import pytest
from h200_facts import compare

FACTS = sorted((Path(__file__).parent.parent / "data" / "facts" / "h200").glob("*.jsonl"))


@pytest.mark.skipif(not FACTS, reason="the probe's facts (tests/data/facts/h200/) are not in this checkout yet")
@pytest.mark.parametrize("path", FACTS, ids=lambda p: p.name)
def test_the_model_reproduces_every_measured_field(path):
    rows = compare(path)
    assert rows, f"{path.name} names no export of this checkout"
    wrong = [(f["kind"], f["object"], f.get("kernel"), f.get("attribute", f.get("config")), m, g)
             for f, m, g in rows if m != g]
    assert wrong == []
