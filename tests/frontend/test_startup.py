"""What a process builds for a run: the C library's models only for an object that imports a C library function.

Each check runs in a fresh process (this one has imported everything by now) and reads `sys.modules`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT, fixture

import stub_models
from stub_models.libc import LIBC_MODELS

# Run an object's loaders in a fresh process; print whether the C library's models were imported, and
# the symbols the run called.
_RUN_AND_TELL = """import json, sys
from emu.entries import EntrySpec
from emu.run import run_object
run = run_object(sys.argv[1], entries=[EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")])
print(json.dumps(["stub_models.libc" in sys.modules, [call.symbol for call in run.calls]]))
"""


def _run_and_tell(path: str) -> tuple[bool, list[str]]:
    out = subprocess.run([sys.executable, "-c", _RUN_AND_TELL, path], env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    imported, symbols = json.loads(out.stdout)
    return imported, symbols


def test_the_libc_registry_lists_every_libc_model_in_order():
    assert stub_models.LIBC_REGISTRY == {model.symbol: ("libc", model.__name__) for model in LIBC_MODELS}
    assert list(stub_models.LIBC_REGISTRY) == [model.symbol for model in LIBC_MODELS]
    assert all(stub_models.LIBC_CATALOGUE[model.symbol] is model for model in LIBC_MODELS)
    assert stub_models.LIBC_CATALOGUE.get("_cudaGetDevice") is None and "printf" not in stub_models.CATALOGUE


def test_an_object_that_calls_no_libc_function_never_builds_the_libc_models():
    imported, symbols = _run_and_tell(fixture("x86_64", "carveout_25"))
    assert not imported and "_cudaFuncSetAttribute" in symbols


def test_an_object_that_imports_printf_gets_its_model():
    imported, symbols = _run_and_tell(str(ROOT / "tests/fixtures/realworld/x86_64/dynamic_smem.o"))
    assert imported and "_cudaFuncSetAttribute" in symbols
