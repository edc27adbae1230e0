"""`inspect` names the release that wrote each export; `trace` and `check` run each generation right.

Every committed fixture was built by a known nvidia-cutlass-dsl release (MANIFEST.json's dsl_version):
the range emu states must contain it, with the header beside the object and without, and must be as
narrow as the fixtures of this repository allow for the 4.3, 4.4 and 4.5 exports.
"""
from __future__ import annotations

import json
import re
import shutil
import struct
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from emu.commands.inspect import inspect_object

FIXTURES = ROOT / "tests" / "fixtures"
_MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
ALL = _MANIFEST["fixtures"] + _MANIFEST.get("fixtures_4_3", [])
FORMAT = {"4.3.5": "4.3"}
# The narrowest statement the evidence supports, with the header and without it.
EXPECTED = {"4.3.5": ("nvidia-cutlass-dsl 4.3.x", "nvidia-cutlass-dsl 4.3.x"),
            "4.4.2": ("nvidia-cutlass-dsl 4.4.x", "nvidia-cutlass-dsl 4.4.x"),
            "4.5.0": ("nvidia-cutlass-dsl 4.5.x", "nvidia-cutlass-dsl 4.5.0 or later"),
            "4.5.3": ("nvidia-cutlass-dsl 4.5.x", "nvidia-cutlass-dsl 4.5.0 or later")}


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def allows(statement: str, version: str) -> bool:
    """Whether `version` is inside the range `exported_by` states."""
    series = re.fullmatch(r"nvidia-cutlass-dsl (\d+\.\d+)\.x", statement)
    if series:
        return version.startswith(series.group(1) + ".")
    span = re.fullmatch(r"nvidia-cutlass-dsl ([\d.]+) to ([\d.]+|\d+\.\d+\.x)", statement)
    if span:
        high = span.group(2)          # "4.5.x": every 4.5 release; "4.5.2": up to that one
        top = _key(high[:-2]) + (10 ** 6,) if high.endswith(".x") else _key(high)
        return _key(span.group(1)) <= _key(version) <= top
    later = re.match(r"nvidia-cutlass-dsl ([\d.]+) or later \(", statement)
    if later:
        return _key(later.group(1)) <= _key(version)
    raise AssertionError(f"not a range: {statement}")


def _alone(entry: dict, tmp_path: Path) -> Path:
    copy = tmp_path / Path(entry["path"]).name
    shutil.copyfile(FIXTURES / entry["path"], copy)
    return copy


@pytest.mark.parametrize("entry", ALL, ids=[e["path"] for e in ALL])
def test_exported_by_contains_the_building_release(entry, tmp_path):
    with_header = inspect_object(str(FIXTURES / entry["path"]))[0].generation
    alone = inspect_object(str(_alone(entry, tmp_path)))[0].generation
    version = entry["dsl_version"]
    assert with_header.header is not None and alone.header is None
    for generation in (with_header, alone):
        assert allows(generation.exported_by, version), f"{entry['path']}: {generation.exported_by}"
        assert generation.format == FORMAT.get(version, "4.4+"), entry["path"]
    if version in EXPECTED:
        assert (with_header.exported_by.split(" (")[0], alone.exported_by.split(" (")[0]) == EXPECTED[version]


def test_allows_reads_each_form():
    assert allows("nvidia-cutlass-dsl 4.5.x", "4.5.3") and not allows("nvidia-cutlass-dsl 4.5.x", "4.6.0")
    assert allows("nvidia-cutlass-dsl 4.5.0 to 4.5.x", "4.5.3") and not allows("nvidia-cutlass-dsl 4.5.0 to 4.5.x", "4.6.0")
    assert not allows("nvidia-cutlass-dsl 4.5.0 to 4.5.x", "4.4.2") and allows("nvidia-cutlass-dsl 4.4.0 to 4.5.2", "4.5.2")
    assert allows("nvidia-cutlass-dsl 4.6.0 or later (the format ...)", "4.8.1")
    assert not allows("nvidia-cutlass-dsl 4.6.0 or later (the format ...)", "4.5.3")


def test_inspect_names_the_43_generation_and_how_it_is_called():
    result = run_cli("inspect", str(FIXTURES / "cutlass-dsl-4.3.5" / "native" / "two_kernels.o"))
    assert result.code == 0
    assert "exported by nvidia-cutlass-dsl 4.3.x" in result.out
    assert "loaders take the library handle by value; header wrapper two_kernels_wrapper" in result.out
    assert "no two_kernels_kernel_info in the object" in result.out
    generation = run_cli("inspect", "--json", str(FIXTURES / "cutlass-dsl-4.4.2" / "native" / "pdl.o")).json()["generation"]
    assert generation["format"] == "4.4+" and generation["launch_wrapper"] == "cute_dsl_pdl_wrapper"
    assert any("FullArgSpec" in clause for clause in generation["evidence"])


def test_43_kernels_come_from_their_slots():
    """A 4.3 export has no kernel_info: its kernels are its `kernel_*` slots, in the object's order."""
    result, = inspect_object(str(FIXTURES / "cutlass-dsl-4.3.5" / "native" / "two_kernels.o"))
    assert [k.kernel for k in result.kernels] == ["kernel_cutlass_rotate_tensorptrf32gmemalign16o1281_0",
                                                  "kernel_cutlass_negate_tensorptrf32gmemalign16o1281_1"]
    assert result.kernel_info is None and result.signature is None and result.version is None


def test_check_on_a_43_export_says_what_it_can_and_cannot_check():
    path = FIXTURES / "cutlass-dsl-4.3.5" / "native" / "two_kernels.o"
    result = run_cli("check", str(path))
    assert result.code == 0, result.out + result.err          # every loader returned 0: nothing wrong was seen
    assert "returned 400" not in result.out
    assert "no two_kernels_kernel_info in the object" in result.out and "cannot be checked" in result.out
    loaders = run_cli("check", "--json", str(path)).json()["objects"][0]["loaders"]
    assert [loader["returned"] for loader in loaders] == [0] * len(loaders) and len(loaders) >= 2
    assert all(len(loader["sets"]) == 4 for loader in loaders)     # attributes 8 and 14 on both kernels


def test_trace_of_a_43_object_alone_keeps_the_loaders_and_refuses_the_launch(tmp_path):
    entry = next(e for e in ALL if e["path"] == "cutlass-dsl-4.3.5/native/two_kernels.o")
    result = run_cli("trace", str(_alone(entry, tmp_path)))
    assert result.code == 2
    assert "cuda_load -> 0 SUCCESS" in result.out and "cuda_load_to_device(device=0) -> 0 SUCCESS" in result.out
    assert result.out.count("_cudaFuncSetAttribute(") == 4 and "_cudaLaunchKernelEx" not in result.out
    assert "entry launch was not run" in result.err and "nvidia-cutlass-dsl 4.3.x" in result.err
    assert "two_kernels_args_spec" in result.err and "two_kernels_wrapper" in result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err


def test_trace_of_a_43_object_with_its_header_passes_only_the_set_launch_attributes():
    result = run_cli("trace", "--json", str(FIXTURES / "cutlass-dsl-4.3.5" / "native" / "pdl.o"))
    assert result.code == 0, result.err
    (launch,) = [c for c in result.json()[0]["calls"] if c["symbol"] == "_cudaLaunchKernelEx"]
    assert [(a["id"], a["value"]) for a in launch["args"]["config"]["attrs"]] == [(6, {"programmaticStreamSerializationAllowed": 1})]


def _without_slot_names(tmp_path: Path) -> Path:
    """A 4.3 object whose kernel slots are renamed `xernel_*` in its string table: nothing says its format."""
    source = FIXTURES / "cutlass-dsl-4.3.5" / "native" / "plain.o"
    data = bytearray(source.read_bytes())
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    symtab = next(i for i in range(shnum) if struct.unpack_from("<I", data, shoff + i * shentsize + 4)[0] == 2)
    strtab, = struct.unpack_from("<I", data, shoff + symtab * shentsize + 40)       # the symbol table's sh_link
    offset, size = struct.unpack_from("<QQ", data, shoff + strtab * shentsize + 24)
    table = bytes(data[offset:offset + size]).replace(b"\0kernel_", b"\0xernel_")
    data[offset:offset + size] = table
    target = tmp_path / "plain.o"
    target.write_bytes(bytes(data))
    return target


def test_an_object_that_does_not_say_its_format_has_its_loads_refused(tmp_path):
    path = _without_slot_names(tmp_path)
    generation = inspect_object(str(path))[0].generation
    assert generation.format == "unknown" and "unknown nvidia-cutlass-dsl release" in generation.exported_by
    result = run_cli("trace", str(path))
    assert result.code == 2
    assert "cuda_init -> 0 SUCCESS" in result.out and "cuda_load ->" not in result.out
    assert "entry cuda_load was not run: cannot tell how plain_cuda_load takes the library" in result.err
    assert "Traceback" not in result.err
