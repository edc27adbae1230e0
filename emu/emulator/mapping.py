"""An image's segments in one emulator, mapped and swapped touching Unicorn as little as possible.

One emulator runs every object of its architecture in turn (emu.emulator.machine).  Code and
read-only data in a content-chosen slot (emu.binary.memory_map, emu.binary.elf.relocatable) stay mapped: the
slots of the object that ran before are only made inaccessible, so Unicorn's translations
of its code survive for the next time it runs, nothing is unmapped and mapped again when
sizes differ, and a stray access into them still faults (up to `MAX_HELD_SLOTS` per class: then the slot
used longest ago is unmapped).  The segments without a slot (an object's data at its fixed address, a
shared library's segments where emu.binary.elf.shared lays it out) are held the same way, by address (up to
`MAX_HELD_SLOTS`): a library run between objects in one emulator keeps its code mapped and translated.  Such
a region serves the next segment at its address with the same size and permissions, and is unmapped when a
segment of another layout overlaps it (two libraries at the one library base replace each other, which is
why emu.emulator.machine gives each library an emulator of its own).  A region that serves again is
rewritten only when its bytes differ from the segment's (writable data always, since a run changes it).
Rewriting code drops Unicorn's translations of the bytes that changed (it does not always drop those made from the old
bytes by itself); only those, so that objects sharing a slot keep the rest (emu.emulator.machine gives an object
whose slot holds another's bytes an emulator of its own while it may: `holds_other_code`).  A dropped
translation's space in Unicorn's code buffer comes back only when the whole buffer is
flushed, so every `FLUSH_AFTER_REWRITES` rewrites the mapping flushes it: two objects
alternating in one slot would otherwise grow the process by tens of KiB per switch.
"""
from __future__ import annotations

from unicorn import UC_PROT_NONE, Uc

from .unicorn_c import HostBacked, mem_protect, mem_write
from ..binary.image import PERM_R, PERM_W, PERM_X, LoadedBinary, Segment
from ..binary.memory_map import CODE_SLOTS_BASE, RODATA_SLOTS_BASE

FLUSH_AFTER_REWRITES = 64
# Every change to Unicorn's memory map rebuilds its flat view of every region mapped (mapping a
# region took about 0.05 ms with 100 mapped, 0.5 ms with 1,000 and 2 ms with 2,000 here): past
# this many slots held per class (code, read-only data) the one used longest ago is unmapped,
# so that `check` of a directory of thousands of exports does not slow down object by object.
# A warm loop over fewer distinct objects than this keeps every translation.
MAX_HELD_SLOTS = 128


def _slotted(image: LoadedBinary) -> tuple[Segment | None, Segment | None]:
    """The image's code and read-only data segments that go in slots (an object's, laid out at a slot's address),
    each None where the first segment of that class is not in a slot (a library's: mapped where it is laid out)."""
    code = next((segment for segment in image.segments if segment.perms == PERM_R | PERM_X), None)
    rodata = next((segment for segment in image.segments if segment.perms == PERM_R), None)
    return (code if code is not None and code.address >= CODE_SLOTS_BASE else None,
            rodata if rodata is not None and rodata.address >= RODATA_SLOTS_BASE else None)


def _overlaps(region: HostBacked, segment: Segment) -> bool:
    return region.address < segment.address + len(segment.data) and segment.address < region.end


def changed_ranges(old: bytes, new: bytes, chunk: int = 64) -> list[tuple[int, int]]:
    """The [start, end) offsets where two equally long codes differ, in merged runs of `chunk`-byte blocks.

    Unicorn drops a translation when its range is removed from the cache; one made only
    from bytes that did not change stays valid, so only these ranges need removing.
    """
    ranges: list[tuple[int, int]] = []
    old_view, new_view = memoryview(old), memoryview(new)
    for start in range(0, len(new), chunk):
        if old_view[start:start + chunk] != new_view[start:start + chunk]:
            end = min(start + chunk, len(new))
            if ranges and ranges[-1][1] == start:
                ranges[-1] = (ranges[-1][0], end)
            else:
                ranges.append((start, end))
    return ranges


class ImageMapping:
    """The segments of the image loaded last, and every slot an image loaded before left mapped."""

    def __init__(self, uc: Uc) -> None:
        self.uc = uc
        # address -> (region, bytes last written, permissions), the image's and those held inaccessible, used longest ago first
        self._mapped: dict[int, tuple[HostBacked, bytes, int]] = {}
        self._active_regions: list[int] = []      # the addresses in _mapped that the image loaded last maps
        self._code_slots: dict[int, bytes] = {}                    # code slot address -> code bytes mapped there
        self._active_code: int | None = None
        self._rodata_slots: dict[int, tuple[HostBacked, bytes]] = {}   # read-only slot address -> (region, bytes)
        self._active_rodata: HostBacked | None = None
        self.rewrites = 0                      # code rewrites since Unicorn's code buffer was last flushed

    def drop_translations(self, address: int, ranges: list[tuple[int, int]]) -> None:
        """Unicorn forgets what it translated from these [start, end) offsets of the code at `address`."""
        self.rewrites += 1
        if self.rewrites >= FLUSH_AFTER_REWRITES:
            self.uc.ctl_flush_tb()             # gives the buffer's space back (see the module's docstring)
            self.rewrites = 0
            return
        for start, end in ranges:
            self.uc.ctl_remove_cache(address + start, address + end)

    def holds_other_code(self, image: LoadedBinary) -> bool:
        """Whether a slot `image`'s code or read-only data would take holds another object's bytes (or another size):
        loading `image` here would rewrite them and drop their translations (emu.emulator.machine picks another
        emulator then, while it may)."""
        code, rodata = _slotted(image)
        held_code = self._code_slots.get(code.address) if code is not None else None
        held_rodata = self._rodata_slots.get(rodata.address) if rodata is not None else None
        return (held_code is not None and held_code is not code.data and held_code != code.data) or \
               (held_rodata is not None and held_rodata[1] is not rodata.data and held_rodata[1] != rodata.data)

    def load(self, image: LoadedBinary) -> Segment | None:
        """Map `image`'s segments in place of the last image's; its code segment, if any."""
        wanted = {segment.address: segment for segment in image.segments}     # a shared library has several per class
        code, rodata = _slotted(image)
        if code is not None:
            del wanted[code.address]
            self._enter_code_slot(code)
        elif self._active_code is not None:
            mem_protect(self.uc, self._active_code, len(self._code_slots[self._active_code]), UC_PROT_NONE)
            self._active_code = None
        if rodata is not None:
            del wanted[rodata.address]
            self._enter_rodata_slot(rodata)
        elif self._active_rodata is not None:
            self._active_rodata.protect(self.uc, UC_PROT_NONE)
            self._active_rodata = None
        self._map_regions(wanted, image.segments)
        return code

    def _map_regions(self, wanted: dict[int, Segment], segments: list[Segment]) -> None:
        """The segments without a slot: an object's classes at their fixed addresses, a library's segments where
        it is laid out.  A region the next image does not want is held, inaccessible, as a slot is (a library
        run between objects keeps its translations); one that a wanted segment overlaps without matching it
        (address, size, permissions) is unmapped (`segments`: all the image's, slots' too)."""
        mapped = self._mapped
        for address in list(mapped):
            region, _, perms = mapped[address]
            segment = wanted.get(address)
            if segment is not None and segment.perms == perms and len(segment.data) == region.size:
                continue
            if segment is not None or any(_overlaps(region, other) for other in segments):
                self._unmap_region(address)
            elif address in self._active_regions:
                region.protect(self.uc, UC_PROT_NONE)
        self._active_regions = [address for address in self._active_regions if address in wanted and address in mapped]
        for address, segment in wanted.items():
            held = mapped.pop(address, None)              # entered again: now the most recently used
            if held is None:
                while len(mapped) >= MAX_HELD_SLOTS:
                    self._unmap_region(next(iter(mapped)))
                region = HostBacked(self.uc, address, len(segment.data), segment.perms)
                region.view[:] = segment.data
            else:
                region = held[0]
                if address not in self._active_regions:
                    region.protect(self.uc, segment.perms)
                self._rewrite(region, held[1], segment)
            mapped[address] = (region, segment.data, segment.perms)
        self._active_regions = list(wanted)

    def _rewrite(self, region: HostBacked, written: bytes, segment: Segment) -> None:
        """Put `segment`'s bytes in its region, which holds the bytes `written` last: writable data always (a run
        changes it), other bytes where they differ, as a slot's; code's translations of the ranges that changed go."""
        data = segment.data
        if segment.perms & PERM_W:
            region.view[:] = data
        elif written != data:                 # the same image again: the same bytes object, compared at once
            region.view[:] = data
            if segment.perms & PERM_X:
                self.drop_translations(region.address, changed_ranges(written, data))

    def _unmap_region(self, address: int) -> None:
        """Unmap a region of `_mapped`; code's translations go too (Unicorn does not always drop them itself)."""
        region, _, perms = self._mapped.pop(address)
        if perms & PERM_X:
            self.drop_translations(address, [(0, region.size)])
        region.unmap(self.uc)

    def _enter_code_slot(self, code: Segment) -> None:
        address, data = code.address, code.data
        if self._active_code is not None and self._active_code != address:
            mem_protect(self.uc, self._active_code, len(self._code_slots[self._active_code]), UC_PROT_NONE)
        held = self._code_slots.pop(address, None)        # entered again: now the most recently used
        if held is not None and len(held) != len(data):
            self._unmap_code_slot(address, held)
            held = None
        if held is None:
            while len(self._code_slots) >= MAX_HELD_SLOTS:
                oldest = next(iter(self._code_slots))
                self._unmap_code_slot(oldest, self._code_slots.pop(oldest))
            # Mapped writable, written, then made executable: writing a read-only region makes
            # Unicorn rebuild its memory map twice (writable and back), this once.
            self.uc.mem_map(address, len(data), PERM_R | PERM_W)
            mem_write(self.uc, address, data)
            mem_protect(self.uc, address, len(data), PERM_R | PERM_X)
        else:
            if self._active_code != address:
                mem_protect(self.uc, address, len(data), PERM_R | PERM_X)
            if held != data:                      # another object's code in this slot
                mem_write(self.uc, address, data)
                self.drop_translations(address, changed_ranges(held, data))
        self._code_slots[address] = data
        self._active_code = address

    def _unmap_code_slot(self, address: int, held: bytes) -> None:
        """Unmap a code slot; its translations go too, and count toward the next flush."""
        self.drop_translations(address, [(0, len(held))])
        self.uc.mem_unmap(address, len(held))
        if self._active_code == address:
            self._active_code = None

    def _enter_rodata_slot(self, segment: Segment) -> None:
        address, data = segment.address, segment.data
        active = self._active_rodata
        if active is not None and active.address != address:
            active.protect(self.uc, UC_PROT_NONE)
        held = self._rodata_slots.pop(address, None)      # entered again: now the most recently used
        if held is not None and held[0].size != len(data):
            held[0].unmap(self.uc)
            held = None
        if held is None:
            while len(self._rodata_slots) >= MAX_HELD_SLOTS:
                self._rodata_slots.pop(next(iter(self._rodata_slots)))[0].unmap(self.uc)
            region = HostBacked(self.uc, address, len(data), PERM_R)
            region.view[:] = data
        else:
            region = held[0]
            if region is not active:
                region.protect(self.uc, PERM_R)
            if held[1] != data:                   # another object's read-only data in this slot
                region.view[:] = data
        self._rodata_slots[address] = (region, data)
        self._active_rodata = region
