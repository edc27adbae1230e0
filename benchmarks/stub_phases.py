"""Where a warm in-process run's time goes above the idle-stub floor (floors.py): the stub calls, and per run.

`python benchmarks/stub_phases.py [--repeat N] [--realworld]` runs each object's loaders (as bench.py's
in-process figures: cuda_load, cuda_load_to_device) with the real stubs and with floors.py's idle stub, in
turn, object by object, and reports per run, in the CPU time of this thread (medians over rounds, in us):
the whole run; the time inside the stub hook (Machine._on_stub, reached from the C callback); the
records made when the call log is read (StubDispatcher.calls); the runtime's snapshot.  The hook's time
over the idle stub's is what the stubs' Python costs where it runs: called from Unicorn, with cold
caches, it is about half as fast again as the same code in a loop.  Each timer costs a system call.
"""
from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ["EMU_CACHE_DIR"] = tempfile.mkdtemp(prefix="emu-stub-phases-store-")

from bench import LOADERS, REALWORLD  # noqa: E402
from floors import _idle_stub  # noqa: E402
from harness import fixture_paths  # noqa: E402
from emu.cuda.runtime import CudaRuntime  # noqa: E402
from emu.emulator.machine import _READ_FRAME, Machine  # noqa: E402
from emu.run.session import run_object  # noqa: E402
from emu.stubs.dispatch import StubDispatcher  # noqa: E402

_clock = time.thread_time_ns
_spent: dict[str, int] = {}


def _add(phase: str, since: int) -> None:
    _spent[phase] = _spent.get(phase, 0) + _clock() - since


def _timed_stub_entry(self, _engine, _address, _size, _key) -> None:
    """Machine._on_stub_entry, timed: the frame read and the answer, as the C callback runs them."""
    start = _clock()
    try:
        self._on_stub(_READ_FRAME(self._frame_view, 0))
    except BaseException as error:
        self.hold(error)
    _add("stub hook", start)
    _spent["stub calls"] = _spent.get("stub calls", 0) + 1


def _timed(function, phase: str):
    def timed(*args, **kwargs):
        start = _clock()
        try:
            return function(*args, **kwargs)
        finally:
            _add(phase, start)
    return timed


def measure(paths: list[str], repeat: int) -> dict[str, dict[str, float]]:
    """Per side (real, idle), per phase: the median over rounds of the mean per run (us; stub calls: per run)."""
    real_stub = Machine._on_stub
    patches = [(Machine, "_on_stub_entry", _timed_stub_entry),
               (CudaRuntime, "snapshot", _timed(CudaRuntime.snapshot, "snapshot"))]
    if isinstance(StubDispatcher.__dict__.get("calls"), property):     # records made when read (a checkout before: in the hook)
        patches.append((StubDispatcher, "calls", property(_timed(StubDispatcher.calls.fget, "records made"))))
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in patches]
    rounds: dict[str, list[dict[str, float]]] = {"real": [], "idle": []}
    try:
        for owner, name, value in patches:
            setattr(owner, name, value)
        for round_ in range(repeat + 1):            # the first round warms up and is not counted
            spent = {side: {} for side in rounds}
            for path in paths:
                run_object(path, entries=LOADERS)    # after a switch of object, as floors.py's warm run
                for side in rounds:
                    Machine._on_stub = real_stub if side == "real" else _idle_stub
                    _spent.clear()
                    start = _clock()
                    run_object(path, entries=LOADERS)
                    _add("run", start)
                    for phase, value in _spent.items():
                        spent[side][phase] = spent[side].get(phase, 0) + value
                Machine._on_stub = real_stub
            if round_:
                for side in rounds:
                    rounds[side].append({phase: value / len(paths) / (1 if phase == "stub calls" else 1e3)
                                         for phase, value in spent[side].items()})
    finally:
        Machine._on_stub = real_stub
        for owner, name, value in saved:
            setattr(owner, name, value)
    return {side: {phase: statistics.median(r.get(phase, 0.0) for r in figures) for phase in figures[0]}
            for side, figures in rounds.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--realworld", action="store_true", help="the real-world exports instead of the 4.8.0 fixtures")
    args = parser.parse_args()
    paths = sorted(glob.glob(os.path.join(REALWORLD, "*", "*.o"))) if args.realworld else fixture_paths()
    figures = measure(paths, args.repeat)
    real, idle = figures["real"], figures["idle"]
    print(f"{len(paths)} objects, {real.get('stub calls', 0):.1f} stub calls per run; us per run (CPU time), real / idle stubs")
    for phase in ("run", "stub hook", "records made", "snapshot"):
        print(f"  {phase:13} {real.get(phase, 0.0):7.1f} / {idle.get(phase, 0.0):7.1f}   above the floor {real.get(phase, 0.0) - idle.get(phase, 0.0):6.1f}")
    calls = max(real.get("stub calls", 0.0), 1.0)
    print(f"  per stub call: {real.get('stub hook', 0.0) / calls:.2f} us real, {idle.get('stub hook', 0.0) / max(idle.get('stub calls', 0.0), 1.0):.2f} us idle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
