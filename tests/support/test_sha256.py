"""emu.support.sha256 gives hashlib's SHA-256 digests, and a cold `python -m emu run` never starts OpenSSL for them
(nor for pydantic's `secrets`, which __main__ defers): importing _hashlib costs such a run 2-3 ms."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

from conftest import ROOT, fixture

from emu.support import sha256 as helper


def test_the_digests_are_hashlib_s(monkeypatch):
    monkeypatch.delitem(sys.modules, "_hashlib", raising=False)     # as in a `python -m emu` process (restored after)
    monkeypatch.setattr(helper, "_given", [0])
    for data in (b"", b"abc", bytes(range(256)) * 40, os.urandom(helper.SMALL // 2), os.urandom(helper.SMALL + 1)):
        ours = helper.sha256(data)
        ours.update(b"more")
        theirs = hashlib.sha256(data)
        theirs.update(b"more")
        assert (ours.hexdigest(), ours.digest()) == (theirs.hexdigest(), theirs.digest())


def test_cpython_s_own_hashes_at_most_a_megabyte_a_process(monkeypatch):
    """Past it, OpenSSL's faster hashing repays its start-up: a check of a folder of large objects starts it once."""
    monkeypatch.delitem(sys.modules, "_hashlib", raising=False)
    monkeypatch.setattr(helper, "_given", [0])
    chunk = bytes(helper.SMALL // 4)
    kinds = [type(helper.sha256(chunk)).__module__ for _ in range(6)]
    assert kinds[:3] == [type(helper._own(b"")).__module__] * 3 and kinds[4:] == ["_hashlib"] * 2


def test_a_cold_run_does_not_start_openssl(tmp_path):
    scenario = tmp_path / "one.yaml"
    scenario.write_text(f"objects: [{json.dumps(fixture('x86_64', 'carveout_25'))}]\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EMU_CACHE_DIR": str(tmp_path / "store"), "EMU_NO_SERVER": "1"}
    for _ in range(2):                  # the second with every store filled
        out = subprocess.run([sys.executable, "-X", "importtime", "-m", "emu", "run", str(scenario)], env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
        assert "emu.scenario.runner" in imported and "pydantic.types" in imported
        assert not imported & {"_hashlib", "hashlib", "hmac"}, sorted(imported & {"_hashlib", "hashlib", "hmac"})
