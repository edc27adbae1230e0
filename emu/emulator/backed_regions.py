"""Which of emu's own buffers (unicorn_c.HostBacked) holds a guest range: those are read and written as Python
memory, never through Unicorn.  Apart so that both the direct and the public helpers read it."""
from __future__ import annotations


def backed_region(uc, address: int, size: int):
    """The HostBacked region of `uc` holding [address, address + size), or None."""
    for region in uc.__dict__.get("emu_backed", ()):
        if region.address <= address and address + size <= region.end:
            return region
    return None
