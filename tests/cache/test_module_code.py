"""The module-code store (emu.cache.module_code): a process fills it and the next one imports emu's modules from it,
with the code CPython would have run; a module whose source or folder changed since is imported the usual way (never
the stored code) and stored again; `EMU_CACHE_DIR=off` leaves importing as CPython has it.  (A cold `python -m emu
run` filling it, and a damaged one rewritten: tests/cache/test_class_code.py, for both stores.)"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

from conftest import ROOT

# In a fresh process from the checkout at argv[1]: install the store, import what a run imports, save, and print
# for each of emu's modules how it was loaded, its file, and its code as data (bytecode, names, constants).
_IMPORTS = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from emu.cache import module_code
module_code.install()
import emu.scenario.runner, emu.commands.report
def shown(code):
    return [code.co_code.hex(), code.co_names, repr([sorted(c) if isinstance(c, frozenset) else c for c in code.co_consts
                                 if not hasattr(c, "co_code")]),
            [shown(c) for c in code.co_consts if hasattr(c, "co_code")], code.co_filename]
found = {}
for name, module in sorted(sys.modules.items()):
    if name.startswith(("emu.", "stub_models.")) and module.__spec__.origin.endswith(".py"):
        functions = {k: shown(v.__code__) for k, v in vars(module).items()
                     if callable(v) and getattr(v, "__module__", None) == name and hasattr(v, "__code__")}
        found[name] = [type(module.__loader__).__name__, module.__file__, module.__cached__, functions,
                       getattr(module, "ADDED_LATER", None)]
module_code.save()
print(json.dumps(found))
"""


def _imports(root, store) -> dict:
    env = {**os.environ, "EMU_CACHE_DIR": str(store)}
    env.pop("PYTHONPATH", None)
    out = subprocess.run([sys.executable, "-c", _IMPORTS, str(root)], env=env, capture_output=True, text=True,
                         timeout=120, cwd=str(root))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_modules_from_the_store_are_the_modules_imported_afresh(tmp_path):
    plain = _imports(ROOT, "off")
    first = _imports(ROOT, tmp_path)            # fills the store
    stored = _imports(ROOT, tmp_path)           # imports from it
    assert len(plain) > 60 and set(plain) == set(first) == set(stored)
    assert {loader for loader, *_ in plain.values()} == {"SourceFileLoader"}
    served = [name for name, (loader, *_) in stored.items() if loader == "StoredCodeLoader"]
    assert len(served) > 60                     # all but the few imported before install (emu.cache...)
    assert {name: rest for name, (_, *rest) in stored.items()} == {name: rest for name, (_, *rest) in plain.items()}


def test_a_changed_module_or_folder_is_imported_afresh_and_stored_again(tmp_path):
    copy = tmp_path / "checkout"
    for package in ("emu", "stub_models"):
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    store = tmp_path / "store"
    _imports(copy, store)                       # writes the copy's bytecode (unless PYTHONDONTWRITEBYTECODE is set)
    settled = time.time() - 60                  # every file and folder as if untouched for a minute
    for folder, _, files in os.walk(copy):
        for path in [folder, *(os.path.join(folder, name) for name in files if name.endswith(".py"))]:
            os.utime(path, (settled, settled))
    _imports(copy, store)
    assert _imports(copy, store)["emu.scenario.matrix"][0] == "StoredCodeLoader"
    matrix = copy / "emu" / "scenario" / "matrix.py"
    matrix.write_text(matrix.read_text() + "\nADDED_LATER = 1\n")      # a change the .pyc's whole-second time may miss
    changed = _imports(copy, store)
    assert changed["emu.scenario.matrix"][0] == "SourceFileLoader" and changed["emu.scenario.matrix"][4] == 1
    assert changed["emu.scenario.load"][0] == "StoredCodeLoader"
    assert _imports(copy, store)["emu.scenario.matrix"][4] == 1
    time.sleep(0.01)
    (copy / "emu" / "scenario" / "added_later.py").write_text("")       # the folder changed: nothing of it is served
    after = _imports(copy, store)
    assert {after[name][0] for name in after if name.startswith("emu.scenario.")} == {"SourceFileLoader"}
    assert after["emu.cuda.config"][0] == "StoredCodeLoader"
