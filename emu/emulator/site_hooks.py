"""The code hooks at the loaded object's vector sites, moved from object to object rather than made anew.

An x86-64 export built for the host CPU has dozens of VEX instructions that the AVX unit
carries out (emu.arch.x86_64.avx), each reached through a code hook at its address.  Only
the loaded object's sites are hooked: once the budget's counter is on, Unicorn checks every
code hook's bounds for every instruction it runs.  Deleting one object's hooks and adding the
next one's cost every switch between objects about 0.2 ms, and each deletion also dropped the
translated block that began at its site.  Writing a hook's bounds in place costs about a
microsecond and drops nothing.

That is sound because every block is translated with the counter on (Machine.call always
counts): Unicorn then puts its hook check before every instruction, and the check reads the
bounds as they are when the instruction runs, not as they were when it was translated.  And
only where the library lays hooks out as emu.emulator.unicorn_c expects (checked once per emulator;
otherwise hooks are deleted and added as before).  Hooks left over from an object with more
sites are parked at an address no instruction has; past twice the sites needed (and SPARE),
the surplus is deleted, since a parked hook is still checked before every instruction.
Each hook's bounds are written through a view made once per hook, and only where they change (a parked
hook left parked is not written again): a switch between objects with many sites moves them at a
fraction of the cost.
"""
from __future__ import annotations

from typing import Sequence

from unicorn import Uc

from .unicorn_c import hook_bounds, hook_bounds_movable, hook_bounds_view, hook_code_direct

PARKED = 1          # no instruction starts at address 1: page 0 is never mapped
SPARE = 4


class SiteHooks:
    """The hooks one emulator keeps for vector sites, all with one C callback."""

    def __init__(self, uc: Uc, callback) -> None:
        self.uc, self.callback = uc, callback
        self.movable = hook_bounds_movable(uc)
        self.handles: list[int] = []
        self._views: list = []                 # per handle: its bounds, written in place (hook_bounds_view)
        self._aimed: list[int] = []            # per handle: the address its bounds hold now (PARKED: none)
        self._sites: tuple[int, ...] = ()

    def aim(self, sites: Sequence[int]) -> None:
        """Hook exactly these instruction addresses (none: an empty sequence)."""
        handles, self._sites = self.handles, tuple(sites)
        if not self.movable:
            for handle in handles:
                self.uc.hook_del(handle)
            self.handles = [hook_code_direct(self.uc, self.callback, site, site) for site in sites]
            return
        views, aimed = self._views, self._aimed
        surplus = len(handles) - (2 * len(sites) + SPARE)
        if surplus > 0:
            for handle in handles[-surplus:]:
                self.uc.hook_del(handle)
            del handles[-surplus:], views[-surplus:], aimed[-surplus:]
        kept = min(len(handles), len(sites))
        for index in range(kept):
            site = sites[index]
            if aimed[index] != site:
                views[index][:] = site, site
                aimed[index] = site
        for index in range(kept, len(handles)):
            if aimed[index] != PARKED:
                views[index][:] = PARKED, PARKED
                aimed[index] = PARKED
        for site in sites[kept:]:
            handle = hook_code_direct(self.uc, self.callback, site, site)
            handles.append(handle)
            views.append(hook_bounds_view(handle))
            aimed.append(site)

    def hooked(self) -> list[int]:
        """The addresses hooked now, in hook order, parked hooks left out (read back from the hooks when they move)."""
        if not self.movable:
            return list(self._sites)
        return [begin for begin, _ in map(hook_bounds, self.handles) if begin != PARKED]
