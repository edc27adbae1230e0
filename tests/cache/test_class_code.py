"""The class-code store (emu.cache.class_code): a process that reads it makes the same classes, method for method,
as one that compiles them; a `python -m emu` process fills it and the next one uses it; a damaged file is
ignored and rewritten; `EMU_CACHE_DIR=off` leaves everything as CPython has it."""
from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys

import pytest
from conftest import ROOT, fixture
from emu.cache.root import read_indexed

# In a fresh process: install the store (or not), import what a run imports, and print every dataclass and
# named tuple method's code as data (bytecode, constants, names, flags), with how many texts the store held.
_CLASSES = r"""
import dataclasses, json, sys
if sys.argv[1] == "install":
    from emu.cache import class_code
    class_code.install()
    held = len(class_code._codes)
else:
    held = 0
import pydantic.fields, emu.scenario.runner, emu.commands.report
def shown(code):
    return [code.co_code.hex(), repr([c for c in code.co_consts if not hasattr(c, "co_code")]), code.co_names,
            code.co_varnames, code.co_flags, code.co_filename, code.co_name]
methods = {}
for module in list(sys.modules.values()):
    for name, value in list(vars(module).items()) if module else ():
        if isinstance(value, type) and (dataclasses.is_dataclass(value) or hasattr(value, "_fields")):
            for attr, fn in vars(value).items():
                code = getattr(fn, "__code__", None)
                if code is not None and code.co_filename == "<string>":
                    methods[f"{value.__module__}.{value.__qualname__}.{attr}"] = shown(code)
if sys.argv[1] == "install":
    class_code.save()
print(json.dumps([held, methods]))
"""


def _classes(how: str, store) -> tuple[int, dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EMU_CACHE_DIR": str(store)}
    out = subprocess.run([sys.executable, "-c", _CLASSES, how], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    held, methods = json.loads(out.stdout)
    return held, methods


def test_classes_made_from_the_store_are_the_classes_compiled_afresh(tmp_path):
    _, compiled = _classes("plain", tmp_path)
    first_held, first = _classes("install", tmp_path)        # fills the store
    held, from_store = _classes("install", tmp_path)          # reads it
    assert first_held == 0 and held > 200 and len(compiled) > 200
    assert first == compiled and from_store == compiled


@pytest.mark.parametrize("kind", ["class_code", "module_code"])
def test_a_cold_run_fills_the_store_and_a_damaged_store_is_rewritten(tmp_path, kind):
    """Both stores of a `python -m emu` process (emu.cache.class_code, emu.cache.module_code): filled by a cold run,
    read by the next, ignored and rewritten when damaged; the output the same each time."""
    scenario = tmp_path / "one.yaml"
    scenario.write_text(f"objects: [{json.dumps(fixture('x86_64', 'carveout_25'))}]\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EMU_CACHE_DIR": str(tmp_path / "store"), "EMU_NO_SERVER": "1"}

    def run() -> str:
        out = subprocess.run([sys.executable, "-m", "emu", "run", str(scenario)], env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0 and out.stderr == "", out.stderr
        return out.stdout

    first = run()
    [stored] = (tmp_path / "store" / kind).iterdir()
    assert stored.stat().st_size > 10_000 and run() == first
    stored.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00not marshal data")
    assert run() == first
    rewritten = read_indexed(str(stored))
    assert len(rewritten) > (200 if kind == "class_code" else 60)
    assert all(isinstance(key, tuple if kind == "class_code" else str) for key in rewritten)
    assert all(type(marshal.loads(data)) is type(run.__code__) for _, data in rewritten.values())


def test_off_leaves_exec_alone(tmp_path):
    code = ("import collections, dataclasses\nfrom emu.cache import class_code\nclass_code.install()\n"
            "print(dataclasses.__dict__.get('exec'), collections.__dict__.get('exec'))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT), "EMU_CACHE_DIR": "off"},
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["None", "None"], out.stderr


def test_an_entry_that_does_not_read_back_is_compiled_afresh_and_stored_again(tmp_path, monkeypatch):
    """Each code is unmarshalled when first looked up (the store is an indexed file): one whose data is not code is
    compiled afresh, and the next save stores the good one; the others are read as stored."""
    import collections
    import dataclasses
    import typing

    from emu.cache import class_code
    from emu.cache.root import write_indexed

    store = tmp_path / "class_code.marshal"
    bad, good = ("x = 1\n", "<string>", "exec"), ("y = 2\n", "<string>", "exec")
    write_indexed(str(store), {bad: (None, b"not marshal code"),
                               good: (None, marshal.dumps(compile(good[0], "<string>", "exec", dont_inherit=True)))})
    for module, name in ((dataclasses, "exec"), (collections, "exec"), (typing, "compile")):
        monkeypatch.setattr(module, name, getattr(module, name, None), raising=False)    # restored after the test
    monkeypatch.setattr(class_code, "_codes", {})
    monkeypatch.setattr(class_code, "_state", {"path": None, "added": 0, "file": None})
    monkeypatch.setattr(class_code, "interpreter_store_file", lambda kind: str(store))
    class_code.install()
    assert type(class_code._codes[good]) is tuple              # where the code is: not unmarshalled yet
    namespace: dict = {}
    exec(class_code.cached_compile(*bad), namespace)          # noqa: S102 - the test's own text
    exec(class_code.cached_compile(*good), namespace)         # noqa: S102
    assert namespace["x"] == 1 and namespace["y"] == 2 and class_code._state["added"] == 1
    class_code.save()
    stored = {key: marshal.loads(data) for key, (_, data) in read_indexed(str(store)).items()}
    assert set(stored) == {bad, good} and all(type(code) is type(compile("", "", "exec")) for code in stored.values())
