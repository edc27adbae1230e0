"""Where a cold `python -m emu run` of one object spends its time above the import floor.

    python benchmarks/cold_process.py [--repeat N]

Each sample is a fresh process (bytecode cache on, image store warm, no server) that first imports
what the floor imports (`unicorn, yaml, pydantic`, `BaseModel`), then sets up as emu/__main__.py does
(the stand-in plugin loader, the garbage collector's threshold, the class-code and module-code
stores; `secrets` is real here: pydantic imported it with the floor), then runs the command line's steps
one by one, timing each: emu's command-line modules, reading and validating the scenario (the
scenario model's import included), the reporting and runner modules, the name checks, the run
itself, the report.  Beside the steps, the time spent creating classes, whatever the step: the
dataclasses (each generates and compiles its methods), the enums, the pydantic model classes
(with the validators built at class creation), and pydantic.fields with what it imports
(annotated_types, pydantic.types, hashlib...), which the first model class with a `Field` pays.
Medians over the samples.  A profile, not a benchmark: bench.py holds the goal's figure.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness import FIXTURES, process_env  # noqa: E402

# One sample, run by `python -c SAMPLE SCENARIO` in a fresh process; prints its figures as JSON.
SAMPLE = r"""
import sys, time
clock = time.perf_counter
start = clock()
import unicorn, yaml, pydantic
from pydantic import BaseModel
floor = clock() - start
import os
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
from types import ModuleType
stand_in = ModuleType("pydantic.plugin._loader"); stand_in.get_plugins = lambda: ()
sys.modules[stand_in.__name__] = stand_in                   # as emu/__main__.py does
import gc
gc.set_threshold(100_000, *gc.get_threshold()[1:])          # as emu/__main__.py does (the floor's imports came first)
from emu.cache import class_code, module_code
class_code.install()                                        # as emu/__main__.py does
module_code.install()
import dataclasses, enum, io, contextlib
from pydantic._internal import _model_construction
spent = {"dataclass classes": 0.0, "enum classes": 0.0, "pydantic model classes": 0.0}
def timing(owner, name, key):
    original, depth = getattr(owner, name), [0]
    def timed(*args, **kwargs):
        depth[0] += 1
        began = clock()
        try:
            return original(*args, **kwargs)
        finally:
            depth[0] -= 1
            if not depth[0]:
                spent[key] += clock() - began
    setattr(owner, name, timed)
timing(dataclasses, "_process_class", "dataclass classes")
timing(enum.EnumType, "__new__", "enum classes")
timing(_model_construction.ModelMetaclass, "__new__", "pydantic model classes")
steps, mark = {}, [clock()]
def step(name):
    now = clock(); steps[name] = now - mark[0]; mark[0] = now
began = clock()
from emu.server.client import run_served
from emu.commands.process_end import end_process
from emu.commands.cli import _plain_run
args = _plain_run(["run", "--quiet", sys.argv[1]])
step("command line (emu.commands.cli)")
import pydantic.fields
step("pydantic.fields and what it imports")
from emu.scenario.load import load_scenarios, scenario_files
loaded = [v for p in scenario_files(args.scenarios) for v in load_scenarios(p)]
step("scenario: its modules, model classes, validation")
from emu.commands.report import print_scenario
from emu.scenario.names import check_objects
from emu.scenario.runner import run_scenario
step("runner and report modules (emulator, CUDA model, stores)")
for scenario in loaded:
    check_objects(scenario)
step("name checks (the object's image from the store)")
results = [run_scenario(s) for s in loaded]
step("the run (lazy imports, emulator, translation, stubs)")
with contextlib.redirect_stdout(io.StringIO()):
    for result in results:
        print_scenario(result, quiet=True)
step("the report")
class_code.save()
module_code.save()
import json
print(json.dumps({"floor": floor, "above": clock() - began, "steps": steps, "classes": spent}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    env = process_env(EMU_NO_SERVER="1", EMU_CACHE_DIR=tempfile.mkdtemp(prefix="emu-cold-store-"))
    with tempfile.TemporaryDirectory() as folder:
        scenario = os.path.join(folder, "one_object.yaml")
        with open(scenario, "w") as handle:
            handle.write("description: one object\nobjects: [%s]\nentries: [cuda_init, cuda_load, cuda_load_to_device, launch]\n"
                         % json.dumps(os.path.join(FIXTURES, "x86_64", "carveout_25.o")))
        command = [sys.executable, "-c", SAMPLE, scenario]
        subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=True)       # fills the store, writes bytecode
        samples = [json.loads(subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout)
                   for _ in range(args.repeat)]

    def median(pick) -> float:
        return statistics.median(pick(s) for s in samples) * 1e3

    print(f"cold one-object run above its import floor ({args.repeat} fresh processes; medians, ms)")
    print(f"  the floor's imports, in the same process            {median(lambda s: s['floor']):7.1f}")
    print(f"  emu's part, in all                                  {median(lambda s: s['above']):7.1f}")
    for name in samples[0]["steps"]:
        print(f"    {name:<56} {median(lambda s: s['steps'][name]):7.1f}")
    print("  of which creating classes, whatever the step:")
    for name in samples[0]["classes"]:
        print(f"    {name:<56} {median(lambda s: s['classes'][name]):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
