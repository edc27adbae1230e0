"""Shared libraries linked from committed real-world exports (tests/binary/shared_build.py) load as `ld.so`
lays them out, and every export's run is the run of the `.o` it was linked from, call for call.

The `.o` is copied alone into the test's folder, so both sides take the launch's arguments from the same
place (args_spec and the launch code, no header beside either).  Calls are compared whole (entry, symbol,
arguments, outputs, result, the caller as function+offset); the one address that differs by layout, the
export's GPU binary handed to `_cudaLibraryLoadData`, is compared as "this export's GPU binary" and its
bytes.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from emu import api
from emu.binary.elf.shared import LIBRARY_BASE
from emu.binary.image import PERM_R, PERM_W, PERM_X
from emu.cache.loaded import load_image
from emu.errors import UnknownFormatWarning
from tests.binary.shared_build import EXPORTS, REALWORLD, ROOT, link, runtime_folder

BOTH = ["x86_64", "aarch64"]
FORMS = [("x86_64", "dynamic"), ("x86_64", "static"), ("aarch64", "dynamic")]


def _calls(path, export: str, named: bool = True) -> tuple[list, list]:
    """The run's entries and calls, each address inside the binary replaced by what lies there: the export's
    GPU binary (and its header's bytes), else the data symbol holding it (`named`) or just "in the binary"."""
    image, exports = load_image(str(path))
    binary = next(e.binary for e in exports if e.name == export)
    header = image.read(binary, 16)
    run = api.trace(path, export=export if len(exports) > 1 else None)
    calls = []
    for call in run.calls:
        args = {name: ("export's GPU binary", header) if value == binary else _where(image, value, named)
                for name, value in call.args.items()}
        calls.append((call.entry, call.symbol, args, call.outputs, call.ret, call.caller))
    return [(entry.entry, entry.function, entry.args, entry.returned, entry.fault and entry.fault.kind, entry.launch)
            for entry in run.entries], calls


def _where(image, value, named: bool):
    """An argument that points into the binary (an out-parameter in the export's data), as the symbol it
    points into: its address depends on the layout, the symbol does not."""
    if not isinstance(value, int) or not any(s.address <= value < s.address + len(s.data) for s in image.segments):
        return value
    if named:
        for name in image.data_symbols:                    # sized symbols only: not AArch64's $d, $x markers
            for address in image.addresses(name):          # a local each export of a library defines
                if address <= value < address + image.sizes.get(name, 0):
                    return ("in the binary", name, value - address)
    return ("in the binary",)


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shared")
    return {(arch, runtime): link(folder / f"{arch}_{runtime}.so", arch, runtime=runtime) for arch, runtime in FORMS}


@pytest.mark.parametrize("arch, runtime", FORMS)
@pytest.mark.parametrize("export", EXPORTS)
def test_every_export_of_a_library_runs_as_the_object_it_was_linked_from(libraries, tmp_path, arch, runtime, export):
    alone = tmp_path / f"{export}.o"
    shutil.copy(REALWORLD / arch / f"{export}.o", alone)
    library_entries, library_calls = _calls(libraries[arch, runtime], export)
    object_entries, object_calls = _calls(alone, export)
    assert library_entries == object_entries
    assert library_calls == object_calls
    assert any(symbol == "_cudaLibraryLoadData" for _, symbol, *_ in library_calls)


@pytest.mark.parametrize("arch, runtime", FORMS)
def test_a_library_lists_every_export_it_was_linked_from(libraries, arch, runtime):
    image, exports = load_image(str(libraries[arch, runtime]))
    assert image.format == "elf-shared" and image.arch == arch
    assert [e.name for e in exports] == sorted(EXPORTS)
    assert len({e.binary for e in exports}) == 3 and all(e.binary is not None for e in exports)
    records = api.check([str(libraries[arch, runtime])]).objects
    assert sorted(record.prefix for record in records) == sorted(EXPORTS) and not any(r.error for r in records)


def test_the_static_runtime_wrappers_are_answered_at_their_entries_and_the_real_runtime_is_never_reached(libraries):
    image, _ = load_image(str(libraries["x86_64", "static"]))
    assert "_cudaFuncSetAttribute" in image.functions            # the wrapper is the library's own...
    assert "cudaFuncSetAttribute" in image.stub_symbols          # ...and calls the real runtime through the PLT
    run = api.trace(libraries["x86_64", "static"], export="cooperative")
    symbols = {call.symbol for call in run.calls}
    assert "_cudaFuncSetAttribute" in symbols
    assert not {symbol for symbol in symbols if symbol.startswith("cuda")}     # no real runtime call is made


@pytest.mark.parametrize("arch", BOTH)
def test_segments_keep_their_offsets_and_permissions_and_relro_is_read_only(libraries, arch):
    path = libraries[arch, "dynamic"]
    image, _ = load_image(str(path))
    headers = subprocess.run(["readelf", "-lW", str(path)], capture_output=True, text=True, check=True).stdout
    loads = [line.split() for line in headers.splitlines() if line.strip().startswith("LOAD")]
    for load in loads:
        vaddr, memsz, flags = int(load[2], 16), int(load[5], 16), "".join(load[6:-1])
        start, end = LIBRARY_BASE + vaddr, LIBRARY_BASE + vaddr + memsz
        covering = [s for s in image.segments if s.address < end and start < s.address + len(s.data)]
        assert covering and all(s.perms & PERM_X for s in covering) == ("E" in flags)
        assert any(s.perms & PERM_W for s in covering) == ("W" in flags)
    relro = next(line.split() for line in headers.splitlines() if line.strip().startswith("GNU_RELRO"))
    got = LIBRARY_BASE + int(relro[2], 16)
    assert next(s for s in image.segments if s.address <= got < s.address + len(s.data)).perms == PERM_R
    with open(path, "rb") as handle:        # the file's bytes at their address, where nothing relocates them
        raw = handle.read()
    text = image.functions["cooperative_cuda_init"]
    offset = text - LIBRARY_BASE            # every PT_LOAD of these libraries maps offset == vaddr in its first page
    code = next(s for s in image.segments if s.perms & PERM_X)
    assert image.read(text, 4) == raw[_file_offset(loads, offset):][:4] and code.address <= text


def _file_offset(loads: list[list[str]], vaddr: int) -> int:
    for load in loads:
        start, offset, size = int(load[2], 16), int(load[1], 16), int(load[4], 16)
        if start <= vaddr < start + size:
            return offset + vaddr - start
    raise AssertionError(f"{vaddr:#x} is in no segment")


def test_a_stripped_library_finds_each_gpu_binary_by_its_fatbin_header(libraries, tmp_path):
    stripped = tmp_path / "stripped.so"
    subprocess.run(["strip", "-o", str(stripped), str(libraries["x86_64", "static"])], check=True)
    full, full_exports = load_image(str(libraries["x86_64", "static"]))
    image, exports = load_image(str(stripped))
    assert image.extras["library"]["symbol_table"] == ".dynsym" and "kernels_binary" not in image.data_symbols
    assert [(e.name, e.binary) for e in exports] == [(e.name, e.binary) for e in full_exports]
    assert _calls(stripped, "dynamic_smem", named=False) == _calls(libraries["x86_64", "static"], "dynamic_smem", named=False)
    shown, full_shown = api.inspect(stripped, export="cooperative"), api.inspect(libraries["x86_64", "static"], export="cooperative")
    assert shown.library.symbol_table == ".dynsym" and shown.binary.symbol.startswith("fatbin at 0x")
    assert shown.binary.fatbin == full_shown.binary.fatbin and full_shown.binary.symbol == "kernels_binary"


@pytest.mark.parametrize("arch", BOTH)
def test_what_dlopen_would_run_is_reported_not_run(libraries, arch):
    image, _ = load_image(str(libraries[arch, "dynamic"]))
    found = {(entry["entry"], entry["function"]) for entry in image.extras["library"]["initializers"]}
    assert found == {("DT_INIT", "_init"), ("DT_INIT_ARRAY[0]", "frame_dummy"), ("DT_FINI", "_fini"),
                     ("DT_FINI_ARRAY[0]", "__do_global_dtors_aux")}
    assert not any(entry["run"] for entry in image.extras["library"]["initializers"])
    result = api.inspect(libraries[arch, "dynamic"], export="cooperative")
    assert result.library.initializers[0].reason.startswith("not run")


def test_a_wrapper_nothing_models_runs_its_own_code_and_its_real_runtime_call_is_a_missing_stub(tmp_path):
    """A wrapper of the static runtime that no stub models (`_cudaGetLastError`, the one of 4.8's) is not intercepted: its own
    code runs and calls the real runtime through the PLT, and that call stops the entry as a missing stub,
    never a made-up success."""
    source = tmp_path / "graph.c"
    source.write_text("int _cudaGetLastError(void);\n"
                      "int graph_cuda_init(void **library) { return _cudaGetLastError(); }\n"
                      "int graph_cuda_load(void **library) { return 0; }\n")
    obj = tmp_path / "graph.o"
    subprocess.run(["cc", "-c", "-fPIC", "-o", str(obj), str(source)], check=True)
    library = tmp_path / "graph.so"
    subprocess.run(["cc", "-shared", "-o", str(library), str(obj),
                    str(runtime_folder() / "libcuda_dialect_runtime_static.a")], check=True)
    image, _ = load_image(str(library))
    assert "_cudaGetLastError" in image.functions and "cudaGetLastError" in image.stub_symbols
    with pytest.warns(UnknownFormatWarning):
        run = api.trace(library, entries=["cuda_init"])
    assert run.entries[0].fault.kind == "missing_stub" and "cudaGetLastError" in run.entries[0].fault.message
    assert run.entries[0].returned is None


@pytest.mark.parametrize("arch, runtime", FORMS)
def test_a_scenario_selects_an_export_of_a_library(libraries, tmp_path, arch, runtime):
    scenario = tmp_path / "library.yaml"
    scenario.write_text(f"""objects:
  - path: {libraries[arch, runtime]}
    export: cooperative
    expect:
      calls_in_order:
        - {{symbol: _cudaFuncSetAttribute, entry: cuda_load, args: {{attr: NON_PORTABLE_CLUSTER_SIZE_ALLOWED, value: 1}}}}
        - {{symbol: _cudaKernelSetAttributeForDevice, entry: cuda_load_to_device, args: {{attr: NON_PORTABLE_CLUSTER_SIZE_ALLOWED, value: 1, device: 0}}}}
entries: [cuda_init, cuda_load, {{cuda_load_to_device: {{device: 0}}}}]
""")
    result = api.run_scenario(scenario)
    assert result.passed, result


def _committed_exports() -> list[tuple[str, str, str]]:
    """(library, export, the .o it was linked from) of every CuTe-ABI library in tests/data/shared (MANIFEST.json):
    both architectures, both runtimes (the AArch64 static archive included), several exports per library."""
    manifest = json.loads((ROOT / "tests" / "data" / "shared" / "MANIFEST.json").read_text())
    return [(library["path"], export["name"], export["object"]) for library in manifest["libraries"]
            if library["abi"] == "cute" for export in library["exports"]]


@pytest.mark.parametrize("library, export, source", _committed_exports())
def test_every_export_of_a_committed_library_runs_as_its_object(tmp_path, library, export, source):
    alone = tmp_path / Path(source).name
    shutil.copy(ROOT / source, alone)
    assert _calls(ROOT / library, export) == _calls(alone, export)


def test_a_library_read_back_from_the_image_store_is_the_one_built(libraries):
    from emu.cache import image_store, loaded

    path = str(libraries["aarch64", "dynamic"])
    built, built_exports = load_image(path)
    loaded._CACHE.clear()
    stored = image_store.load(built.sha256, path)
    assert stored is not None
    image, exports = stored
    assert (image.format, image.arch, image.extras["library"]) == ("elf-shared", "aarch64", built.extras["library"])
    assert [(s.address, s.data, s.perms) for s in image.segments] == [(s.address, s.data, s.perms) for s in built.segments]
    assert exports == built_exports and image.duplicates == built.duplicates
    assert image.obj.symbol("cooperative_cuda_init").value == built.obj.symbol("cooperative_cuda_init").value
