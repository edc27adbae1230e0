"""Objects whose code shares one content-chosen slot still each run their own code.

The machine keeps every object's code mapped at a slot chosen by its hash (emu.layout),
so that objects alternating in one emulator keep their translated code.  Two objects can
hash to one slot; then loading one rewrites the other's code there, and Unicorn must not
run a translation made from the other's bytes.  carveout_25 (one kernel) and
two_kernels_carveout_50 (two) differ in their loaders' code: a stale translation would run
one object's calls for the other.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from emu import images
from emu.entries import EntrySpec
from emu.layout import build_image
from emu.objfile import parse_object, read_object_bytes
from emu.export import describe_export
from emu.run import run_object

FIXTURES = Path(__file__).parent.parent / "fixtures" / "cutlass-dsl-4.8.0"
LOADERS = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]


def _calls(run) -> list[tuple]:
    return [(call.entry, call.symbol, call.args, call.outputs, call.ret, call.caller) for call in run.calls]


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_objects_sharing_a_code_slot_run_their_own_code(arch, tmp_path):
    first, second = FIXTURES / arch / "carveout_25.o", FIXTURES / arch / "two_kernels_carveout_50.o"
    copy = tmp_path / "two_kernels_carveout_50.o"
    shutil.copyfile(second, copy)
    raw = read_object_bytes(str(copy), copy.stat().st_size)
    expected = {path: _calls(run_object(str(path), entries=LOADERS)) for path in (first, second)}
    assert expected[first] != expected[second]
    first_image, _ = images.load_image(str(first))
    # two_kernels_carveout_50 parsed under carveout_25's digest: laid out in carveout_25's code slot
    obj = parse_object(raw, str(copy), first_image.obj.sha256)
    image = build_image(obj)
    if "vector_sites" in first_image.extras:
        image.extras["vector_sites"] = first_image.extras["vector_sites"]
    code = {s.perms: s for s in image.segments}[5]
    assert code.address == {s.perms: s for s in first_image.segments}[5].address
    assert code.data != {s.perms: s for s in first_image.segments}[5].data
    stat = copy.stat()
    images._CACHE[(str(copy), stat.st_size, stat.st_mtime_ns)] = (image, describe_export(obj, image))
    try:
        for _ in range(3):
            assert _calls(run_object(str(first), entries=LOADERS)) == expected[first]
            assert _calls(run_object(str(copy), entries=LOADERS)) == expected[second]
    finally:
        images._CACHE.pop((str(copy), stat.st_size, stat.st_mtime_ns), None)
