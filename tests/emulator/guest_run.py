"""Call any function of a compiled C object through the machine, with the CUDA and libc stubs answering.

run_object runs an export's entries; the guest-call tests call functions by name with arguments of their
own (a scenario number, a callback's address), so they set up what run_object does and call Machine.call.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from emu.arch import architecture
from emu.cache.loaded import load_image
from emu.cuda.config import RuntimeConfig
from emu.cuda.loading import library_image
from emu.cuda.runtime import CudaRuntime
from emu.emulator.machine import CallOutcome, machine_for
from emu.run.session import _bound
from emu.run.trace import CallRecord
from emu.stubs.dispatch import StubDispatcher

COMPILERS = {"x86_64": "cc", "aarch64": "aarch64-linux-gnu-gcc"}


def compile_c(source: Path | str, tmp_path: Path, arch: str, name: str = "t", flags: tuple[str, ...] = ("-O1", "-fno-pic")) -> str:
    """`source` (a path, or C text) compiled to an object for `arch`."""
    compiler = COMPILERS[arch]
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} not installed")
    if not isinstance(source, Path):
        (tmp_path / f"{name}.c").write_text(source)
        source = tmp_path / f"{name}.c"
    obj = tmp_path / f"{name}_{arch}.o"
    subprocess.run([compiler, *flags, "-c", str(source), "-o", str(obj)], check=True)
    return str(obj)


class GuestRun:
    """One object mapped in its machine, with a fresh runtime and call log."""

    def __init__(self, path: str, config: RuntimeConfig | None = None):
        self.image, exports = load_image(path)
        export = exports[0] if len(exports) == 1 else None
        arch = architecture(self.image.obj.arch)
        self.machine = machine_for(arch)
        self.machine.load(*_bound(self.image))
        # the export's kernels and GPU binary, as run_object gives them, where the object is one export
        self.runtime = CudaRuntime(config or RuntimeConfig(), export.kernels if export else [],
                                   library_image(self.image, export.binary) if export else None)
        self.dispatcher = StubDispatcher(self.runtime, self.machine.set_stub_result, arch.convention)
        self.machine.dispatcher = self.dispatcher

    @property
    def calls(self) -> list[CallRecord]:
        return self.dispatcher.calls

    def address(self, symbol: str) -> int:
        return self.image.functions[symbol]

    def call(self, symbol: str, *args: int, **limits) -> CallOutcome:
        return self.machine.call(self.address(symbol), list(args), **limits)
