"""Scenarios that build their object: exported with the installed DSL, cached by content.

The oracle is the committed fixture of the installed release: the seed kernel exported through a
scenario's `build:` block must be byte-identical to `tests/fixtures/cutlass-dsl-<version>/x86_64/carveout_25.o`
(`seed/repro.py`'s output; committed for 4.6.0, 4.7.1, 4.8.0 and 4.8.1, the newest release the `dsl` extra
allows and so the one a fresh install gets).
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap

import pytest

import emu.build.cache as cache
from conftest import ROOT, run_cli
from emu.build.spec import BuildSpec
from emu.errors import BuildError, DslNotInstalled
from emu.scenario.load import load_scenarios
from emu.scenario.runner import run_scenario

SEED_FIXTURE = ROOT / f"tests/fixtures/cutlass-dsl-{cache.dsl_version()}/x86_64/carveout_25.o"
needs_dsl = pytest.mark.skipif(not SEED_FIXTURE.is_file(), reason=f"no committed seed fixture for nvidia-cutlass-dsl "
                               f"{cache.dsl_version() or '(not installed)'}: the suite's release is pyproject.toml's newest")
KERNEL = ROOT / "scenarios" / "kernels" / "rotate.py"
SEED_SPEC = {"module": "rotate.py", "function": "launch", "prefix": "carveout_25",
             "args": [{"tensor": {"dtype": "Float32", "shape": [128], "align": 16}}, "stream", 25],
             "options": {"gpu_arch": "sm_90a", "host": "x86_64"}}


@pytest.fixture
def build_cache(tmp_path, monkeypatch):
    folder = tmp_path / "builds"
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(folder))
    return folder


def scenario(tmp_path, build: dict, expect: str = "") -> str:
    (tmp_path / "rotate.py").write_text(KERNEL.read_text())
    path = tmp_path / "s.yaml"
    path.write_text(f"objects:\n  - build: {json.dumps(build)}\n" + textwrap.dedent(expect))
    return str(path)


@needs_dsl
def test_a_built_object_equals_the_fixture_the_seed_made(tmp_path, build_cache):
    path = load_scenarios(scenario(tmp_path, SEED_SPEC))[0].object_path(0)
    assert hashlib.sha256(open(path, "rb").read()).hexdigest() == hashlib.sha256(SEED_FIXTURE.read_bytes()).hexdigest()
    # a second scenario with the same spec and source reuses the export: one entry in the cache
    again = load_scenarios(scenario(tmp_path, SEED_SPEC))[0].object_path(0)
    assert again == path and len([p for p in build_cache.iterdir()]) == 1


@needs_dsl
def test_the_key_covers_the_source_and_the_options(tmp_path):
    spec = BuildSpec.model_validate(SEED_SPEC)
    source = KERNEL.read_bytes()
    key = cache.cache_key(spec, source, "4.8.0")
    assert key != cache.cache_key(spec, source + b"\n# edited\n", "4.8.0")
    assert key != cache.cache_key(spec, source, "4.8.1")
    other = BuildSpec.model_validate({**SEED_SPEC, "options": {"gpu_arch": "sm_100a", "host": "x86_64"}})
    assert key != cache.cache_key(other, source, "4.8.0")


@needs_dsl
def test_parallel_builders_share_one_export(tmp_path, build_cache):
    """Two processes racing on one key: both get the same complete object, no staging folder is left."""
    (tmp_path / "rotate.py").write_text(KERNEL.read_text())
    spec = json.dumps({**SEED_SPEC, "prefix": "race"})
    code = ("import sys, json; from emu.build.cache import build_object; from emu.build.spec import BuildSpec; "
            f"print(build_object(BuildSpec.model_validate(json.loads({spec!r})), {str(tmp_path)!r}))")
    workers = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    paths = {worker.communicate()[0].strip() for worker in workers}
    assert all(worker.returncode == 0 for worker in workers)
    assert len(paths) == 1 and open(paths.pop(), "rb").read(4) == b"\x7fELF"
    assert [p.name for p in build_cache.iterdir() if p.name.startswith(".build-")] == []


@needs_dsl
def test_a_kernel_that_does_not_export_is_a_build_error_naming_it(tmp_path, build_cache):
    path = scenario(tmp_path, {**SEED_SPEC, "function": "no_such_function"})
    with pytest.raises(BuildError) as error:
        run_scenario(load_scenarios(path)[0])
    message = str(error.value)
    assert message.startswith(f"{path}: line 2") and "rotate.py::no_such_function" in message and "defines no 'no_such_function'" in message


def test_a_missing_module_is_a_build_error(tmp_path, build_cache):
    path = tmp_path / "s.yaml"
    path.write_text(f"objects:\n  - build: {json.dumps({**SEED_SPEC, 'module': 'absent.py'})}\n")
    if cache.dsl_version() is None:
        pytest.skip("without the DSL the build stops earlier (see the next test)")
    result = run_cli("run", str(path))
    assert result.code == 2 and "cannot read the kernel module absent.py" in result.err


def test_without_the_dsl_run_refuses_and_pytest_skips(tmp_path, build_cache, monkeypatch, pytester):
    monkeypatch.setattr(cache, "dsl_version", lambda: None)
    path = scenario(tmp_path, SEED_SPEC)
    result = run_cli("run", path)
    assert result.code == 2
    assert "building rotate.py::launch needs nvidia-cutlass-dsl, which is not installed" in result.err
    with pytest.raises(DslNotInstalled):
        run_scenario(load_scenarios(path)[0])
    folder = pytester.mkdir("scenarios")
    (folder / "rotate.py").write_text(KERNEL.read_text())
    (folder / "s.yaml").write_text(open(path).read())
    outcome = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rs", str(folder))
    outcome.assert_outcomes(skipped=1)
    assert any("needs nvidia-cutlass-dsl" in line for line in outcome.outlines)


pytest_plugins = ["pytester"]
