"""Ground truth: every fixture linked natively with recording C stubs must make exactly emu's calls.

For each fixture (x86-64 and host-native objects with `cc` on an x86-64 machine; AArch64 objects with
`aarch64-linux-gnu-gcc` + `qemu-aarch64`, or `cc` on an AArch64 machine) `tests/oracles/native_harness.py`
writes a C harness whose stubs answer like emu's runtime model under one RuntimeConfig (2 devices,
library handle 0x11b0000, first kernel handle 0x4b000, optin shared memory 232448, static shared memory
1024 * (kernel index + 1)), includes the fixture's own header (its Kernel_Module_Load and launch wrapper
run for real), runs the entries in emu's order and prints every call and entry return as JSON.  emu runs
the same entries; the two event lists must be equal: symbols, callers, integer/handle/string arguments,
decoded launch configs, out-parameter values, return codes and entry results.  Pointer arguments are
compared as null/non-null only, by their stub-model marker.  Missing toolchains skip, never fail.

The seed check runs `tests/data/seed/record_loader.c` (the project's original harness) natively with
the seed objects and checks its output, and emu's `scenarios/seed_record_loader.yaml`, against
`tests/data/seed/loader_calls.txt`.
"""
from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.oracles.native_harness import VARIANTS, Fixture, Toolchain, build, build_stubs, emu_events, \
    first_difference, native_events, run_emu, run_native, toolchain
from tests import oracles
from tests.oracles import host_cpu

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SEED = ROOT / "tests" / "data" / "seed"
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())["fixtures"]


def _arch(entry: dict) -> str:
    return "aarch64" if entry["host"] == "aarch64" else "x86_64"


def _fixture(entry: dict) -> Fixture:
    return Fixture(obj=FIXTURES / entry["path"], header=FIXTURES / entry["header"], prefix=entry["prefix"],
                   kernel_names=tuple(entry["kernel_info"]), arch=_arch(entry))


def _runnable_here(entry: dict) -> str | None:
    """Why this fixture cannot run natively on this machine, or None."""
    if toolchain(_arch(entry)) is None:
        return f"no toolchain to link and run {_arch(entry)} objects here"
    missing = set((entry.get("built_on") or {}).get("avx_flags", [])) - host_cpu.cpu_flags() if entry["host"] == "native" else set()
    if missing:
        return f"this CPU lacks {', '.join(sorted(missing))}, which the host-native object uses"
    return None


class NativeRuns:
    """Each fixture's harness is built and run once per session; builds run in parallel in the background."""

    def __init__(self, work: Path):
        self.work = work
        self.pool = ThreadPoolExecutor(max_workers=max(2, min(8, os.cpu_count() or 2)))
        self.futures: dict[str, Future] = {}
        self.stubs: dict[str, Future] = {}         # architecture -> the compiled stubs
        self.eager = "PYTEST_XDIST_WORKER" not in os.environ

    def _submit(self, entry: dict) -> None:
        if entry["path"] not in self.futures and _runnable_here(entry) is None:
            tools = toolchain(_arch(entry))
            if tools.arch not in self.stubs:
                self.stubs[tools.arch] = self.pool.submit(build_stubs, tools, self.work)
            self.futures[entry["path"]] = self.pool.submit(self._run, _fixture(entry), tools, self.stubs[tools.arch],
                                                           self.work / entry["path"].replace("/", "__"))

    @staticmethod
    def _run(fixture: Fixture, tools: Toolchain, stubs: Future, work: Path) -> dict[str, list[dict]]:
        exe = build(fixture, tools, work, stubs.result())
        return {variant: run_native(exe, tools, errors) for variant, errors in VARIANTS.items()}

    def events(self, entry: dict, variant: str) -> list[dict]:
        self._submit(entry)
        if self.eager:                       # queue every fixture of the same architecture behind it
            for other in MANIFEST:
                if _arch(other) == _arch(entry):
                    self._submit(other)
        return native_events(self.futures[entry["path"]].result()[variant])


@pytest.fixture(scope="session")
def native_runs(tmp_path_factory):
    runs = NativeRuns(tmp_path_factory.mktemp("native-ground-truth"))
    yield runs
    runs.pool.shutdown(wait=True, cancel_futures=True)


def _params(arch_filter):
    return [pytest.param(e, variant, id=f"{e['path']}-{variant}") for e in MANIFEST if arch_filter(e) for variant in VARIANTS]


def _check(entry: dict, variant: str, native_runs: NativeRuns) -> None:
    reason = _runnable_here(entry)
    if reason:
        pytest.skip(reason)
    fixture = _fixture(entry)
    native = native_runs.events(entry, variant)
    emu = emu_events(run_emu(fixture, VARIANTS[variant]))
    assert native, f"{entry['path']}: the native harness printed nothing"
    difference = first_difference(emu, native)
    assert difference is None, f"{entry['path']} ({variant}): emu's trace differs from the native run\n{difference}"


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize(("entry", "variant"), _params(lambda e: e["host"] == "x86_64"))
def test_x86_64_matches_native(entry, variant, native_runs):
    _check(entry, variant, native_runs)


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize(("entry", "variant"), _params(lambda e: e["host"] == "native"))
def test_host_native_avx_matches_native(entry, variant, native_runs):
    _check(entry, variant, native_runs)


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize(("entry", "variant"), _params(lambda e: e["host"] == "aarch64"))
def test_aarch64_matches_native(entry, variant, native_runs):
    _check(entry, variant, native_runs)


# -- the seed: record_loader.c and its expected output -----------------------------------------------
SEED_VERSION = "cutlass-dsl-4.8.0"
SEED_CASES = ("carveout_25", "carveout_75")
SEED_SETTERS = {"_cudaFuncSetAttribute": "  _cudaFuncSetAttribute: attribute={attr}, value={value}",
                "_cudaKernelSetAttributeForDevice":
                    "  _cudaKernelSetAttributeForDevice: attribute={attr}, value={value}, device={device}"}


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_seed_record_loader_native(arch, tmp_path):
    """record_loader.c linked with the seed objects prints exactly seed/expected/loader_calls.txt."""
    tools = toolchain(arch)
    if tools is None:
        pytest.skip(f"no toolchain to link and run {arch} objects here")
    objects = [str(FIXTURES / SEED_VERSION / arch / f"{case}.o") for case in SEED_CASES]
    exe = tmp_path / "record_loader"
    subprocess.run([tools.compiler, *tools.flags, "-O0", "-w", "-o", str(exe), str(SEED / "record_loader.c"), *objects],
                   check=True, capture_output=True, text=True)
    output = subprocess.run([*tools.runner, str(exe)], check=True, capture_output=True, text=True, timeout=60).stdout
    assert output == (SEED / "loader_calls.txt").read_text()


@pytest.mark.oracle(oracles.NATIVE)
def test_seed_scenario_matches_expected_output():
    """emu's seed scenario passes, and its setter calls, printed as record_loader.c prints them, are the expected text."""
    from emu.scenario.load import load_scenario
    from emu.scenario.runner import run_scenario
    result = run_scenario(load_scenario(str(ROOT / "scenarios" / "seed_record_loader.yaml")))
    assert result.passed, [r for r in result.results if not r.passed]
    expected = (SEED / "loader_calls.txt").read_text()
    by_object = {Path(run.object).resolve(): run for run in result.runs}
    for arch in ("x86_64", "aarch64"):
        lines = []
        for case in SEED_CASES:
            run = by_object[(FIXTURES / SEED_VERSION / arch / f"{case}.o").resolve()]
            for entry in ("cuda_load", "cuda_load_to_device"):
                lines.append(f"preferred_smem_carveout={case.split('_')[1]}, {entry}:")
                lines += [SEED_SETTERS[c.symbol].format(**c.args) for c in run.calls
                          if c.entry == entry and c.symbol in SEED_SETTERS]
        assert "\n".join(lines) + "\n" == expected, f"{arch}: emu's seed scenario does not print loader_calls.txt"
