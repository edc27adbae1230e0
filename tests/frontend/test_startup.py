"""What a process builds for a run: the stub models of stub_models.loaders (the eight wrappers every export
calls), other areas' and the C library's only for an object that imports one of theirs.

Each check of a run is a fresh process (this one has imported everything by now) that reads `sys.modules`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, fixture

import stub_models
from stub_models.libc import LIBC_MODELS

# Run an object's loaders in a fresh process; print whether the C library's models were imported, and
# the symbols the run called.
_RUN_AND_TELL = """import json, sys
from emu.entries import EntrySpec
from emu.run import run_object
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
    from emu.images import load_image
    paths = sorted(Path(ROOT, "tests/fixtures").glob("cutlass-dsl-*/*/*.o")) + sorted(Path(ROOT, "tests/fixtures/realworld").glob("*/*.o"))
    loaders = {symbol for symbol, (module, _) in stub_models.REGISTRY.items() if module == "loaders"}
    imported = set()
    for path in paths:
        image, _ = load_image(str(path))
        imported |= {symbol for symbol in image.stub_symbols if symbol in stub_models.REGISTRY}
    assert len(paths) > 100 and imported == loaders
