"""A short fuzzing run in the suite: a few hundred mutated fixtures and scenarios, in-process and forked.

The long run is `python -m tests.fuzz.harness --inputs 100000` (see tests/fuzz/README.md).
"""
from __future__ import annotations

import random
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import harness


@settings(max_examples=250, deadline=5000, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.randoms(use_true_random=False))
def test_pipeline_raises_only_emu_errors(rng):
    """Only EmuError may escape (run_input returns an outcome for those); every input finishes in < 5 s."""
    started = time.perf_counter()
    outcome = harness.run_input(harness.make_input(rng))
    assert isinstance(outcome, str)
    assert time.perf_counter() - started < harness.HANG_S


def test_each_mutator_changes_the_seed():
    rng = random.Random(7)
    for mutator, _ in harness.OBJECT_MUTATORS:
        seed = harness.object_seeds()[0]
        raw = bytearray(seed.raw)
        mutator(rng, raw, seed)
        assert bytes(raw) != seed.raw, mutator.__name__


def test_forked_driver(tmp_path):
    counts = harness.fuzz(120, seed=11, workers=2, batch=40, out_dir=str(tmp_path), progress=False)
    assert counts["inputs"] == 120
    assert (counts["exceptions"], counts["hangs"], counts["crashes"]) == (0, 0, 0), counts["reproducers"]
    assert 0 < counts["peak_rss_mib"] < 1024


def test_forked_driver_catches_crash_hang_and_exception(tmp_path, monkeypatch):
    monkeypatch.setenv("EMU_FUZZ_SELFTEST", "crash=3,hang=7,raise=12")
    counts = harness.fuzz(16, seed=0, workers=2, batch=8, hang_s=1.0, out_dir=str(tmp_path), progress=False)
    assert counts["inputs"] == 16
    assert (counts["exceptions"], counts["hangs"], counts["crashes"]) == (1, 1, 1)
    names = sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".txt")
    assert names == ["crash-0-3.txt", "exception-0-12.txt", "hang-0-7.txt"]
    assert "KeyError: 'selftest'" in (tmp_path / "exception-0-12.txt").read_text()
