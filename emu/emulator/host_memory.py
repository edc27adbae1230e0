"""The host scratch area a run writes its arguments into, as a bump allocator (one per emulator)."""
from __future__ import annotations

from unicorn import UC_PROT_READ, UC_PROT_WRITE

from .unicorn_c import HostBacked, mem_read
from ..binary.memory_map import HOST_BASE, HOST_SIZE
from ..errors import BadInput


class HostMemory:
    """A bump allocator over the host scratch area, reset for every object run."""

    def __init__(self, uc) -> None:
        self.uc = uc
        self.region = HostBacked(uc, HOST_BASE, HOST_SIZE, UC_PROT_READ | UC_PROT_WRITE)
        self.cursor = HOST_BASE

    def reset(self) -> None:
        self.cursor = HOST_BASE

    def alloc(self, data: bytes, align: int = 16) -> int:
        address = (self.cursor + align - 1) & ~(align - 1)
        if address + len(data) > HOST_BASE + HOST_SIZE:
            raise BadInput(f"the entry's arguments need more than the {HOST_SIZE // 1024} KiB of guest memory emu "
                           f"lays them out in ({address + len(data) - HOST_BASE} bytes at least: the argument cells, "
                           "each tensor's struct with its shape and strides, the values); give smaller arguments")
        self.region.write(address, data)
        self.cursor = address + len(data)
        return address

    def write(self, address: int, data: bytes) -> None:
        self.region.write(address, data)

    def read(self, address: int, size: int) -> bytes:
        return mem_read(self.uc, address, size)
