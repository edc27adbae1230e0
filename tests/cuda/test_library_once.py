"""cuda_dialect_init_library_once / cuda_dialect_unload_library_once in emu against the DSL's static runtime run natively.

tests/cuda/native_library_once/scenarios.c calls the two helpers as generated code does, with callbacks that print
what they get; natively it is linked with libcuda_dialect_runtime_static.a and a recording CUDA runtime
(standin.c), in emu its callbacks run in the emulator and the helpers are emu's behaviours
(emu/cuda/behaviours/helpers.py).  Both print the same lines: the callbacks' printf text, and each plain runtime
call the helper makes (in emu, the trace's records whose caller is the helper).  Compared with the committed native
output, and with a live native run where the DSL's archive and cc are installed (CI).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from emu.cuda.config import RuntimeConfig
from emu.run.trace import CallRecord
from tests import oracles
from tests.emulator.guest_run import COMPILERS, GuestRun, compile_c

HERE = Path(__file__).parent / "native_library_once"
HEADER = re.compile(r"scenario (\d+) (\w+): devices (\d+)")
HELPERS = ("cuda_dialect_init_library_once", "cuda_dialect_unload_library_once")


def scenarios(output: str) -> dict[int, tuple[str, int, list[str]]]:
    """The native output by scenario: (name, devices, lines)."""
    found: dict[int, tuple[str, int, list[str]]] = {}
    lines: list[str] = []
    for line in output.splitlines():
        header = HEADER.fullmatch(line)
        if header:
            lines = []
            found[int(header[1])] = (header[2], int(header[3]), lines)
        else:
            lines.append(line)
    return found


def as_native_lines(calls: list[CallRecord]) -> list[str]:
    """emu's trace in the lines the native program prints (standin.c's for the runtime calls)."""
    lines = []
    for call in calls:
        if call.symbol == "printf":
            lines.append(call.args["text"].rstrip("\n"))
        elif call.symbol == "cudaGetDeviceCount":
            lines.append(f"cudaGetDeviceCount -> {call.ret}, count {call.outputs.get('count', 0)}")
        elif call.symbol in ("cudaGetErrorName", "cudaGetErrorString"):
            lines.append(f"{call.symbol}({call.args['error']})")
        elif call.symbol == "cudaLibraryUnload":
            lines.append(f"cudaLibraryUnload({call.args['library']:#x}) -> {call.ret}")
        else:
            assert call.symbol in HELPERS, call.symbol
    return lines


def emu_lines(tmp_path: Path, arch: str, which: int, devices: int) -> list[str]:
    run = GuestRun(compile_c(HERE / "scenarios.c", tmp_path, arch, "scenarios"), RuntimeConfig(device_count=devices))
    outcome = run.call("scenario", which)
    assert outcome.fault is None and outcome.returned == 0
    return as_native_lines(run.calls)


COMMITTED = scenarios((HERE / "native_output.txt").read_text())


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("arch", sorted(COMPILERS))
@pytest.mark.parametrize("which", sorted(COMMITTED), ids=[COMMITTED[w][0] for w in sorted(COMMITTED)])
def test_emu_prints_what_the_static_runtime_printed(tmp_path, arch, which):
    _name, devices, lines = COMMITTED[which]
    assert emu_lines(tmp_path, arch, which, devices) == lines


def _dsl_libdir() -> Path | None:
    try:
        found = subprocess.run([sys.executable, "-m", "cutlass.cute.export.aot_config", "--libdir"],
                               capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    libdir = Path(found.stdout.strip()) if found.returncode == 0 else None
    return libdir if libdir is not None and (libdir / "libcuda_dialect_runtime_static.a").is_file() else None


@pytest.mark.oracle(oracles.NATIVE)
def test_the_committed_output_is_what_the_static_runtime_prints_now(tmp_path):
    libdir = _dsl_libdir()
    if libdir is None or shutil.which("cc") is None:
        pytest.skip("needs cc and nvidia-cutlass-dsl's libcuda_dialect_runtime_static.a (the dsl extra)")
    live = subprocess.run(["sh", str(HERE / "build.sh"), str(libdir), str(tmp_path)], capture_output=True, text=True, check=True)
    assert live.stdout == (HERE / "native_output.txt").read_text()
