"""CI: the README's test command is .ci/run's, skips fail the run, a failed toolchain install fails the install script."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT


def _ci_test_command() -> str:
    match = re.search(r"^test_command=\((.*)\)$", (ROOT / ".ci" / "run").read_text(), re.M)
    assert match, ".ci/run has no test_command=(...) line"
    return match.group(1)


def test_readme_test_command_is_the_one_ci_runs():
    command = _ci_test_command()
    assert command.startswith("python -m pytest ") and "-rs" in command.split() and "--fail-on-skip" in command.split()
    assert re.search(r"--cov-fail-under=\d+", command), "the coverage floor is a number"
    assert f"&& {command}\n" in (ROOT / "README.md").read_text(), "README.md's test command differs from .ci/run's"


def _pytest(tmp_path, body: str, *options: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_sample.py").write_text(body)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:xdist", "-p", "no:cacheprovider",
                           "-q", "--rootdir", str(tmp_path), "-c", os.devnull, *options, str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_fail_on_skip_fails_a_run_with_a_skip_and_names_it(tmp_path):
    """One skip fails the run and is named; an expected failure is not a skip."""
    body = ("import pytest\ndef test_ok(): pass\ndef test_skipped(): pytest.skip('no toolchain here')\n"
            "@pytest.mark.xfail(strict=True)\ndef test_bug(): assert False\n")
    assert _pytest(tmp_path, body).returncode == 0
    result = _pytest(tmp_path, body, "--fail-on-skip", "-rs")
    assert result.returncode == 1, result.stdout
    assert "no toolchain here" in result.stdout and "--fail-on-skip: 1 test(s) skipped" in result.stdout


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the script requires an x86-64 machine")
def test_install_toolchains_fails_when_apt_cannot_install(tmp_path):
    """qemu-aarch64 hidden and apt-get failing: the script exits 1 naming what it could not install."""
    fake = tmp_path / "bin"
    fake.mkdir()
    for tool in ("bash", "uname", "id", "cc", "aarch64-linux-gnu-gcc", "mktemp", "rm", "cat"):
        if shutil.which(tool):
            (fake / tool).symlink_to(shutil.which(tool))
    (fake / "apt-get").write_text("#!/bin/sh\necho 'apt-get: simulated failure' >&2\nexit 100\n")
    (fake / "apt-get").chmod(0o755)
    result = subprocess.run([str(fake / "bash"), str(ROOT / ".ci" / "install-toolchains.sh")], env={"PATH": str(fake)},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "install-toolchains: FAILED: " in result.stderr and "qemu-user" in result.stderr, result.stderr


def test_the_suite_has_its_own_image_store_never_the_users():
    """tests/conftest.py gave this process a private, temporary EMU_CACHE_DIR before emu stored anything."""
    import tempfile
    from pathlib import Path

    from conftest import fixture

    from emu.cache import image_store
    from emu.cache.loaded import load_image
    store = Path(os.environ["EMU_CACHE_DIR"])
    assert store.is_relative_to(Path(tempfile.gettempdir())) and store.name.startswith(
        f"emu-test-store-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-")
    assert not store.is_relative_to(Path.home() / ".cache")
    load_image(fixture("x86_64", "plain"))
    assert Path(image_store.store_dir()) == store and any((store / "images").rglob("*.json"))


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:          # Python 3.10: pip's own copy of the same parser
        from pip._vendor import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


DISTRIBUTION = _pyproject()["project"]["name"]


def test_the_distribution_has_a_name_of_its_own_and_every_install_line_uses_it():
    """`emu` on the package registry is another project (0.3.0): `pip install 'emu[dsl]'` installs it, not this one.
    The import package, `python -m emu` and the console script stay `emu`."""
    project = _pyproject()["project"]
    assert DISTRIBUTION == "cute-emu" and project["scripts"] == {"emu": "emu.commands.cli:main"}
    assert _pyproject()["tool"]["setuptools"]["packages"]["find"]["include"] == ["emu*", "stub_models*"]
    files = [ROOT / "README.md", ROOT / ".ci" / "run", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "emu").rglob("*.py"))]
    named = [(path.relative_to(ROOT), match.group(1)) for path in files
             for match in re.finditer(r"""([\w.-]*)\[(?:dsl|test)(?:,\s*(?:dsl|test))*\]""", path.read_text())]
    assert named and all(name in (".", DISTRIBUTION) for _, name in named), [n for n in named if n[1] not in (".", DISTRIBUTION)]
    assert any(name == DISTRIBUTION for path, name in named if path.parts[0] == "docs"), "docs/ci.md installs the distribution"
    ci = (ROOT / ".ci" / "run").read_text()       # CI installs everything itself, into a new environment
    assert "python3 -m venv .venv" in ci and "python -m pip install -q -e '.[test,dsl]'" in ci


def test_the_dsl_extra_accepts_every_release_the_fixtures_test_and_no_other():
    """A project on any release emu is tested on (tests/fixtures/cutlass-dsl-*) can install emu's dsl extra beside
    its own pin; the newest allowed is the newest emu checked, so a fresh install gets a release the suite knows."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.version import Version

    from emu.dsl.generations import NEWEST_CHECKED
    dsl = [Requirement(line) for line in _pyproject()["project"]["optional-dependencies"]["dsl"]]
    [cutlass] = [r for r in dsl if r.name == "nvidia-cutlass-dsl"]
    tested = sorted(Version(p.name.removeprefix("cutlass-dsl-")) for p in (ROOT / "tests" / "fixtures").glob("cutlass-dsl-*"))
    assert len(tested) >= 8 and str(tested[-1]) == NEWEST_CHECKED
    assert all(cutlass.specifier.contains(v) for v in tested)
    outside = [Version(f"{tested[0].major}.{tested[0].minor}.{tested[0].micro - 1}"),
               Version(f"{tested[-1].major}.{tested[-1].minor}.{tested[-1].micro + 1}"),
               Version(f"{tested[-1].major}.{tested[-1].minor + 1}.0")]
    assert not any(cutlass.specifier.contains(v) for v in outside), cutlass
    assert cutlass.specifier.contains(metadata.version("nvidia-cutlass-dsl")), "the installed release is one the extra allows"
