"""Every export of a binary: an object linked from three exports (tests/data/multi_export, `ld -r`) is
found whole, each export with its own GPU binary, and runs, traces, checks and inspects like the object it
came from."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from emu.binary.elf.reader import load_object
from emu.binary.image import PERM_W
from emu.cache.loaded import load_image
from emu.commands.check import check_file, check_object
from emu.dsl.entries import EntrySpec
from emu.dsl.exports import BINARY_SYMBOL, discover
from emu.errors import BadInput
from emu.run.session import run_object

MULTI = ROOT / "tests" / "data" / "multi_export"
MANIFEST = json.loads((MULTI / "MANIFEST.json").read_text())
ARCHES = sorted(MANIFEST)
LOADERS = [EntrySpec(name="cuda_init"), EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device", device=0),
           EntrySpec(name="cuda_load_to_device", device=1)]


def combined(arch: str) -> str:
    return str(ROOT / MANIFEST[arch]["object"])


def sources(arch: str) -> dict[str, str]:
    """prefix -> the object it was linked from (each fixture's prefix is its file name)."""
    return {Path(p).stem: str(ROOT / p) for p in MANIFEST[arch]["inputs"]}


@pytest.mark.parametrize("arch", ARCHES)
def test_every_export_is_found_with_its_own_gpu_binary(arch):
    image, exports = load_image(combined(arch))
    assert [e.name for e in exports] == sorted(sources(arch))
    assert len({e.binary for e in exports}) == len(exports)
    for export in exports:
        source_image, (alone,) = load_image(sources(arch)[export.name])
        assert export.kernels == alone.kernels and export.kernel_info == alone.kernel_info
        source = load_object(sources(arch)[export.name])
        binary = source.symbol_bytes(source.symbol(BINARY_SYMBOL))
        laid_out = image.read(export.binary, 16)                   # the fatbin header, as laid out
        assert laid_out == binary[:16] and source_image.read(alone.binary, 16) == laid_out


def _calls(run, image, binary: int) -> list[tuple]:
    """The run's calls, with the addresses the two objects lay out differently named: the GPU binary cuda_init
    loads (the export's own?) and the kernel slot each lookup writes (inside the binary's writable data?)."""
    writable = [(s.address, s.address + len(s.data)) for s in image.segments if s.perms & PERM_W]

    def args(call):
        if call.symbol == "_cudaLibraryLoadData":
            return {**call.args, "code": "the export's binary" if call.args["code"] == binary else call.args["code"]}
        if call.symbol == "_cudaLibraryGetKernel":
            inside = any(start <= call.args["pKernel"] < end for start, end in writable)
            return {**call.args, "pKernel": "a slot of the object" if inside else call.args["pKernel"]}
        return call.args
    return [(c.entry, c.symbol, args(c), c.outputs, c.ret, c.caller) for c in run.calls]


@pytest.mark.parametrize("arch", ARCHES)
def test_each_export_runs_like_the_object_it_came_from(arch):
    """Call for call, and each export's cuda_init loads the GPU binary discovery paired it with."""
    image, found = load_image(combined(arch))
    exports = {e.name: e for e in found}
    for name, source in sources(arch).items():
        mine = run_object(combined(arch), entries=LOADERS, export=name)
        alone = run_object(source, entries=LOADERS)
        assert mine.export == mine.prefix == name
        assert next(c for c in mine.calls if c.symbol == "_cudaLibraryLoadData").args["code"] == exports[name].binary
        source_image, (source_export,) = load_image(source)
        assert _calls(mine, image, exports[name].binary) == _calls(alone, source_image, source_export.binary)
        assert [e.returned for e in mine.entries] == [e.returned for e in alone.entries]
        assert mine.state == alone.state


@pytest.mark.parametrize("arch", ARCHES)
def test_check_reports_every_export(arch):
    results = check_file(combined(arch), device_count=2)
    assert [r.prefix for r in results] == sorted(sources(arch))
    for result in results:
        alone = check_object(sources(arch)[result.prefix], device_count=2, key=result.key)   # the same ids under that name
        assert result.model_dump(exclude={"object"}) == alone.model_dump(exclude={"object"})


def test_an_export_must_be_named_where_there_are_several():
    with pytest.raises(BadInput, match=r"holds 3 exports \(carveout_25, sm100a_carveout_25, two_kernels\): name one"):
        run_object(combined("x86_64"), entries=LOADERS)
    with pytest.raises(BadInput, match=r"no export 'nosuch' in the object \(its exports: carveout_25, "):
        run_object(combined("x86_64"), entries=LOADERS, export="nosuch")


def test_inspect_pairs_the_binaries_as_the_loader_does():
    import emu
    for name, source in sources("x86_64").items():
        mine = emu.inspect(combined("x86_64"), export=name)
        alone = emu.inspect(source)
        assert mine.binary == alone.binary and mine.kernels == alone.kernels and mine.prefix == name


def test_the_command_line_covers_every_export(cli):
    trace = cli("trace", "--json", "--devices", "2", combined("x86_64"))
    runs = trace.json()
    assert [r["export"] for r in runs] == sorted(sources("x86_64"))
    assert trace.code == 0, trace.err
    inspected = cli("inspect", "--json", combined("x86_64")).json()
    assert [r["prefix"] for r in inspected] == sorted(sources("x86_64"))
    checked = cli("check", combined("x86_64"))
    assert "3 exports in 1 objects" in checked.out


def test_discovery_refuses_to_guess_a_binary(tmp_path):
    """Two exports and one GPU binary: which one loads it cannot be told, so it is refused, not guessed."""
    obj = load_object(combined("x86_64"))
    from emu.binary.elf.relocatable import build_image
    image = build_image(obj)
    image.duplicates.pop(BINARY_SYMBOL)                # as if the exports shared one binary
    from emu.errors import ObjectFormatError
    with pytest.raises(ObjectFormatError, match=r"3 exports \(carveout_25, sm100a_carveout_25, two_kernels\) but 1 "
                                                r"kernels_binary symbols: emu cannot tell which GPU binary each export loads"):
        discover(obj, image)


def test_a_scenario_picks_one_export_by_name(tmp_path, cli):
    scenario = tmp_path / "pick.yaml"
    scenario.write_text(f"objects:\n  - path: {combined('x86_64')}\n    export: sm100a_carveout_25\n"
                        "runtime: {profile: h200}\nexpect:\n  returns: {cuda_init: 0, cuda_load: 209}\n")
    result = cli("run", "--json", str(scenario))
    assert result.code == 0, result.out + result.err
    run, = result.json()["scenarios"][0]["runs"]
    assert run["export"] == "sm100a_carveout_25"          # the sm_100a binary: an H200 cannot run it
    unnamed = tmp_path / "unnamed.yaml"
    unnamed.write_text(f"objects: [{combined('x86_64')}]\n")
    result = cli("run", str(unnamed))
    assert result.code == 2 and "holds 3 exports (carveout_25, sm100a_carveout_25, two_kernels): name one" in result.err
