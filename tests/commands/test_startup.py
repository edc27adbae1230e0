"""What a process builds for a run: the stub models of stub_models.loaders (the eight wrappers every export
calls), other areas' and the C library's only for an object that imports one of theirs; and how it ends:
without CPython's teardown, after CPython's own exit steps (atexit functions, flushes, status 120).

Each check of a run is a fresh process (this one has imported everything by now) that reads `sys.modules`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, fixture

import stub_models
from stub_models.libc import LIBC_MODELS

# Run an object's loaders in a fresh process; print whether the C library's models were imported, and
# the symbols the run called.
_RUN_AND_TELL = """import json, sys
from emu.dsl.entries import EntrySpec
from emu.run.session import run_object
run = run_object(sys.argv[1], entries=[EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")])
print(json.dumps([sorted(m for m in sys.modules if m.startswith("stub_models.")), [call.symbol for call in run.calls]]))
"""
OTHER_AREAS = {"stub_models.device", "stub_models.driver", "stub_models.launch", "stub_models.library", "stub_models.memory",
               "stub_models.stream", "stub_models.helpers", "stub_models.libc"}


def _run_and_tell(path: str) -> tuple[set[str], list[str]]:
    """The stub_models modules a fresh process imported to run the object's loaders, and the symbols they called."""
    out = subprocess.run([sys.executable, "-c", _RUN_AND_TELL, path], env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    imported, symbols = json.loads(out.stdout)
    return set(imported), symbols


def test_the_libc_registry_lists_every_libc_model_in_order():
    assert stub_models.LIBC_REGISTRY == {model.symbol: ("libc", model.__name__) for model in LIBC_MODELS}
    assert list(stub_models.LIBC_REGISTRY) == [model.symbol for model in LIBC_MODELS]
    assert all(stub_models.LIBC_CATALOGUE[model.symbol] is model for model in LIBC_MODELS)
    assert stub_models.LIBC_CATALOGUE.get("_cudaGetDevice") is None and "printf" not in stub_models.CATALOGUE


def test_a_run_of_an_export_builds_only_the_loaders_models():
    imported, symbols = _run_and_tell(fixture("x86_64", "carveout_25"))
    assert "stub_models.loaders" in imported and not imported & OTHER_AREAS
    assert {"_cudaGetDevice", "_cuKernelGetAttribute", "_cudaFuncSetAttribute"} <= set(symbols)


def test_an_object_that_imports_printf_gets_the_libc_models():
    imported, symbols = _run_and_tell(str(ROOT / "tests/fixtures/realworld/x86_64/dynamic_smem.o"))
    assert imported & OTHER_AREAS == {"stub_models.libc"} and "_cudaFuncSetAttribute" in symbols


def test_every_fixture_export_imports_only_the_loaders_wrappers():
    """What stub_models.loaders says of itself: the CUDA wrappers every export (4.3.5 to 4.8.1, both hosts) imports."""
    from emu.cache.loaded import load_image
    paths = sorted(Path(ROOT, "tests/fixtures").glob("cutlass-dsl-*/*/*.o")) + sorted(Path(ROOT, "tests/fixtures/realworld").glob("*/*.o"))
    loaders = {symbol for symbol, (module, _) in stub_models.REGISTRY.items() if module == "loaders"}
    imported = set()
    for path in paths:
        image, _ = load_image(str(path))
        imported |= {symbol for symbol in image.stub_symbols if symbol in stub_models.REGISTRY}
    assert len(paths) > 100 and imported == loaders


# `python -m emu` ends its process without CPython's teardown (emu/__main__.py), after doing what CPython
# does on the way out.  A command started through runpy, as `python -m` starts it, with an atexit function
# registered first: it must still run, after the command's output.
_WITH_ATEXIT = """import atexit, runpy, sys
atexit.register(lambda: print("atexit ran", flush=True))
sys.argv = ["emu", *sys.argv[1:]]
runpy.run_module("emu", run_name="__main__", alter_sys=True)
"""


def _cold(argv: list[str], tmp_path: Path, **kwargs) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    env.update(PYTHONPATH=str(ROOT), EMU_NO_SERVER="1", EMU_SERVER_DIR=str(tmp_path / "server"))
    return subprocess.run(argv, env=env, cwd=tmp_path, timeout=120, **kwargs)


def test_a_cold_command_runs_atexit_functions_and_keeps_its_exit_status(tmp_path):
    out = _cold([sys.executable, "-c", _WITH_ATEXIT, "serve", "--status"], tmp_path, capture_output=True, text=True)
    assert out.returncode == 1                                   # no server running
    assert out.stdout.startswith("emu server: not running") and out.stdout.endswith("atexit ran\n")


def test_a_stdout_that_cannot_be_flushed_exits_120_as_cpython_does(tmp_path):
    """The same message and status as CPython's own finalization gives a plain `print` to a full device."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        emu = _cold([sys.executable, "-m", "emu", "serve", "--status"], tmp_path, stdout=full, stderr=subprocess.PIPE, text=True)
        plain = _cold([sys.executable, "-c", "print('x')"], tmp_path, stdout=full, stderr=subprocess.PIPE, text=True)
    assert plain.returncode == emu.returncode == 120
    assert emu.stderr == plain.stderr and "Exception ignored in: <_io.TextIOWrapper name='<stdout>'" in emu.stderr


# pydantic reads each default factory's signature when it builds a validator; a builtin's (`list`) comes from
# tokenizing its text signature, whose first use compiles tokenize's expressions (emu.support.model.empty_list).
_RUN_AND_COUNT_TOKENIZER = """import contextlib, io, sys, tokenize
from emu.commands.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    status = main(["run", "--json", sys.argv[1]])
compile_ = getattr(tokenize, "_compile", None)          # the regular-expression tokenizer (CPython <= 3.11)
print(status, compile_.cache_info().misses if compile_ is not None else 0)
"""


def test_a_scenario_run_never_compiles_the_tokenizer(tmp_path):
    scenario = tmp_path / "one.yaml"
    scenario.write_text(f"objects: [{json.dumps(fixture('x86_64', 'carveout_25'))}]\n"
                        "entries: [cuda_init, cuda_load, cuda_load_to_device, launch]\n")
    out = _cold([sys.executable, "-c", _RUN_AND_COUNT_TOKENIZER, str(scenario)], tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "0"]
