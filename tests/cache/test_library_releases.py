"""emu.cache.library_releases: the installed release of a library, read from its install record as pip
wrote it (importlib.metadata, which reads the same records its own way, is the oracle), without
importing the library."""
from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

from emu.cache import library_releases
from emu.cache.library_releases import release, releases

RUNTIME = ("lief", "capstone", "pycparser", "unicorn", "pydantic", "pydantic_core", "pyyaml")


@pytest.fixture
def fresh(monkeypatch):
    """No release or folder listing remembered from earlier tests."""
    monkeypatch.setattr(library_releases, "_RELEASES", {})
    monkeypatch.setattr(library_releases, "_RECORDS", {})


@pytest.mark.parametrize("distribution", RUNTIME)
def test_the_release_is_the_one_pip_installed(fresh, distribution):
    assert release(distribution) == f"{distribution} {importlib.metadata.version(distribution)}"


def test_several_releases_are_one_line_each_in_order(fresh):
    assert releases(("pydantic", "lief")).splitlines() == [release("pydantic"), release("lief")]


def test_reading_a_release_imports_nothing_of_the_library():
    code = ("import sys; from emu.cache.library_releases import releases; releases(('lief', 'capstone', 'pycparser'));"
            "print(sorted(m for m in ('lief', 'capstone', 'pycparser') if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


def test_a_library_that_is_not_there_says_so(fresh):
    assert release("no_such_library_emu_test") == "no_such_library_emu_test not installed"


@pytest.mark.parametrize("record, said", [(None, "at"), ("emu_probe_library-1.2.3.dist-info", "1.2.3"),
                                          ("emu_probe_library-0.9-py3.11.egg-info", "0.9"),
                                          ("Emu.Probe_Library-4.0.dist-info", "4.0")],
                         ids=["no record: its path", "dist-info", "egg-info", "name spelt otherwise"])
def test_a_module_is_named_by_the_record_beside_it_or_by_its_path(fresh, tmp_path, monkeypatch, record, said):
    (tmp_path / "emu_probe_library.py").write_text("")
    if record:
        (tmp_path / record).mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    expected = (f"emu_probe_library at {tmp_path / 'emu_probe_library.py'}" if said == "at"
                else f"emu_probe_library {said}")
    assert release("emu_probe_library") == expected
