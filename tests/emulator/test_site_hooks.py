"""emu.emulator.site_hooks moves code hooks by writing their bounds, on the strength of how Unicorn checks hooks:
with the instruction counter on, before every instruction, against the bounds as they are then.  These
tests hold that against the real libunicorn: code translated once, then run with the hooks moved,
grown, shrunk and parked, must reach the callback exactly at the addresses hooked at that moment (and
the same through the fallback that deletes and adds hooks)."""
from __future__ import annotations

import pytest
from unicorn import UC_ARCH_X86, UC_MODE_64, Uc

from emu.emulator.unicorn_c import code_hook_callback, emu_start, hook_bounds, hook_bounds_movable, hook_code_direct
from emu.emulator.site_hooks import PARKED, SPARE, SiteHooks

CODE = 0x10000
NOPS = 32


@pytest.fixture(params=[True, False], ids=["moved in place", "deleted and added"])
def engine(request, monkeypatch):
    """A bare x86-64 engine holding 32 one-byte nops, its SiteHooks, and the addresses each run reached."""
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(CODE, 0x1000, 5)
    uc.mem_write(CODE, b"\x90" * NOPS + b"\xf4")             # nops, then hlt: a run that overshoots stops
    reached: list[int] = []
    callback = code_hook_callback(lambda _engine, address, _size, _key: reached.append(address))
    hooks = SiteHooks(uc, callback)
    assert hooks.movable                      # this libunicorn lays hooks out as emu.emulator.unicorn_c expects
    hooks.movable = request.param

    def run() -> list[int]:
        reached.clear()
        emu_start(uc, CODE, CODE + NOPS, 0, 1000)    # counted, as every run of emu's Machine
        return list(reached)

    return hooks, run


def test_hooks_fire_exactly_where_they_are_aimed_now(engine):
    hooks, run = engine
    aims = [[7], [], [1, 2, 5], [30], list(range(0, NOPS, 2)), [9], [], [4, 8]]
    hooks.aim([CODE + 3])
    assert run() == run() == [CODE + 3]          # the block translated, then run from Unicorn's cache
    for aim in aims:
        addresses = [CODE + offset for offset in aim]
        hooks.aim(addresses)
        assert run() == addresses and hooks.hooked() == addresses


def test_parked_hooks_stay_bounded(engine):
    hooks, run = engine
    hooks.aim([CODE + offset for offset in range(NOPS)])
    hooks.aim([CODE + 1])
    assert len(hooks.handles) <= 2 + SPARE and run() == [CODE + 1]
    if hooks.movable:
        assert [hook_bounds(h) for h in hooks.handles[1:]] == [(PARKED, PARKED)] * (len(hooks.handles) - 1)


def test_the_layout_check_reads_back_what_a_hook_was_made_with():
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    assert hook_bounds_movable(uc)
    handle = hook_code_direct(uc, code_hook_callback(lambda *_: None), 0x1234, 0x5678)
    assert hook_bounds(handle) == (0x1234, 0x5678)


def test_a_machine_never_runs_without_counting():
    """A budget below 1 would turn Unicorn's counter off, and blocks translated then lack the hook check the
    moved hooks rely on: Machine.call refuses it before running anything."""
    from emu.arch import architecture
    from emu.emulator.machine import machine_for
    machine = machine_for(architecture("x86_64"))
    with pytest.raises(ValueError, match="at least 1"):
        machine.call(0x1000, [], budget=0)
