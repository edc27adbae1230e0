"""The in-process figures of the speed goals that bench.py adds to its own, each beside its floor, interleaved.

  check_against_floor:  `check` of objects read from the image store and translated afresh, per object,
                        against its floor: the idle run translated afresh + the store read + the real stub
                        calls' share above the idle ones (goal 3);
  shared_library_row:   a shared library's loaders against the `.o` it was linked from (goal 5): each run
                        5 times over, and each run in turn with objects (its .o, the library, another .o
                        of its architecture: a switch of binary every run, as `check DIR` and a matrix
                        meet them), and the libraries in turn with each other;
  tvm_ffi_row:          a TVM-FFI entry call against the `.o` CuTe-ABI path (loaders + launch) (goal 5).
A form this emu does not run yet gives {"not_measured": why} (emu's own error), never a figure.
The shared-library row alone: `PYTHONPATH=. python benchmarks/goals.py [--repeat N] [--json]`.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import statistics
import subprocess
import time

from floors import _forget_code, _idle_stub, _IDLE_CALLS  # noqa: F401  (the floors' own idle stub)
from harness import ROOT
from emu.cache import loaded as images
from emu.emulator.machine import Machine
from emu.errors import EmuError
from emu.run.session import run_object

SHARED_FIXTURES = os.path.join(ROOT, "tests", "data", "shared")
TVM_FFI_FIXTURES = os.path.join(ROOT, "tests", "fixtures", "tvm_ffi")


def _forget(path: str) -> None:
    """As `check DIR`'s next object finds it: not in the process's image cache, its code never translated."""
    _forget_code(path)
    for key in [key for key in images._CACHE if key[0] == os.path.abspath(path)]:
        del images._CACHE[key]


def _timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _check_runs(paths: list[str]) -> dict[str, tuple]:
    """Each object's run as `check` makes it: its profile (the one whose device runs its GPU binary), that
    profile's device count, and the loaders for every device (emu.commands.check.check_object)."""
    from emu.commands.check import default_device_count
    from emu.cuda.config import RuntimeConfig
    from emu.cuda.object_profile import pick_profile
    from emu.dsl.entries import loaders_for_devices
    runs = {}
    for path in paths:
        image, (export, *_) = images.load_image(path)
        profile, _ = pick_profile(image, export, None)
        count = default_device_count(profile)
        runs[path] = (RuntimeConfig(device_count=count, profile=profile), list(loaders_for_devices(count)))
    return runs


def check_against_floor(paths: list[str], repeat: int) -> dict:
    """Per round, each step over every object in turn, as `check DIR` meets them (a switch of object each
    time): `check_objects` of the objects, each forgotten first; then its floor's parts, each run as `check`
    makes it (its profile, every device's loaders): the store read (file read, hash, store load) of each
    forgotten object, the idle run of each with its code translated afresh, and the real warm run less the
    idle warm run (the stub calls' share).  Milliseconds per object; ratios per round."""
    from emu.commands.check import check_objects
    check_objects(paths)                                   # warm-up: imports, emulators, the store filled
    runs = _check_runs(paths)
    real_stub = Machine._on_stub

    def each(step) -> float:
        return _timed(lambda: [step(path) for path in paths]) / len(paths) * 1e3

    def idle(step) -> float:
        Machine._on_stub = _idle_stub
        try:
            return each(step)
        finally:
            Machine._on_stub = real_stub

    rounds = []
    for _ in range(repeat + 1):                            # the first round warms up and is not counted
        for path in paths:
            _forget(path)
        check_ms = _timed(lambda: check_objects(paths)) / len(paths) * 1e3
        for path in paths:
            _forget(path)
        store_read = each(images.load_image)
        for path in paths:
            _forget_code(path)
        translated = idle(lambda path: run_object(path, *runs[path]))
        warm = each(lambda path: run_object(path, *runs[path]))
        stub_share = max(warm - idle(lambda path: run_object(path, *runs[path])), 0.0)
        floor_ms = translated + store_read + stub_share
        rounds.append({"check_ms": check_ms, "floor_ms": floor_ms, "ratio": check_ms / floor_ms, "translated": translated,
                       "store_read": store_read, "stub_share": stub_share})
    return _rounds(rounds[1:])


def _rounds(rounds: list[dict]) -> dict:
    """Medians over rounds, with each round's ratio kept for the spread."""
    figures = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    figures["ratios"] = [r["ratio"] for r in rounds]
    figures["rounds"] = rounds
    return figures


def _in_turn(forms: list[str], references: list[str], form_entries: list, reference_entries: list, repeat: int) -> dict:
    """The forms' runs against the references', both warm (parsed once, translated), per round: every form
    object run in turn (a switch of object each run, as a matrix meets them), then every reference in turn,
    then each object of both kinds run 5 times over (no switch).  Ratios of the rounds' medians."""
    def turn(paths: list[str], entries: list) -> list[float]:
        return [_timed(lambda: run_object(path, entries=entries)) for path in paths]

    def repeated(paths: list[str], entries: list) -> list[float]:
        return [_timed(lambda: run_object(path, entries=entries)) for path in paths for _ in range(5)]

    for _ in range(3):
        turn(forms, form_entries), turn(references, reference_entries)
    ratios, same, form_ms, reference_ms = [], [], [], []
    for _ in range(repeat):
        form, ref = turn(forms, form_entries) + turn(forms, form_entries), turn(references, reference_entries) + turn(references, reference_entries)
        ratios.append(statistics.median(form) / statistics.median(ref))
        form, ref = repeated(forms, form_entries), repeated(references, reference_entries)
        same.append(statistics.median(form) / statistics.median(ref))
        form_ms += form
        reference_ms += ref
    return {"ratio": statistics.median(ratios), "ratios": ratios, "same_object_ratio": statistics.median(same), "same_object_ratios": same,
            "same_object_ms": (statistics.median(form_ms) * 1e3, statistics.median(reference_ms) * 1e3)}


def _not_run(path: str, entries: list) -> str | None:
    """Why this emu does not run `entries` of `path` (its own error, first line), or None if it does."""
    try:
        run = run_object(path, entries=entries)
    except (EmuError, ValueError) as error:
        return f"{type(error).__name__}: {str(error).splitlines()[0]}"
    stopped = [entry for entry in run.entries if entry.returned is None or entry.fault is not None]
    if stopped:
        return f"entry {stopped[0].entry} did not run to the end ({stopped[0].fault.message if stopped[0].fault else 'no return'})"
    return None


def _runnable(pairs: list[tuple[str, str]], entries: list) -> tuple[list[tuple[str, str]], list[str]]:
    """The pairs whose form object this emu runs `entries` of, and why each other one is not run."""
    kept, refused = [], []
    for form, reference in pairs:
        why = _not_run(form, entries)
        if why:
            refused.append(why)
        else:
            kept.append((form, reference))
    return kept, refused


def _pairs_row(pairs: list[tuple[str, str]], form_entries: list, reference_entries: list, repeat: int, how: str) -> dict:
    """The form objects against their references (_in_turn); objects this emu does not run are left out
    and counted, with the first reason."""
    kept, refused = _runnable(pairs, form_entries)
    if not kept:
        return {"not_measured": refused[0] if refused else "nothing to measure", "how": how}
    forms, references = [form for form, _ in kept], sorted({reference for _, reference in kept})
    return {**_in_turn(forms, references, form_entries, reference_entries, repeat), "objects": len(kept),
            "refused": refused, "how": how}


def _manifest_pairs() -> list[tuple[str, str]]:
    """(library, the one .o it was linked from) for every CuTe-ABI library tests/data/shared/MANIFEST.json lists."""
    manifest = os.path.join(SHARED_FIXTURES, "MANIFEST.json")
    if not os.path.isfile(manifest):
        return []
    with open(manifest) as handle:
        libraries = json.load(handle).get("libraries", [])
    pairs = []
    for library in libraries:
        inputs = [os.path.join(ROOT, path) for path in library.get("inputs", {}) if path.endswith(".o")]
        path = os.path.join(ROOT, library["path"])
        if library.get("abi") == "cute" and len(inputs) == 1 and os.path.isfile(path) and os.path.isfile(inputs[0]):
            pairs.append((path, inputs[0]))
    return pairs


def _filler(reference: str, entries: list) -> str | None:
    """Another object of `reference`'s folder (so of its architecture) that runs `entries`: what a library's
    in-turn runs switch to between its own and its .o's."""
    for path in sorted(glob.glob(os.path.join(os.path.dirname(reference), "*.o"))):
        if os.path.abspath(path) != os.path.abspath(reference) and _not_run(path, entries) is None:
            return path
    return None


def _between_objects(pairs: list[tuple[str, str]], entries: list, repeat: int) -> dict:
    """Each library in turn with objects, per round 3 rotations of every pair: its .o, the library, another object
    of its architecture (_filler), each run timed; so every run of both sides follows a switch of binary.
    Per round the median library run over the median .o run; milliseconds are medians over every round."""
    rotations = []
    for library, reference in pairs:
        filler = _filler(reference, entries)
        if filler is None:
            return {"not_measured": f"no other object beside {os.path.relpath(reference, ROOT)} to switch to"}
        rotations.append((reference, library, filler))

    def rotate() -> tuple[list[float], list[float]]:
        libraries, references = [], []
        for reference, library, filler in rotations:
            references.append(_timed(lambda: run_object(reference, entries=entries)))
            libraries.append(_timed(lambda: run_object(library, entries=entries)))
            run_object(filler, entries=entries)
        return libraries, references

    for _ in range(3):
        rotate()
    ratios, library_ms, reference_ms = [], [], []
    for _ in range(repeat):
        libraries, references = [], []
        for _ in range(3):
            more_libraries, more_references = rotate()
            libraries += more_libraries
            references += more_references
        ratios.append(statistics.median(libraries) / statistics.median(references))
        library_ms += libraries
        reference_ms += references
    return {"ratio": statistics.median(ratios), "ratios": ratios, "library_ms": statistics.median(library_ms) * 1e3,
            "reference_ms": statistics.median(reference_ms) * 1e3}


def _library_rows(pairs: list[tuple[str, str]], entries: list, repeat: int, how: str) -> dict:
    """_pairs_row (repeated: `same_object_*`; the libraries in turn with each other: `ratio*`) and the libraries
    in turn with objects (`between_objects`)."""
    row = _pairs_row(pairs, entries, entries, repeat, how)
    if "not_measured" not in row:
        row["between_objects"] = _between_objects(_runnable(pairs, entries)[0], entries, repeat)
    return row


def shared_library_row(reference: str, entries: list, repeat: int, folder: str) -> dict:
    """The loaders of shared libraries against the `.o` each was linked from: the CuTe-ABI libraries of
    tests/data/shared (its MANIFEST.json names each one's input), else `cc -shared` of `reference` built here."""
    pairs = _manifest_pairs()
    if pairs:
        return _library_rows(pairs, entries, repeat,
                             f"{len(pairs)} CuTe-ABI libraries of {os.path.relpath(SHARED_FIXTURES, ROOT)}, each against its .o")
    cc = shutil.which("cc")
    if cc is None:
        return {"not_measured": "no shared-library fixture and no cc to link one"}
    library = os.path.join(folder, "linked.so")
    built = subprocess.run([cc, "-shared", "-o", library, reference], capture_output=True, text=True, check=False)
    if built.returncode:
        return {"not_measured": f"cc -shared {os.path.relpath(reference, ROOT)} failed: {built.stderr.strip()[:200]}"}
    return _library_rows([(library, reference)], entries, repeat,
                         f"cc -shared of {os.path.relpath(reference, ROOT)}, against that .o")


def tvm_ffi_row(reference: str, reference_entries: list, repeat: int) -> dict:
    """A TVM-FFI entry call (default arguments; the library loads inside it, as the DSL's runtime does) of
    each object under tests/fixtures/tvm_ffi, against the CuTe-ABI `.o` path: `reference`'s loaders and launch."""
    objects = sorted(glob.glob(os.path.join(TVM_FFI_FIXTURES, "**", "*.o"), recursive=True))
    if not objects:
        return {"not_measured": f"no TVM-FFI object under {os.path.relpath(TVM_FFI_FIXTURES, ROOT)} in this checkout"}
    from pydantic import ValidationError
    from emu.dsl.entries import EntrySpec
    try:
        entries = [EntrySpec.model_validate({"tvm_ffi": {}})]
    except ValidationError as error:
        return {"not_measured": f"this emu has no tvm_ffi entry ({error.errors()[0]['msg']})"}
    return _pairs_row([(path, reference) for path in objects], entries, reference_entries, repeat,
                      f"the objects of {os.path.relpath(TVM_FFI_FIXTURES, ROOT)}, their __tvm_ffi_ entry, "
                      f"against {os.path.relpath(reference, ROOT)}'s loaders and launch")


def main() -> int:
    """The shared-library row alone: `python benchmarks/goals.py [--repeat N] [--json]`."""
    import argparse
    import sys
    import tempfile
    parser = argparse.ArgumentParser(description="the shared-library row of bench.py's goals, alone")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("EMU_CACHE_DIR", "off")
    from emu.dsl.entries import EntrySpec
    loaders = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]
    reference = os.path.join(ROOT, "tests", "fixtures", "cutlass-dsl-4.8.0", "x86_64", "carveout_25.o")
    with tempfile.TemporaryDirectory() as folder:
        row = shared_library_row(reference, loaders, args.repeat, folder)
    if args.json:
        print(json.dumps(row, indent=1))
    else:
        sys.stdout.write("".join(line + "\n" for line in library_row_lines(row)))
    return 0


def spread(ratios: list[float]) -> str:
    """The per-round ratios' range, as the reports print it."""
    return f"[{min(ratios):.2f}-{max(ratios):.2f}, {len(ratios)} rounds]"


def library_row_lines(row: dict) -> list[str]:
    """The shared-library row's figures as text: each way, the median ratio with its spread and the median ms."""
    if "not_measured" in row:
        return [f"not measured: {row['not_measured']}"]
    lines = [f"{row['objects']} object(s): {row['how']}",
             f"  each run 5 times over:                {row['same_object_ratio']:.2f}x {spread(row['same_object_ratios'])}  "
             f"({row['same_object_ms'][0]:.3f} / {row['same_object_ms'][1]:.3f} ms)"]
    between = row.get("between_objects", {})
    if "not_measured" in between:
        lines.append(f"  in turn with objects: not measured: {between['not_measured']}")
    elif between:
        lines.append(f"  in turn with objects (.o, library, another .o): {between['ratio']:.2f}x {spread(between['ratios'])}  "
                     f"({between['library_ms']:.3f} / {between['reference_ms']:.3f} ms)")
    lines.append(f"  the libraries in turn with each other (all at one base; the .o's in turn): {row['ratio']:.2f}x {spread(row['ratios'])}")
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
