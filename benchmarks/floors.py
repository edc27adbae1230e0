"""What an in-process run cannot go below while its stubs are Python callbacks on Unicorn hooks.

bench.py sets these beside the targets.  Each floor runs the same objects and entries
as the figure it bounds, alternating with it object by object so both see the same
minutes of this machine, and in the same places: the run first after a switch of object
(and after the previous object's LIEF parse and fresh translation) pays for the switch
(Unicorn's memory map and TLB, cold CPU caches: about 0.03 ms of the 4.8.0 fixtures'
~0.12 ms idle run), the run after it does not, so the real run and the idle one take the
first place in turn, object by object and round by round, and each median holds both
places equally (with the real run always first, the idle floor was 0.03 ms too low):
  idle:        the run with every stub answered by a callback that only sets a result
               of 0 (no argument decoding, no CUDA model, no record): what emulating
               the loaders, entering Unicorn and calling back into Python costs alone;
  translated:  idle, after Unicorn forgot what it translated from the object's code:
               the least a never-seen object, or `check DIR`'s next object, adds;
  parsed:      LIEF parsing the object, which the mission names as emu's parser and
               every never-seen object pays.
A target below a floor cannot be met by tuning emu's own Python.
"""
from __future__ import annotations

import statistics
import time

import lief

from emu.arch import architecture
from emu.binary.elf.relocatable import PERM_X
from emu.emulator.machine import Machine, machine_for
from emu.run.session import run_object


_IDLE_CALLS = [0]


def _idle_stub(machine: Machine, _frame) -> None:
    machine.set_stub_result(None, 0)
    _IDLE_CALLS[0] += 1


def _forget_code(path: str) -> None:
    """Drop Unicorn's translations of the object's code, as a never-seen object's run finds it."""
    from emu.cache import loaded as images
    image, _ = images.load_image(path)
    uc = machine_for(architecture(image.obj.arch)).uc
    for segment in image.segments:
        if segment.perms & PERM_X:
            uc.ctl_remove_cache(segment.address, segment.address + len(segment.data))


def _idle_run(path: str, entries: list, calls: dict[str, list]) -> float:
    """One run of `path` with every stub idle: its time (seconds); its stub calls join `calls["idle"]`."""
    real_stub = Machine._on_stub
    Machine._on_stub = _idle_stub
    _IDLE_CALLS[0] = 0
    try:
        start = time.perf_counter()
        run_object(path, entries=entries)
        elapsed = time.perf_counter() - start
    finally:
        Machine._on_stub = real_stub
    calls["idle"].append(_IDLE_CALLS[0])
    return elapsed


def in_process_floors(paths: list[str], entries: list, repeat: int) -> dict:
    """Median ms per object of the real warm run and of each floor; stub calls per run, real and idle."""
    real_stub = Machine._on_stub
    times: dict[str, list[float]] = {"warm": [], "idle": [], "translated": [], "parsed": []}
    calls = {"real": [], "idle": []}
    for round_ in range(repeat + 1):           # the first round warms up and is not counted
        for index, path in enumerate(paths):
            real_first = (round_ + index) % 2 == 0     # which of the two runs comes first after the switch
            if not real_first:
                idle = _idle_run(path, entries, calls)
            start = time.perf_counter()
            run = run_object(path, entries=entries)
            warm = time.perf_counter() - start
            calls["real"].append(len(run.calls))
            if real_first:
                idle = _idle_run(path, entries, calls)
            Machine._on_stub = _idle_stub
            try:
                _forget_code(path)
                start = time.perf_counter()
                run_object(path, entries=entries)
                translated = time.perf_counter() - start
            finally:
                Machine._on_stub = real_stub
            start = time.perf_counter()
            lief.parse(path)
            parsed = time.perf_counter() - start
            for key, value in (("warm", warm), ("idle", idle), ("translated", translated), ("parsed", parsed)):
                times[key].append(value)
    counted = slice(len(paths), None)
    figures = {f"{key}_ms": statistics.median(values[counted]) * 1e3 for key, values in times.items()}
    # the real warm run over the idle floor, round by round (each round's medians): the spread of that ratio
    rounds = [slice(start, start + len(paths)) for start in range(len(paths), len(times["warm"]), len(paths))]
    figures["warm_over_idle"] = [statistics.median(times["warm"][r]) / statistics.median(times["idle"][r]) for r in rounds]
    figures.update({f"{key}_calls": statistics.median(values) for key, values in calls.items()})
    return figures
