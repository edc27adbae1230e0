"""A function the binary defines itself, and a stub answers, is intercepted: calls to it reach the stub.

`t_cuda_init` calls `_cudaGetDevice`, which the object defines (its body writes 5 and returns 77,
so the entry would return 77005).  Bound (emu.binary.bindings), the call is a stub call the CUDA
model answers (device 0, cudaSuccess: the entry returns 0); unbound, the body runs.  Compiled for
x86-64 (cc) and AArch64 (aarch64-linux-gnu-gcc), non-PIC and PIC.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from emu.dsl.entries import EntrySpec
from emu.errors import ObjectFormatError
from emu.run import session
from emu.run.session import run_object

COMPILERS = {"x86_64": "cc", "aarch64": "aarch64-linux-gnu-gcc"}
SOURCE = """
__attribute__((noinline, noipa)) int _cudaGetDevice(int *device) { %s }
int t_cuda_init(void *library) { int device = 0; int status = _cudaGetDevice(&device); return status * 1000 + device; }
int t_cuda_load(void *library) { return 0; }
"""
BODY = "*device = 5; return 77;"
ENTRIES = [EntrySpec(name="cuda_init")]


def compiled(tmp_path: Path, arch: str, flags: tuple[str, ...] = ("-fno-pic",), body: str = BODY) -> str:
    compiler = COMPILERS[arch]
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} not installed")
    source, obj = tmp_path / f"t_{arch}.c", tmp_path / f"t_{arch}_{'_'.join(flags)}.o"
    source.write_text(SOURCE % body)
    subprocess.run([compiler, "-O1", "-c", *flags, str(source), "-o", str(obj)], check=True)
    return str(obj)


@pytest.mark.parametrize("flags", [("-fno-pic",), ("-fPIC",)])
@pytest.mark.parametrize("arch", sorted(COMPILERS))
def test_a_defined_modelled_function_is_answered_by_its_stub(tmp_path, monkeypatch, arch, flags):
    path = compiled(tmp_path, arch, flags)
    for bound in (True, False, True):     # one emulator: the jump is written, taken out, written again
        with monkeypatch.context() as patched:
            if not bound:
                patched.setattr(session, "provides", lambda _symbol: False)
            run = run_object(path, entries=ENTRIES)
        entry, = run.entries
        assert entry.fault is None
        if bound:
            call, = run.calls
            assert (call.symbol, call.ret, call.outputs, call.injected) == ("_cudaGetDevice", 0, {"device": 0}, False)
            assert call.caller.startswith("t_cuda_init+") and entry.returned == 0
        else:
            assert run.calls == [] and entry.returned == 77005


def test_a_defined_function_too_short_for_the_jump_is_refused(tmp_path):
    path = compiled(tmp_path, "x86_64", ("-fno-pic", "-O2"), body="return 0;")     # xor eax, eax; ret: 3 bytes, a jmp 5
    with pytest.raises(ObjectFormatError, match="_cudaGetDevice is defined in the binary and answered by a stub, "
                                                "but its 3 bytes cannot hold the 5-byte jump to the stub"):
        run_object(path, entries=ENTRIES)
