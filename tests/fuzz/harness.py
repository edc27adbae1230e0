"""Fuzz emu's whole pipeline with mutated real fixtures and scenario texts.

Two ways to use it:

* In-process (pytest, hypothesis): `run_input(make_input(rng))` with any `random.Random`
  (hypothesis' `st.randoms()` gives one it can shrink).  Only `EmuError` subclasses may
  escape; anything else is a bug in emu.
* Long runs: `python -m tests.fuzz.harness --inputs 100000 [--seed N] [--workers 2]`.
  Input i is a pure function of (seed, i).  Inputs run in batches inside forked child
  processes (the parent imports and warms emu first, so a fork costs ~1 ms); the parent
  watches each child through a pipe, so an interpreter crash (a signal) or a hang (no
  progress for --hang-s seconds) is caught, attributed to one input, saved, and the batch
  goes on in a new child.  Uncaught exceptions are saved as reproducers under --out
  (default `emu-fuzz` in the system's temporary folder): `<kind>-<seed>-<i>.{o,yaml}` plus `.txt`
  with the traceback.  Reproduce one with `python -m tests.fuzz.harness --replay FILE`.
* The driver's own check: `python -m tests.fuzz.harness --selftest` plants a crash, a hang and an
  exception and reports whether exactly those three were caught, with the time per input and the
  peak RSS (wall-clock and memory belong in this report, not in the test suite).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import signal
import struct
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.fuzz import elf

ROOT = elf.ROOT
SCENARIO_SEEDS = ROOT / "tests" / "data" / "scenario_inputs"
OBJECT_SEEDS = [
    elf.X86 / "carveout_25.o", elf.X86 / "two_kernels_carveout_50.o", elf.X86 / "mixed.o",
    elf.ARM / "carveout_25.o", elf.ARM / "mixed.o",
    elf.FIXTURES / "cutlass-dsl-4.8.0" / "native" / "mixed.o",   # VEX.256 code: the AVX unit runs
]
REALWORLD = elf.FIXTURES / "realworld"          # the real-world corpus: every export of both architectures
# Shared libraries linked at first use from real-world exports, as users link them (tests/binary/shared_build.py):
# (file name, architecture, runtime); three exports each.
LIBRARY_SEEDS = [("x86_64_static.so", "x86_64", "static"), ("x86_64_dynamic.so", "x86_64", "dynamic"),
                 ("aarch64_dynamic.so", "aarch64", "dynamic")]
BUDGET = 20_000          # guest instructions per entry: the real loaders need < 1000
TIMEOUT_S = 1.0          # emu's own wall-clock limit per entry
HANG_S = 5.0             # the harness' limit per input
DEFAULT_OUT = os.path.join(tempfile.gettempdir(), "emu-fuzz")
SELFTEST = "crash=3,hang=7,raise=12"    # EMU_FUZZ_SELFTEST for `--selftest` and the suite's driver test
SELFTEST_FOUND = ["crash-0-3.txt", "exception-0-12.txt", "hang-0-7.txt"]


@dataclass
class FuzzInput:
    kind: str            # "object" or "scenario"
    data: bytes
    how: str             # the mutations applied, for the report

    @property
    def suffix(self) -> str:
        if self.kind != "object":
            return ".yaml"
        return ".so" if self.data[16:18] == b"\x03\x00" else ".o"


# -- seeds -------------------------------------------------------------------------------
class _ObjectSeed:
    """A fixture's bytes and where its tables sit, computed once."""

    def __init__(self, path: Path):
        self.path = path
        self.raw = bytes(path.read_bytes())
        self.sections = elf.sections(self.raw)
        self.symbols = elf.symbols(self.raw)
        self.relocations = [r for s in self.sections if s.type == 4 for r in elf.relocations(self.raw, s.name)]
        self.code = [s for s in self.sections if s.flags & 4 and s.size]
        self.functions = [s for s in self.symbols if s["info"] & 0xF == 2 and s["size"]]
        self.arch = "x86_64" if struct.unpack_from("<H", self.raw, 18)[0] == 62 else "aarch64"
        self.library = self.raw[16] == 3               # ET_DYN
        self.headers = elf.program_headers(self.raw) if self.library else []
        self.dynamic = elf.dynamic_entries(self.raw) if self.library else []


_OBJECTS: list[_ObjectSeed] = []
_SCENARIOS: list[str] = []


def object_seeds() -> list[_ObjectSeed]:
    """The toys, every export of the real-world corpus, and the shared libraries linked from it."""
    if not _OBJECTS:
        paths = [*OBJECT_SEEDS, *sorted(REALWORLD.glob("x86_64/*.o")), *sorted(REALWORLD.glob("aarch64/*.o")),
                 *library_seeds()]
        _OBJECTS.extend(_ObjectSeed(p) for p in paths if p.exists())
    return _OBJECTS


def library_seeds() -> list[Path]:
    """The shared-library seeds, linked once per process into a folder of their own (none where the C
    toolchains or the DSL's runtime are missing: tests/fuzz/test_fuzz_short.py requires them in the suite)."""
    import subprocess

    from tests.binary.shared_build import link

    folder = Path(tempfile.mkdtemp(prefix="emu-fuzz-libraries-"))
    found = []
    for name, arch, runtime in LIBRARY_SEEDS:
        try:
            found.append(link(folder / name, arch, runtime=runtime))
        except (OSError, subprocess.CalledProcessError, TypeError):
            continue
    return found


def scenario_seeds() -> list[str]:
    """The seed scenario texts, with object paths made absolute so they load from anywhere."""
    if not _SCENARIOS:
        for path in sorted(SCENARIO_SEEDS.glob("*.yaml")):
            _SCENARIOS.append(path.read_text().replace("../../fixtures/", f"{elf.FIXTURES}/"))
        for path in sorted((ROOT / "scenarios").glob("*.yaml")):
            _SCENARIOS.append(path.read_text().replace("../tests/fixtures/", f"{elf.FIXTURES}/"))
    return _SCENARIOS


# -- object mutations ----------------------------------------------------------------------
def _interesting(rng: random.Random, bits: int, near: int = 0, file_size: int = 0) -> int:
    top = (1 << bits) - 1
    choices = [0, 1, 2, 7, 8, 0x7F, 0x80, 0xFF, 0xFFFF, top, top >> 1, (top >> 1) + 1, 1 << (bits - 1 if bits < 64 else 40),
               near + 1, near - 1, near + rng.randint(-64, 64), near * 2, near + 0x1000, file_size, file_size + 1,
               file_size - 1, 1 << 32, (1 << 32) - 1, rng.randrange(1 << bits), rng.randrange(256)]
    return rng.choice(choices) & top


def _bit_flips(rng, raw, seed):
    for _ in range(rng.randint(1, 8)):
        at = rng.randrange(len(raw))
        raw[at] ^= 1 << rng.randrange(8)
    return "bit flips"


def _byte_run(rng, raw, seed):
    at, length = rng.randrange(len(raw)), rng.randint(1, 64)
    fill = rng.choice([b"\0", b"\xff", b"\x7f", b"\x80", bytes([rng.randrange(256)])])
    run = fill * length if rng.random() < 0.6 else bytes(rng.randrange(256) for _ in range(length))
    raw[at:at + length] = run[:len(raw) - at]
    return f"byte run at {at:#x}"


def _header_edit(rng, raw, seed):
    fields = {"e_type": (16, "<H"), "e_machine": (18, "<H"), "e_shoff": (40, "<Q"), "e_shentsize": (58, "<H"),
              "e_shnum": (60, "<H"), "e_shstrndx": (62, "<H"), "e_ehsize": (52, "<H"), "EI_CLASS": (4, "<B"),
              "EI_DATA": (5, "<B")}
    name = rng.choice(list(fields))
    offset, fmt = fields[name]
    old, = struct.unpack_from(fmt, raw, offset)
    struct.pack_into(fmt, raw, offset, _interesting(rng, struct.calcsize(fmt) * 8, old, len(raw)))
    return f"ELF header {name}"


def _section_edit(rng, raw, seed):
    header = rng.choice(seed.sections)
    field = rng.choice(list(elf.SH_FIELDS))
    offset, fmt = elf.SH_FIELDS[field]
    old, = struct.unpack_from(fmt, raw, header.header_offset + offset)
    if field == "type" and rng.random() < 0.5:
        value = rng.choice([0, 1, 2, 3, 4, 8, 9, 11, 14, 0x6FFFFFF6, 0x70000001])
    else:
        value = _interesting(rng, struct.calcsize(fmt) * 8, old, len(raw))
    struct.pack_into(fmt, raw, header.header_offset + offset, value)
    return f"section {header.name or header.index} {field}"


def _symbol_edit(rng, raw, seed):
    entry = rng.choice(seed.symbols)
    field = rng.choice(list(elf.SYM_FIELDS))
    offset, fmt = elf.SYM_FIELDS[field]
    old, = struct.unpack_from(fmt, raw, entry["entry_offset"] + offset)
    if field == "shndx" and rng.random() < 0.5:
        value = rng.choice([0, 1, len(seed.sections) - 1, len(seed.sections), 0xFF00, 0xFFF1, 0xFFF2, 0xFFFF])
    else:
        value = _interesting(rng, struct.calcsize(fmt) * 8, old, len(raw))
    struct.pack_into(fmt, raw, entry["entry_offset"] + offset, value)
    return f"symbol {entry['name'] or entry['index']} {field}"


X86_TYPES = [1, 2, 4, 9, 10, 11, 24, 25, 26, 27, 28, 29, 30, 41, 42, 5, 6, 7, 8, 16, 18, 37]
ARM_TYPES = [257, 258, 260, 261, 263, 264, 274, 275, 277, 278, 279, 280, 282, 283, 284, 285, 286, 299, 311, 312,
             1024, 1025, 1026, 1027, 1030, 1032]


def _relocation_edit(rng, raw, seed):
    entry = rng.choice(seed.relocations)
    offset, info, addend = struct.unpack_from("<QQq", raw, entry["entry_offset"])
    symbol, kind = info >> 32, info & 0xFFFFFFFF
    field = rng.choice(["offset", "symbol", "type", "addend", "type"])
    if field == "offset":
        offset = _interesting(rng, 64, offset, len(raw))
    elif field == "symbol":
        symbol = rng.choice([0, len(seed.symbols) - 1, len(seed.symbols), rng.randrange(len(seed.symbols)), _interesting(rng, 32, symbol)])
    elif field == "type":
        kind = rng.choice(X86_TYPES + ARM_TYPES + [0, rng.randrange(1 << 32)])
    else:
        addend = _interesting(rng, 64, addend, len(raw))
        addend = addend - (1 << 64) if addend >= 1 << 63 else addend
    struct.pack_into("<QQq", raw, entry["entry_offset"], offset, (symbol << 32) | kind, addend)
    return f"relocation {entry['number']} {field}"


def _program_header_edit(rng, raw, seed):
    """A shared library's program header field (an object has none: its ELF header's e_phoff instead)."""
    if not seed.headers:
        struct.pack_into("<Q", raw, 32, _interesting(rng, 64, 0, len(raw)))
        return "ELF header e_phoff"
    header = rng.choice(seed.headers)
    field = rng.choice(list(elf.PH_FIELDS))
    offset, fmt = elf.PH_FIELDS[field]
    if field == "type" and rng.random() < 0.5:
        value = rng.choice([0, 1, 2, 3, 6, 0x6474E550, 0x6474E551, 0x6474E552])
    else:
        value = _interesting(rng, struct.calcsize(fmt) * 8, header[field], len(raw))
    struct.pack_into(fmt, raw, header["entry_offset"] + offset, value)
    return f"program header {header['index']} {field}"


def _dynamic_edit(rng, raw, seed):
    """A shared library's dynamic entry: its tag (one emu reads or refuses, or any) or its value."""
    if not seed.dynamic:
        struct.pack_into("<H", raw, 56, _interesting(rng, 16, 0, len(raw)))     # an object's e_phnum
        return "ELF header e_phnum"
    entry = rng.choice(seed.dynamic)
    tag, value = entry["tag"], entry["value"]
    if rng.random() < 0.3:
        tag = rng.choice([0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 17, 20, 23, 25, 26, 27, 28, 36, 0x6FFFFEF5,
                          0x6FFFFFFB, rng.randrange(1 << 31)])
    else:
        value = _interesting(rng, 64, value, len(raw))
    struct.pack_into("<qQ", raw, entry["entry_offset"], tag, value)
    return f"dynamic entry {entry['number']} ({entry['tag']})"


def _code_edit(rng, raw, seed):
    """Random or hand-picked instructions at a function's start or inside it: runtime faults."""
    function = rng.choice(seed.functions)
    section = seed.sections[function["shndx"]]
    base = section.offset + function["value"] - (section.addr if seed.library else 0)
    at = base + (0 if rng.random() < 0.5 else rng.randrange(function["size"]))
    if seed.arch == "x86_64":
        snippets = [b"\x0f\x0b", b"\xeb\xfe", b"\x48\x8b\x04\x25\0\0\0\0", b"\xc3", b"\xcc", b"\xf4", b"\x0f\x05",
                    b"\xff\xe0", b"\xff\xd0", b"\x48\x31\xe4\xc3", b"\xc5\xfc\x77", b"\xc5\xfd\x6f\x00", b"\x62\xf1\x7c\x48\x10\x00"]
    else:
        snippets = [b"\0\0\0\0", b"\0\0\0\x14", b"\x00\x00\x40\xf9", b"\xc0\x03\x5f\xd6", b"\x00\x00\x20\xd4",
                    b"\x01\x00\x00\xd4", b"\x00\x00\x1f\xd6", b"\xff\x03\x00\x91\xc0\x03\x5f\xd6"]
    code = rng.choice(snippets) if rng.random() < 0.7 else bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    raw[at:at + len(code)] = code[:len(raw) - at]
    return f"code at {at:#x}"


def _truncate(rng, raw, seed):
    cut = rng.randrange(len(raw))
    del raw[cut:]
    return f"truncated at {cut}"


OBJECT_MUTATORS = [(_bit_flips, 3), (_byte_run, 2), (_header_edit, 1), (_section_edit, 4), (_symbol_edit, 3),
                   (_relocation_edit, 4), (_code_edit, 3), (_truncate, 1), (_program_header_edit, 2), (_dynamic_edit, 3)]
LIBRARY_ONLY = (_program_header_edit, _dynamic_edit)       # an object seed draws them rarely (weight 1 in 10)


def mutate_object(rng: random.Random) -> FuzzInput:
    libraries = [seed for seed in object_seeds() if seed.library]     # a quarter of the inputs: 3 seeds among 110
    seed = rng.choice(libraries) if libraries and rng.random() < 0.25 else rng.choice(object_seeds())
    raw = bytearray(seed.raw)
    hows = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        if not raw:
            break
        weights = [w if seed.library or m not in LIBRARY_ONLY else w / 10 for m, w in OBJECT_MUTATORS]
        mutator = rng.choices([m for m, _ in OBJECT_MUTATORS], weights)[0]
        try:
            hows.append(mutator(rng, raw, seed))
        except (struct.error, IndexError, ValueError):     # a table offset past an earlier truncation
            hows.append(f"{mutator.__name__} skipped")
    return FuzzInput("object", bytes(raw), f"{seed.path.parent.name}/{seed.path.name}: " + ", ".join(hows))


# -- scenario mutations --------------------------------------------------------------------
_KEYS = ["description", "objects", "path", "expect", "entries", "runtime", "profile", "device_count", "current_device",
         "device_attributes", "kernel_attributes", "library_handle", "first_kernel_handle", "errors", "symbol", "call",
         "error", "every", "missing_symbols", "budget", "timeout_s", "calls_in_order", "calls_any_order", "no_calls",
         "exact_calls", "symbols", "calls", "returns", "state", "kernel", "device", "attribute", "value", "fault",
         "upstream_bug", "issue", "reason", "fails", "strict", "args", "outputs", "ret", "entry", "name", "cuda_load",
         "cuda_load_to_device", "launch", "module_load", "*", "SHARED_SIZE_BYTES", "bogus"]


def _random_value(rng: random.Random, depth: int = 0):
    choices = [None, 0, -1, 1, 2, 7, 64, 65, 1 << 31, 1 << 32, 1 << 63, 1 << 64, -(1 << 63), 10 ** 30, 0.5, 1e308, -1e-9,
               float("nan"), float("inf"), True, False, "", "x" * 200, "\0", "nan", "h200", "all", "metadata", "SUCCESS",
               "INVALID_VALUE", "missing_stub", "return_zero", "cuda_load", "_cudaFuncSetAttribute", "PREFERRED_SHARED_MEMORY_CARVEOUT",
               "/", "/nonexistent.o", str(elf.SEED_X86), str(elf.SEED_ARM), str(elf.ROOT), "../x.o", rng.choice(_KEYS)]
    if depth < 2 and rng.random() < 0.25:
        if rng.random() < 0.5:
            return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(_KEYS): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return rng.choice(choices)


def _paths(data, prefix=()):
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _paths(value, prefix + (index,))


def _structured(rng: random.Random, text: str) -> tuple[str, str]:
    data = yaml.safe_load(text)
    paths = list(itertools.islice(_paths(data), 5000))   # aliases can make the tree exponentially large
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(paths)
        action = rng.choice(["replace", "replace", "add", "delete"])
        if not path:
            data = _random_value(rng) if action == "replace" and rng.random() < 0.2 else data
            continue
        try:
            parent = data
            for part in path[:-1]:
                parent = parent[part]
            last = path[-1]
            if action == "replace":
                parent[last] = _random_value(rng)
            elif action == "delete":
                del parent[last]
            elif isinstance(parent[last], dict):
                parent[last][rng.choice(_KEYS)] = _random_value(rng)
            elif isinstance(parent[last], list):
                parent[last].append(_random_value(rng))
        except (KeyError, IndexError, TypeError):
            pass
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True), "structured edit"


def _textual(rng: random.Random, text: str) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    action = rng.choice(["delete line", "duplicate line", "insert", "truncate", "flip", "indent", "alias bomb"])
    if action == "delete line" and lines:
        del lines[rng.randrange(len(lines))]
    elif action == "duplicate line" and lines:
        at = rng.randrange(len(lines))
        lines.insert(at, lines[at])
    elif action == "insert":
        at = rng.randrange(len(lines) + 1)
        lines.insert(at, rng.choice(["  bogus: 1\n", "- \n", ": :\n", "\t\n", "!!python/object:os.system x\n", "&a [*a]\n",
                                     "? [a, b]\n  : c\n", "{\n", "'\n", "key: !!binary AAAA\n", "x: 2001-01-01\n",
                                     "1: 2\n", "~: null\n", "<<: {a: 1}\n", "%YAML 1.1\n---\n"]))
    elif action == "truncate":
        return text[:rng.randrange(len(text) + 1)], action
    elif action == "flip" and text:
        raw = bytearray(text.encode())
        for _ in range(rng.randint(1, 4)):
            raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
        return raw.decode("utf-8", "replace"), action
    elif action == "indent" and lines:
        at = rng.randrange(len(lines))
        lines[at] = rng.choice(["  ", " ", ""]) + lines[at].lstrip(" ")
    elif action == "alias bomb":
        bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
            for i in range(8))
        return text + "description_bomb: *i\n" + bomb if rng.random() < 0.5 else bomb + text.replace("description:", "description: *i\nx:", 1), action
    return "".join(lines), action


def mutate_scenario(rng: random.Random) -> FuzzInput:
    text = rng.choice(scenario_seeds())
    hows = []
    for _ in range(rng.randint(1, 2)):
        try:
            text, how = (_structured if rng.random() < 0.6 else _textual)(rng, text)
        except yaml.YAMLError:
            text, how = _textual(rng, text)
        hows.append(how)
        if how == "alias bomb":
            break
    return FuzzInput("scenario", text.encode("utf-8", "surrogatepass"), ", ".join(hows))


def make_input(rng: random.Random) -> FuzzInput:
    return mutate_object(rng) if rng.random() < 0.75 else mutate_scenario(rng)


def input_for(seed: int, index: int) -> FuzzInput:
    return make_input(random.Random(f"{seed}:{index}"))


# -- running -------------------------------------------------------------------------------
_WORKDIR: str | None = None


def _workdir() -> str:
    global _WORKDIR
    if _WORKDIR is None or not os.path.isdir(_WORKDIR):
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        _WORKDIR = tempfile.mkdtemp(prefix="emu-fuzz-", dir=base)
    return _WORKDIR


def run_input(item: FuzzInput) -> str:
    """Run one input through the pipeline; return an outcome label. Non-EmuError exceptions propagate."""
    from emu.cache import loaded as images
    from emu.dsl.entries import EntrySpec
    from emu.errors import EmuError
    from emu.binary.formats import load_binary
    from emu.commands.render import show_run
    from emu.run.session import run_object
    from emu.scenario.load import load_scenario
    from emu.scenario.runner import run_scenario

    path = os.path.join(_workdir(), f"input-{os.getpid()}{item.suffix}")
    with open(path, "wb") as handle:
        handle.write(item.data)
    store = os.path.join(_workdir(), "store")        # the persistent image store, private and emptied per input
    saved_store = os.environ.get("EMU_CACHE_DIR")
    os.environ["EMU_CACHE_DIR"] = store
    try:
        if item.kind == "object":
            try:
                load_binary(item.data, path, "0" * 64)               # the pieces, in-process from bytes
            except EmuError as error:
                return f"object rejected: {type(error).__name__}"
            entries = [EntrySpec(name="cuda_init"), EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device", device=1),
                       EntrySpec(name="module_load"), EntrySpec(name="launch")]
            from emu.cuda.config import RuntimeConfig
            try:
                run = run_object(path, RuntimeConfig(device_count=2), entries, budget=BUDGET, timeout_s=TIMEOUT_S)
            except EmuError as error:
                return f"object rejected late: {type(error).__name__}"
            show_run(run)
            json.dumps(run.model_dump(mode="json"))
            first, _ = images.load_image(path)
            images._CACHE.clear()
            again, _ = images.load_image(path)             # read back from the image store this time
            if [(s.address, s.data, s.perms) for s in again.segments] != [(s.address, s.data, s.perms) for s in first.segments]:
                raise AssertionError("the image read back from the image store differs from the one built")
            return f"fault {run.fault.kind}" if run.fault else "ran"
        try:
            loaded = load_scenario(path)
        except EmuError as error:
            return f"scenario rejected: {type(error).__name__}"
        scenario = loaded.scenario
        scenario.budget, scenario.timeout_s = min(scenario.budget, BUDGET), min(scenario.timeout_s, TIMEOUT_S)
        try:
            result = run_scenario(loaded)
        except EmuError as error:
            return f"scenario run error: {type(error).__name__}"
        from emu.commands.report import print_scenario
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):
            print_scenario(result, quiet=False)
        json.dumps(result.model_dump(mode="json"))
        return "scenario passed" if result.passed else "scenario failed"
    finally:
        images._CACHE.clear()       # each input is a new file: never let the image cache grow
        if saved_store is None:
            os.environ.pop("EMU_CACHE_DIR", None)
        else:
            os.environ["EMU_CACHE_DIR"] = saved_store
        import shutil
        shutil.rmtree(store, ignore_errors=True)
        try:
            os.unlink(path)
        except OSError:
            pass


def warm_up() -> None:
    """Import everything and create both machines, so forked children start warm."""
    object_seeds()
    scenario_seeds()
    for seed in [*map(object_seeds().__getitem__, range(6)), *(s for s in object_seeds() if s.library)]:
        run_input(FuzzInput("object", seed.raw, "seed"))        # the toys and the libraries: both machines warm
    run_input(FuzzInput("scenario", scenario_seeds()[0].encode(), "seed"))


# -- the long-run driver: forked children, a pipe each, watched by the parent -------------------
def _child(seed: int, indexes: list[int], out_fd: int, out_dir: str) -> None:
    from emu.errors import EmuError

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    import faulthandler
    faulthandler.disable()       # a crash is reported by the parent; pytest's handler would print a traceback
    stream = os.fdopen(out_fd, "w", buffering=1)
    slowest = 0.0
    selftest = dict(part.split("=") for part in os.environ.get("EMU_FUZZ_SELFTEST", "").split(",") if part)
    for index in indexes:
        stream.write(f"start {index}\n")
        item = input_for(seed, index)
        started = time.perf_counter()
        try:
            if selftest.get("crash") == str(index):      # EMU_FUZZ_SELFTEST=crash=I,hang=J,raise=K: prove the driver sees each
                os.kill(os.getpid(), signal.SIGSEGV)
            if selftest.get("hang") == str(index):
                time.sleep(3600)
            if selftest.get("raise") == str(index):
                raise KeyError("selftest")
            outcome = run_input(item)
            status = "ok"
        except EmuError as error:       # run_input catches these itself; an escape here is still allowed
            outcome, status = f"EmuError {type(error).__name__}", "ok"
        except BaseException as error:  # noqa: BLE001 - this is what the fuzzer looks for
            outcome, status = f"{type(error).__name__}: {error}"[:300].replace("\n", " "), "exception"
            _save(out_dir, "exception", seed, index, item, traceback.format_exc())
        elapsed = time.perf_counter() - started
        slowest = max(slowest, elapsed)
        stream.write(json.dumps({"index": index, "status": status, "outcome": outcome, "elapsed": elapsed}) + "\n")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    stream.write(json.dumps({"done": True, "rss_kib": rss, "slowest": slowest}) + "\n")
    stream.close()
    os._exit(0)


def _save(out_dir: str, kind: str, seed: int, index: int, item: FuzzInput, text: str) -> str:
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, f"{kind}-{seed}-{index}")
    with open(stem + item.suffix, "wb") as handle:
        handle.write(item.data)
    with open(stem + ".txt", "w") as handle:
        handle.write(f"seed {seed} index {index}: {item.kind}, {item.how}\nreplay: python -m tests.fuzz.harness --replay {stem + item.suffix}\n\n{text}\n")
    return stem + item.suffix


class _Worker:
    def __init__(self, seed: int, indexes: list[int], out_dir: str):
        self.indexes = indexes
        read_fd, write_fd = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(read_fd)
            try:
                _child(seed, indexes, write_fd, out_dir)
            finally:
                os._exit(70)
        os.close(write_fd)
        self.fd = read_fd
        self.buffer = b""
        self.current: int | None = None
        self.finished: set[int] = set()
        self.last_progress = time.monotonic()
        self.done = False


def fuzz(inputs: int, seed: int = 0, workers: int = 2, batch: int = 250, hang_s: float = HANG_S,
         out_dir: str = DEFAULT_OUT, progress: bool = True) -> dict:
    """Run `inputs` inputs in forked children; return the counts (see the module docstring)."""
    import selectors

    warm_up()
    started = time.monotonic()
    counts = {"inputs": 0, "exceptions": 0, "hangs": 0, "crashes": 0, "peak_rss_mib": 0.0, "slowest_s": 0.0,
              "outcomes": {}, "reproducers": [], "seed": seed}
    pending = [list(range(start, min(start + batch, inputs))) for start in range(0, inputs, batch)]
    pending.reverse()
    active: dict[int, _Worker] = {}
    selector = selectors.DefaultSelector()
    last_report = time.monotonic()

    def handle(worker: _Worker, line: str) -> None:
        if line.startswith("start "):
            worker.current = int(line.split()[1])
            return
        record = json.loads(line)
        if record.get("done"):
            worker.done = True
            counts["peak_rss_mib"] = max(counts["peak_rss_mib"], record["rss_kib"] / 1024)
            counts["slowest_s"] = max(counts["slowest_s"], record["slowest"])
            return
        worker.finished.add(record["index"])
        counts["inputs"] += 1
        if record["status"] == "exception":
            counts["exceptions"] += 1
            counts["reproducers"].append(os.path.join(out_dir, f"exception-{seed}-{record['index']}"))
            label = "EXCEPTION " + record["outcome"].split(":")[0]
        else:
            label = record["outcome"]
        counts["outcomes"][label] = counts["outcomes"].get(label, 0) + 1

    def launch(indexes: list[int]) -> None:
        worker = _Worker(seed, indexes, out_dir)
        active[worker.pid] = worker
        selector.register(worker.fd, selectors.EVENT_READ, worker)

    def retire(worker: _Worker, why: str | None) -> None:
        selector.unregister(worker.fd)
        os.close(worker.fd)
        if why == "hang":
            os.kill(worker.pid, signal.SIGKILL)
        _, status = os.waitpid(worker.pid, 0)
        del active[worker.pid]
        if why is None and os.WIFSIGNALED(status):
            why = "crash"
        if why is None and worker.done:
            return
        if worker.current is not None and worker.current not in worker.finished:
            culprit = worker.current
            kind = why or f"exit{os.waitstatus_to_exitcode(status)}"
            counts["hangs" if kind == "hang" else "crashes"] += 1
            counts["inputs"] += 1
            detail = (f"no progress for {hang_s} s" if kind == "hang"
                      else f"child ended with status {os.waitstatus_to_exitcode(status)}")
            counts["reproducers"].append(_save(out_dir, kind, seed, culprit, input_for(seed, culprit), detail))
            worker.finished.add(culprit)
        rest = [i for i in worker.indexes if i not in worker.finished and i != worker.current]
        if rest:
            pending.append(rest)

    while pending or active:
        while pending and len(active) < workers:
            launch(pending.pop())
        now = time.monotonic()
        timeout = max(0.05, min(w.last_progress + hang_s for w in active.values()) - now)
        for key, _ in selector.select(timeout):
            worker: _Worker = key.data
            data = os.read(worker.fd, 1 << 16)
            worker.last_progress = time.monotonic()
            *lines, worker.buffer = (worker.buffer + data).split(b"\n")
            for line in lines:
                handle(worker, line.decode())
            if not data:
                retire(worker, None)
        now = time.monotonic()
        for worker in list(active.values()):
            if now - worker.last_progress > hang_s:
                retire(worker, "hang")
        if progress and now - last_report > 30:
            last_report = now
            rate = counts["inputs"] / (now - started)
            print(f"[{now - started:7.0f} s] {counts['inputs']} inputs ({rate:.0f}/s), {counts['exceptions']} exceptions, "
                  f"{counts['hangs']} hangs, {counts['crashes']} crashes", file=sys.stderr, flush=True)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    counts["peak_rss_mib"] = round(max(counts["peak_rss_mib"], children), 1)
    counts["seconds"] = round(time.monotonic() - started, 1)
    counts["slowest_s"] = round(counts["slowest_s"], 3)
    return counts


def selftest(out_dir: str, hang_s: float = 1.0) -> int:
    """Plant a crash, a hang and an exception in 16 inputs; exactly those must be found. Prints the report."""
    os.environ["EMU_FUZZ_SELFTEST"] = SELFTEST
    try:
        counts = fuzz(16, seed=0, workers=2, batch=8, hang_s=hang_s, out_dir=out_dir, progress=False)
    finally:
        del os.environ["EMU_FUZZ_SELFTEST"]
    found = sorted(p.name for p in Path(out_dir).iterdir() if p.suffix == ".txt")
    problems = []
    if (counts["exceptions"], counts["hangs"], counts["crashes"]) != (1, 1, 1):
        problems.append(f"expected exactly 1 exception, 1 hang, 1 crash; got {counts['exceptions']}, "
                        f"{counts['hangs']}, {counts['crashes']} (a hang beyond input 7 means an input took over {hang_s} s)")
    if found != SELFTEST_FOUND:
        problems.append(f"reproducers {found}, expected {SELFTEST_FOUND}")
    print(json.dumps({**counts, "problems": problems}, indent=1))
    return 1 if problems else 0


def replay(path: str) -> int:
    kind = "object" if path.endswith((".o", ".so")) else "scenario"
    item = FuzzInput(kind, Path(path).read_bytes(), "replay")
    print(run_input(item))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.harness", description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2, help="child processes at once (cores)")
    parser.add_argument("--batch", type=int, default=250, help="inputs per forked child")
    parser.add_argument("--hang-s", type=float, default=HANG_S)
    parser.add_argument("--out", default=DEFAULT_OUT, help="where reproducers go")
    parser.add_argument("--selftest", action="store_true", help="check that the driver catches a planted crash, hang and exception")
    parser.add_argument("--replay", metavar="FILE", help="run one saved input in this process and print its outcome")
    parser.add_argument("--show", type=int, metavar="INDEX", help="write input INDEX of --seed to --out and print what it is")
    args = parser.parse_args(argv)
    if args.replay:
        return replay(args.replay)
    if args.selftest:
        return selftest(tempfile.mkdtemp(prefix="emu-fuzz-selftest-"), args.hang_s if args.hang_s != HANG_S else 1.0)
    if args.show is not None:
        item = input_for(args.seed, args.show)
        print(_save(args.out, "input", args.seed, args.show, item, "shown"), item.how)
        return 0
    counts = fuzz(args.inputs, args.seed, args.workers, args.batch, args.hang_s, args.out)
    print(json.dumps(counts, indent=1))
    return 1 if counts["exceptions"] or counts["hangs"] or counts["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
