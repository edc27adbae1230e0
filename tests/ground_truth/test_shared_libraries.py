"""Ground truth for shared libraries: emu's loaders of every export of every `.so` fixture match a native run.

tests/data/shared/ holds libraries linked from committed exports as users link them (the DSL's
`-lcute_dsl_runtime`, its static runtime; x86-64 and AArch64; several exports per library, TVM-FFI exports) and the
native traces of `dlopen`ing each under a recording CUDA runtime (tests/oracles/shared_native.py; AArch64 under
qemu-aarch64). emu runs each export's loaders as `trace` does (cuda_init, cuda_load, cuda_load_to_device for
devices 0 and 1) on the runtime the recorder presents, and the two must agree call for call
(tests/oracles/recorder_lines.py's STUBS_C comparison; the `{"runtime": ...}` plumbing behind a static-runtime
wrapper is left out, since emu answers the wrapper itself). The recorder is also rebuilt and rerun live where a
toolchain is here (CI installs both: .ci/install-toolchains.sh): it must reproduce the committed trace, and emu
must match the live run. And a library's native lines for an export equal the realworld corpus's native run of
the `.o` it was linked from: linking into a library changes nothing the loaders do.

Launches: for every realworld export in a library, the corpus's own harness (native_recorder.harness_source: the
export's header, its Kernel_Module_Load, the launch with `<prefix>.args.json`) linked with the library instead of
the object runs natively; emu's run of the same entries must match it, and it must match the `.o`'s corpus run.
"""
from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from tests import oracles
from tests.oracles import shared_native
from tests.oracles.recorder_lines import first_difference, phase_slice

ROOT = shared_native.ROOT
LIBRARIES = shared_native.LIBRARIES
EXPORTS = [(library, export) for library in LIBRARIES for export in library["exports"]]
EXPORT_IDS = [f"{library['path'].removeprefix('tests/data/shared/')}:{export['name']}" for library, export in EXPORTS]
EMU_CASES = [pytest.param(library, export, id=case) for (library, export), case in zip(EXPORTS, EXPORT_IDS)]


def _native(library: dict, export: dict, lines: list[dict]) -> list[dict]:
    runs = shared_native.by_export(lines)
    assert export["loader_prefix"] in runs, f"{library['path']}: the native run has no export {export['loader_prefix']}"
    return runs[export["loader_prefix"]]


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("library,export", EMU_CASES)
def test_emu_loaders_match_committed_native_trace(library, export):
    native = shared_native.comparable(_native(library, export, shared_native.committed_lines(library)))
    assert sum("call" in line for line in native) >= 5, f"{library['native_trace']['path']}: too few calls"
    difference = first_difference(shared_native.emu_lines(library, export), native)
    assert difference is None, (f"{library['path']} export {export['name']}: emu differs from the committed native "
                                f"run {library['native_trace']['path']}\n{difference}")


@functools.lru_cache(maxsize=None)
def _built(arch: str) -> shared_native.Built | None:
    if shared_native.toolchain(arch) is None:
        return None
    work = Path(tempfile.mkdtemp(prefix=f"shared-native-{arch}-"))
    atexit.register(shutil.rmtree, work, True)
    return shared_native.build(arch, work)


@functools.lru_cache(maxsize=None)
def _live(path: str) -> tuple:
    library = next(lib for lib in LIBRARIES if lib["path"] == path)
    built = _built(library["arch"])
    if built is None:
        return ()
    return tuple(json.dumps(line) for line in shared_native.record(library, built))


def _live_lines(library: dict) -> list[dict]:
    lines = _live(library["path"])
    if not lines:
        pytest.skip(f"no toolchain here links and runs {library['arch']} shared libraries")
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("library", LIBRARIES, ids=[lib["path"] for lib in LIBRARIES])
def test_live_native_run_reproduces_committed_trace(library):
    """The recorder rebuilt here prints exactly the committed trace: the committed traces are what it records."""
    assert _live_lines(library) == shared_native.committed_lines(library)


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("library,export", EMU_CASES)
def test_emu_loaders_match_live_native_run(library, export):
    native = shared_native.comparable(_native(library, export, _live_lines(library)))
    difference = first_difference(shared_native.emu_lines(library, export), native)
    assert difference is None, f"{library['path']} export {export['name']}: emu differs from the live native run\n{difference}"


REALWORLD = [(library, export) for library, export in EXPORTS if export["object"].startswith("tests/fixtures/realworld/")]


@pytest.mark.parametrize("library,export", REALWORLD,
                         ids=[f"{lib['path']}:{e['name']}" for lib, e in REALWORLD])
def test_library_loaders_call_what_the_object_called(library, export):
    """The native run of an export in a library (wrappers imported, or defined and calling the plain runtime and
    the driver) makes the calls the realworld corpus's native run of its `.o` made, up to module_load."""
    ours = shared_native.comparable(_native(library, export, shared_native.committed_lines(library)))
    first_load_to_device = [i for i, line in enumerate(ours) if line == {"phase": "cuda_load_to_device"}][1]
    corpus = json.loads((ROOT / (export["object"].removesuffix(".o") + ".calls.json")).read_text())
    theirs = shared_native.comparable(phase_slice(corpus, "cuda_init", "module_load"))
    assert ours[:first_load_to_device] == theirs


LAUNCHES = [(library, export) for library, export in EXPORTS if shared_native.launchable(export)]
LAUNCH_IDS = [f"{lib['path'].removeprefix('tests/data/shared/')}:{e['name']}" for lib, e in LAUNCHES]


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("library,export", LAUNCHES, ids=LAUNCH_IDS)
def test_emu_launch_matches_committed_native_run(library, export):
    """The export's own header, linked with the library, loads it (Kernel_Module_Load) and launches it with the
    realworld corpus's arguments natively; emu's run of the same entries must agree call for call."""
    native = shared_native.comparable(shared_native.committed_launches(library)[export["name"]])
    assert any(line.get("call") == "cudaLaunchKernelEx" for line in native)
    difference = first_difference(shared_native.emu_launch_lines(library, export), native)
    assert difference is None, (f"{library['path']} export {export['name']}: emu's launch differs from the committed "
                                f"native run {library['native_launches']['path']}\n{difference}")


@pytest.mark.parametrize("library,export", LAUNCHES, ids=LAUNCH_IDS)
def test_library_launch_calls_what_the_object_called(library, export):
    """Loaded and launched through the library, the export makes the realworld corpus's native run of its `.o`."""
    corpus = json.loads((ROOT / (export["object"].removesuffix(".o") + ".calls.json")).read_text())
    ours = shared_native.comparable(shared_native.committed_launches(library)[export["name"]])
    assert ours == shared_native.comparable(corpus)


@pytest.mark.parametrize("library,export", LAUNCHES, ids=LAUNCH_IDS)
def test_live_launch_reproduces_committed_run(library, export):
    """The launch harness rebuilt here prints the committed run (but `arg0_data`: 8 bytes read through the launch's
    first argument pointer, which the comparison with emu leaves out; for a TMA descriptor they are stack bytes)."""
    built = _built(library["arch"])
    if built is None:
        pytest.skip(f"no toolchain here links and runs {library['arch']} shared libraries")
    live = shared_native.record_launch(library, export, built)
    committed = shared_native.committed_launches(library)[export["name"]]
    strip = lambda lines: [{k: v for k, v in line.items() if k != "arg0_data"} for line in lines]  # noqa: E731
    assert strip(live) == strip(committed)


def test_every_library_and_export_is_traced():
    """Every library on disk is in the manifest with a committed trace holding each of its exports."""
    on_disk = {str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "data" / "shared").glob("*/*.so")}
    assert on_disk == {lib["path"] for lib in LIBRARIES}
    assert {lib["arch"] for lib in LIBRARIES} == {"x86_64", "aarch64"}
    for library in LIBRARIES:
        runs = shared_native.by_export(shared_native.committed_lines(library))
        assert sorted(runs) == sorted(e["loader_prefix"] for e in library["exports"]), library["path"]
        assert all(line.get("return") != -1 for lines in runs.values() for line in lines)


def test_a_changed_native_line_is_a_difference():
    """The comparison can fail: one changed value in a static-runtime library's native trace is reported with its
    line, and the plumbing lines left out are only the `runtime` ones."""
    library = next(lib for lib in LIBRARIES if lib["path"].endswith("x86_64/export_add_one.static.so"))
    lines = _native(library, library["exports"][0], shared_native.committed_lines(library))
    native = shared_native.comparable(lines)
    assert len(native) == len(lines) - sum("runtime" in line for line in lines) > 0
    setter = next(i for i, line in enumerate(native) if line.get("attribute") == 8)
    changed = native[:setter] + [{**native[setter], "value": native[setter]["value"] - 1}] + native[setter + 1:]
    difference = first_difference(changed, native)
    assert difference is not None and difference.startswith(f"line {setter}:"), difference
