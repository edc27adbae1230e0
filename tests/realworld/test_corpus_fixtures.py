"""The real-world corpus itself is what MANIFEST.json says, and its native traces are real.

- every object and header has the recorded sha256, every recipe was built for all three hosts, the
  corpus stays small, and each args.json names exactly the header wrapper's parameters;
- each committed calls.json is reproduced by linking the object with the recording stubs again and
  running it (x86-64 and host-CPU objects here; AArch64 under qemu-aarch64), so no trace is hand-made;
- every native trace makes the loader calls FIELD_NOTES section 2 describes, for each kernel the object
  holds, and its launch returns 0 with no carveout launch attribute (14).
"""
from __future__ import annotations

import hashlib
import platform
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.oracles.recorder_lines import CORPUS, MANIFEST, OBJECTS, OPTIN_SMEM, ROOT, launch_args, native_lines, \
    phase_slice

sys.path.insert(0, str(CORPUS))
import native_recorder  # noqa: E402
from tests import oracles

IDS = [entry["path"].removeprefix("tests/fixtures/realworld/") for entry in OBJECTS]
HOSTS = {"x86_64", "aarch64", "native"}
BUDGET = 20 * 1024 * 1024


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_manifest_covers_every_host_and_stays_small():
    hosts = {}
    for entry in OBJECTS:
        hosts.setdefault(entry["prefix"], set()).add(entry["host"])
    assert len(hosts) >= 15, f"only {len(hosts)} real-world exports"
    assert all(found == HOSTS for found in hosts.values()), {p: h for p, h in hosts.items() if h != HOSTS}
    total = sum(path.stat().st_size for path in CORPUS.rglob("*") if path.is_file())
    assert total < BUDGET, f"the corpus is {total} bytes"
    assert all(f["reason"] for f in MANIFEST["failed"])


@pytest.mark.parametrize("entry", OBJECTS, ids=IDS)
def test_files_match_manifest(entry):
    obj, header = ROOT / entry["path"], ROOT / entry["header"]
    assert _sha256(obj) == entry["sha256"] and obj.stat().st_size == entry["size"]
    assert _sha256(header) == entry["header_sha256"]
    params = [p.name for p in native_recorder.wrapper_params(header, entry["prefix"])]
    assert list(launch_args(entry)) == params, "args.json must name the wrapper's parameters, in their order"


def _runnable(entry: dict) -> str | None:
    if entry["host"] == "aarch64":
        if not (shutil.which("aarch64-linux-gnu-gcc") and shutil.which("qemu-aarch64")):
            return "no aarch64-linux-gnu-gcc and qemu-aarch64 here"
    elif not (shutil.which("cc") and platform.machine() == "x86_64" and Path("/proc/cpuinfo").exists()):
        return "no cc on an x86-64 Linux machine"
    if entry["host"] == "native":
        flags = set(Path("/proc/cpuinfo").read_text().split("flags", 1)[1].split("\n", 1)[0].split())
        missing = set(entry["built_on"].get("avx_flags", [])) - flags
        if missing:
            return f"this CPU lacks {sorted(missing)}"
    return None


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("entry", OBJECTS, ids=IDS)
def test_native_trace_reproduces(entry):
    reason = _runnable(entry)
    if reason:
        pytest.skip(reason)
    arch = "aarch64" if entry["host"] == "aarch64" else "x86_64"
    args = launch_args(entry)
    fresh = native_recorder.record(ROOT / entry["path"], ROOT / entry["header"], args, arch)
    assert _stable(fresh, args) == _stable(native_lines(entry), args)


def _stable(lines: list[dict], args: dict) -> list[dict]:
    """`arg0_data` is the first 8 bytes of the kernel's first parameter: a tensor's data pointer for simple
    kernels, but part of a host-built TMA descriptor or a stack address for others, which differs run to run.
    Kept where it is one of the arguments' data pointers, otherwise marked as such."""
    pointers = {v["data"] for v in args.values() if isinstance(v, dict) and "data" in v}   # tensors only: a scalar 0 is no pointer
    return [{**line, "arg0_data": "not an argument's data pointer"}
            if "arg0_data" in line and line["arg0_data"] not in pointers else line for line in lines]


@pytest.mark.parametrize("entry", OBJECTS, ids=IDS)
def test_native_loaders_follow_field_notes(entry):
    """FIELD_NOTES section 2 on real kernels: per kernel, optin - static (0) as attribute 8, then 14 = 1."""
    lines = native_lines(entry)
    kernels = [c["name"] for c in phase_slice(lines, "cuda_load", "cuda_load_to_device") if c.get("call") == "cudaLibraryGetKernel"]
    assert sorted(kernels) == sorted(entry["kernels"])
    setters = [(c["kernel"], c["attribute"], c["value"]) for c in lines if c.get("call") == "cudaFuncSetAttribute"]
    assert setters == [(k, a, v) for k in kernels for a, v in ((8, OPTIN_SMEM), (14, 1))]
    per_device = Counter(c["device"] for c in lines if c.get("call") == "cudaKernelSetAttributeForDevice")
    assert per_device == {0: 4 * len(kernels), 1: 2 * len(kernels)}        # load_to_device(0), then devices 0, 1
    launch = phase_slice(lines, "launch")
    assert launch[-1] == {"return": 0} and "exit" not in str(lines[-1])
    launches = [c for c in launch if c.get("call") == "cudaLaunchKernelEx"]
    assert launches and all(14 not in {a["id"] for a in c["attrs"]} for c in launches)
    assert all(c["grid"][0] * c["grid"][1] * c["grid"][2] > 0 for c in launches)
