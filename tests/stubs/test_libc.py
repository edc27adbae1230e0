"""libc as host code calls it: emu's printf family, memory functions and heap against the real C library.

`data/libc_export.c` is a stand-in export (the three loader entries plus a launch function) whose
launch calls printf with every conversion, flag, width, precision and length emu supports, more
integer and double arguments than registers (so both calling conventions spill to the stack), puts,
fputs/putc (which the compiler turns into fwrite/putc), fprintf to stderr, malloc/realloc/free,
memset/memcpy and strlen.  It is compiled for x86-64 (cc) and AArch64 (aarch64-linux-gnu-gcc), run
natively (AArch64 under qemu-aarch64) for the reference text, and traced by emu with the same
arguments: the text emu records must be what glibc wrote, byte for byte (pointers aside).
"""
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from tests import oracles

DATA = Path(__file__).parents[1] / "data" / "export"
TOOLS = {"x86_64": ("cc", None), "aarch64": ("aarch64-linux-gnu-gcc", "qemu-aarch64")}
POINTER = re.compile(r"0x[0-9a-f]+")


def _build(arch: str, tmp_path: Path) -> tuple[Path, Path]:
    compiler, runner = TOOLS[arch]
    if shutil.which(compiler) is None or (runner and shutil.which(runner) is None):
        pytest.skip(f"{compiler} / {runner} not installed")
    obj = tmp_path / "P.o"
    subprocess.run([compiler, "-O1", "-c", str(DATA / "libc_export.c"), "-o", str(obj)], check=True)
    shutil.copyfile(DATA / "libc_export.h", tmp_path / "P.h")
    exe = tmp_path / "native"
    subprocess.run([compiler, "-static", str(DATA / "libc_main.c"), str(obj), "-o", str(exe)], check=True)
    return obj, exe


def _native(arch: str, exe: Path, v: int, d: float) -> subprocess.CompletedProcess:
    runner = TOOLS[arch][1]
    return subprocess.run(([runner] if runner else []) + [str(exe), str(v), repr(d)], capture_output=True, text=True)


def _emu(cli, obj: Path, v: int, d: float) -> dict:
    result = cli("trace", str(obj), "--json", "--arg", f"v={v}", "--arg", f"d={d!r}")
    return json.loads(result.out)[0], result.code


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("arch", sorted(TOOLS))
def test_output_equals_glibc(arch, tmp_path, cli):
    obj, exe = _build(arch, tmp_path)
    native = _native(arch, exe, 77, 3.14159)
    assert native.returncode == 0, native.stderr
    run, code = _emu(cli, obj, 77, 3.14159)
    assert code == 0 and run["entries"][-1]["returned"] == 0
    calls = [c for c in run["calls"] if c["entry"] == "launch"]
    stdout = "".join(c["args"]["text"] for c in calls if "text" in c["args"] and c["symbol"] != "fprintf")
    stderr = "".join(c["args"]["text"] for c in calls if c["symbol"] == "fprintf")
    assert POINTER.sub("P", stdout) == POINTER.sub("P", native.stdout)
    assert stderr == native.stderr == "err 77\n"
    symbols = [c["symbol"] for c in calls]
    assert {"malloc", "realloc", "free", "strlen", "puts", "fwrite", "putc", "fprintf"} <= set(symbols)
    heap = next(c["ret"] for c in calls if c["symbol"] == "malloc")
    assert f"p {heap:#x} nil (nil)" in stdout        # %p of the block emu's malloc returned


@pytest.mark.parametrize("arch", sorted(TOOLS))
@pytest.mark.parametrize("v, kind, status", [(13, "abort", -6), (14, "exit", 3)])
def test_abort_and_exit_end_the_entry(arch, v, kind, status, tmp_path, cli):
    obj, exe = _build(arch, tmp_path)
    native = _native(arch, exe, v, 1.0)
    assert native.returncode in (status, 128 - status, 256 + status)   # SIGABRT natively, or exit(3)
    run, code = _emu(cli, obj, v, 1.0)
    fault = run["entries"][-1]["fault"]
    assert code == 3 and fault["kind"] == kind
    assert run["calls"][-1]["symbol"] == kind                # the call itself is in the trace
    assert POINTER.sub("P", "".join(c["args"].get("text", "") for c in run["calls"] if c["symbol"] != "fprintf")) \
        == POINTER.sub("P", native.stdout)


def test_unknown_symbol_still_stops_with_the_missing_stub_message(tmp_path, cli):
    source = tmp_path / "q.c"
    source.write_text(DATA.joinpath("libc_export.c").read_text().replace("puts(\"a line\");", "qsort(0, 0, 0, 0);"))
    if shutil.which("cc") is None:
        pytest.skip("cc not installed")
    subprocess.run(["cc", "-O1", "-c", str(source), "-o", str(tmp_path / "P.o")], check=True)
    shutil.copyfile(DATA / "libc_export.h", tmp_path / "P.h")
    run, code = _emu(cli, tmp_path / "P.o", 77, 1.0)
    fault = run["entries"][-1]["fault"]
    assert code == 3 and fault["kind"] == "missing_stub" and "calls qsort, an undefined symbol emu has no stub for" in fault["message"]
