"""emu.emulator.unicorn_c calls libunicorn directly through the binding's private parts; it checks at import
that the installed binding keeps them as assumed and otherwise uses the public binding
(emu.emulator.unicorn_public).  Both paths must give the same traces."""
from __future__ import annotations

import os
import subprocess
import sys

import unicorn

from conftest import ROOT, fixture
from emu.emulator import unicorn_c

OBJECTS = [fixture("x86_64", "carveout_25"), fixture("aarch64", "mixed"),
           str(ROOT / "tests" / "fixtures" / "cutlass-dsl-4.8.0" / "native" / "mixed.o"),        # VEX code: the AVX unit
           str(ROOT / "tests" / "data" / "avx" / "host_fma" / "native" / "host_fma_math.o")]


def test_the_installed_binding_is_the_one_the_direct_calls_were_checked_against():
    """CI installs the pinned unicorn (pyproject): a release that moved the private parts fails here first."""
    assert unicorn.__version__ == "2.1.4"
    assert unicorn_c.binding_as_checked() and unicorn_c.DIRECT


def test_a_binding_that_keeps_its_engine_otherwise_is_caught():
    class Engine:                               # holds its handle under another name
        def __init__(self):
            self.handle, self._callbacks, self._hook_exception = None, {}, None

    assert unicorn_c.binding_as_checked(Engine) is False


def _trace(public: bool) -> str:
    env = {**os.environ, "EMU_NO_SERVER": "1", "EMU_CACHE_DIR": "off"}
    env.pop("EMU_UNICORN_PUBLIC", None)
    if public:
        env["EMU_UNICORN_PUBLIC"] = "1"
    done = subprocess.run([sys.executable, "-m", "emu", "trace", "--json", *OBJECTS], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout


def test_the_public_path_gives_the_same_traces():
    """Portable x86-64, AArch64, and host-CPU objects whose VEX code the AVX unit carries out."""
    check = [sys.executable, "-c", "from emu.emulator import unicorn_c; print(unicorn_c.DIRECT)"]
    forced = subprocess.run(check, cwd=ROOT, env={**os.environ, "EMU_UNICORN_PUBLIC": "1"}, capture_output=True, text=True)
    assert forced.stdout.strip() == "False"
    assert _trace(public=True) == _trace(public=False)
