"""The launch ABIs by name, and the CuTe DSL's `_mlir_..._ciface_` ABI marshalling a known signature.

`void *args[]` holds one pointer per slot, each to its value written as the header lays it out (an
array's elements each in a slot of their own), the last to the int32 the entry stores its result in;
the entry's registers are the array and its length.  Fake host memory records what is written.
"""
from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest

from emu.abi import REGISTRY, launch_abi
from emu.abi.base import EntryArguments, LaunchAbi, LaunchPlan
from emu.abi.ciface import CIFACE, CifaceAbi
from emu.dsl.launch.signature import LaunchParam, LaunchSignature

SIGNATURE = LaunchSignature("header", (
    LaunchParam("n", "scalar", ctype="int32_t"),
    LaunchParam("alpha", "scalar", ctype="float"),
    LaunchParam("dims", "array", ctype="int32_t", count=2),
    LaunchParam("stream", "stream"),
), (("n", "value", 0), ("alpha", "value", 0), ("dims", "element", 0), ("dims", "element", 1), ("stream", "value", 0),
    ("ret", "ret", 0)))
VALUES = {"n": -3, "alpha": 0.5, "dims": [7, 9], "stream": 0x5000}
PLAN = LaunchPlan(SIGNATURE, VALUES, {"signature": "header"})


class FakeMemory:
    """Host scratch memory as a bytearray at a made-up base."""

    BASE = 0x10000

    def __init__(self):
        self.data, self.cursor = bytearray(0x1000), self.BASE + 0x40      # the words below the cursor: reserved

    def alloc(self, data: bytes, align: int = 16) -> int:
        address = (self.cursor + align - 1) & ~(align - 1)
        self.write(address, data)
        self.cursor = address + len(data)
        return address

    def write(self, address: int, data: bytes) -> None:
        self.data[address - self.BASE:address - self.BASE + len(data)] = data

    def read(self, address: int, size: int) -> bytes:
        return bytes(self.data[address - self.BASE:address - self.BASE + size])


def test_every_registered_abi_is_found_by_its_name():
    assert launch_abi("ciface") is CIFACE and isinstance(CIFACE, LaunchAbi)
    assert all(launch_abi(name).name == name for name in REGISTRY)
    with pytest.raises(KeyError):
        launch_abi("dlpack_capsule")               # not an ABI emu knows


def test_ciface_writes_each_value_behind_its_pointer_and_the_ret_slot_last():
    memory, ret_slot = FakeMemory(), FakeMemory.BASE + 0x10
    arguments = CIFACE.marshal(PLAN, memory, ret_slot)
    array, count = arguments.registers
    assert count == 6 and arguments.shown == {"num_args": 6} and arguments.outcome_at == ret_slot
    pointers = struct.unpack("<6Q", memory.read(array, 48))
    assert memory.read(pointers[0], 8) == struct.pack("<i", -3) + bytes(4)          # a scalar in an 8-byte block
    assert memory.read(pointers[1], 4) == struct.pack("<f", 0.5)
    assert memory.read(pointers[2], 8) == struct.pack("<ii", 7, 9) and pointers[3] == pointers[2] + 4    # &dims[1]
    assert memory.read(pointers[4], 8) == struct.pack("<Q", 0x5000)
    assert pointers[5] == ret_slot and memory.read(ret_slot, 4) == struct.pack("<i", -1)   # -1 until the entry stores


def test_ciface_reads_the_outcome_from_the_ret_slot_not_the_return_register():
    memory, ret_slot = FakeMemory(), FakeMemory.BASE + 0x10
    arguments = EntryArguments([0, 0], {}, ret_slot)
    memory.write(ret_slot, struct.pack("<i", -7))
    assert CIFACE.outcome(memory, arguments, returned=0x1234) == -7


def test_run_calls_the_launch_entry_with_the_marshalled_registers_and_reads_the_outcome():
    class Planned(CifaceAbi):                   # the plan is the DSL's (emu.dsl.launch.plan): given here
        def plan(self, site, given):
            assert site.image is session.image and site.path == "x.o" and given == {"n": -3}
            return PLAN

    memory = FakeMemory()
    session = SimpleNamespace(machine=SimpleNamespace(host=memory), ret_slot=FakeMemory.BASE + 0x10, image=object())
    seen = {}

    def call(entry, registers, shown, launch=None, read_outcome=None):
        memory.write(session.ret_slot, struct.pack("<i", 42))          # what the entry stores
        seen.update(entry=entry, registers=registers, shown=shown, launch=launch, outcome=read_outcome(0))
        return True

    assert Planned().run(call, session, SimpleNamespace(prefix="p"), "x.o", {"n": -3})
    assert seen["entry"] == "launch" and seen["registers"][1] == 6 and seen["shown"] == {"num_args": 6}
    assert seen["launch"] == {"signature": "header"} and seen["outcome"] == 42


def test_an_export_without_a_launch_wrapper_is_refused_before_anything_is_written():
    from emu.abi.base import LaunchSite
    from emu.errors import ObjectFormatError

    with pytest.raises(ObjectFormatError) as refused:
        CIFACE.plan(LaunchSite("x.o", SimpleNamespace(launch_function=None, prefix="p"), None, None), None)
    assert (refused.value.message, refused.value.path) == ("the export has no launch wrapper (_mlir_p__mlir_ciface_*)", "x.o")
