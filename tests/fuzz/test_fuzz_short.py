"""A short fuzzing run in the suite: a few hundred mutated fixtures and scenarios, in-process and forked.

No assertion here depends on wall-clock time or memory: the harness' time and RSS figures, and the
check that a 1 s hang limit finds exactly the planted hang, are the driver's own report
(`python -m tests.fuzz.harness --selftest`; long runs: `--inputs 100000`, see tests/fuzz/README.md).
"""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import harness

# Every label run_input can give: an EmuError rejection or a run that ended (the `fault <kind>` labels
# name the fault).  Anything else that escapes run_input is an exception hypothesis reports.
OUTCOMES = ("object rejected: ", "object rejected late: ", "scenario rejected: ", "scenario run error: ",
            "fault ", "ran", "scenario passed", "scenario failed")


@settings(max_examples=250, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.randoms(use_true_random=False))
def test_pipeline_raises_only_emu_errors(rng):
    """Only EmuError may escape emu (run_input turns those into an outcome label); nothing else."""
    outcome = harness.run_input(harness.make_input(rng))
    assert outcome.startswith(OUTCOMES), outcome
    if outcome.endswith(": "):
        raise AssertionError(f"an outcome without the error's name: {outcome!r}")


def test_each_mutator_changes_the_seed():
    rng = random.Random(7)
    library = next(seed for seed in harness.object_seeds() if seed.library)
    for mutator, _ in harness.OBJECT_MUTATORS:
        for seed in [harness.object_seeds()[0], library]:
            if mutator in harness.LIBRARY_ONLY and not seed.library:
                continue
            raw = bytearray(seed.raw)
            mutator(rng, raw, seed)
            assert bytes(raw) != seed.raw, (mutator.__name__, seed.path.name)


def test_the_seeds_are_the_toys_the_real_world_corpus_and_libraries_of_both_architectures():
    seeds = harness.object_seeds()
    assert sum(harness.REALWORLD in seed.path.parents for seed in seeds) >= 100
    libraries = [seed for seed in seeds if seed.library]
    assert sorted(seed.arch for seed in libraries) == ["aarch64", "x86_64", "x86_64"]
    assert all(seed.headers and seed.dynamic and seed.relocations for seed in libraries)


def test_forked_driver(tmp_path):
    counts = harness.fuzz(120, seed=11, workers=2, batch=40, out_dir=str(tmp_path), progress=False)
    assert counts["inputs"] == 120 and sum(counts["outcomes"].values()) + counts["hangs"] + counts["crashes"] == 120
    assert (counts["exceptions"], counts["crashes"]) == (0, 0), counts["reproducers"]


def test_forked_driver_catches_crash_hang_and_exception(tmp_path, monkeypatch):
    """The planted crash, exception and endless sleep are each caught and saved (how many inputs a 1 s
    limit also calls hangs on a loaded machine is the driver's --selftest report, not asserted here)."""
    monkeypatch.setenv("EMU_FUZZ_SELFTEST", harness.SELFTEST)
    counts = harness.fuzz(16, seed=0, workers=2, batch=8, hang_s=1.0, out_dir=str(tmp_path), progress=False)
    assert counts["inputs"] == 16
    assert (counts["exceptions"], counts["crashes"]) == (1, 1) and counts["hangs"] >= 1
    names = {p.name for p in tmp_path.iterdir() if p.suffix == ".txt"}
    assert set(harness.SELFTEST_FOUND) <= names and not any(n.startswith(("crash", "exception")) for n in
                                                            names - set(harness.SELFTEST_FOUND)), names
    assert "KeyError: 'selftest'" in (tmp_path / "exception-0-12.txt").read_text()
