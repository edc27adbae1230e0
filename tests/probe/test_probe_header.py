"""The probe reads every committed export's header the way a C++ application would use it."""
from __future__ import annotations

from pathlib import Path

import pytest

from emu.probe.header import HeaderError, parse_header

ROOT = Path(__file__).resolve().parents[2]
HEADERS = sorted((ROOT / "tests" / "fixtures").glob("cutlass-dsl-*/*/*.h"))


def test_there_are_headers():
    assert len(HEADERS) >= 40


@pytest.mark.parametrize("path", HEADERS, ids=lambda p: "/".join(p.parts[-3:]))
def test_every_fixture_header(path):
    header = parse_header(path)
    old = "cutlass-dsl-4.3." in str(path)     # 4.3 wrote driver API types and other names
    assert header.prefix == path.stem
    assert header.load_function == f"{path.stem}_Kernel_{'Metadata' if old else 'Module'}_Load"
    assert header.module_type == f"{path.stem}_Kernel_{'Metadata' if old else 'Module'}_t"
    assert header.wrapper == (f"{path.stem}_wrapper" if old else f"cute_dsl_{path.stem}_wrapper")
    # the toy exports take one static 128-float tensor and a stream
    assert [(p.ctype, p.pointer, p.name) for p in header.params] == [
        (f"{path.stem}_Tensor_x_t", True, "x"), ("CUstream" if old else "cudaStream_t", False, "stream")]
    assert [(f.ctype, f.pointer, f.name, f.count) for f in header.structs[f"{path.stem}_Tensor_x_t"]] == [
        ("void", True, "data", None)]


def test_dynamic_tensor_struct(tmp_path):
    text = (HEADERS[0].read_text()
            .replace("    void *data;\n", "    void *data;\n    int32_t dynamic_shapes[2];\n    int64_t dynamic_strides[1];\n"))
    path = tmp_path / HEADERS[0].name
    path.write_text(text)
    fields = parse_header(path).structs[f"{HEADERS[0].stem}_Tensor_x_t"]
    assert [(f.ctype, f.name, f.count) for f in fields] == [
        ("void", "data", None), ("int32_t", "dynamic_shapes", 2), ("int64_t", "dynamic_strides", 1)]


HEADER_43 = ROOT / "tests" / "fixtures" / "cutlass-dsl-4.3.5" / "native" / "plain.h"


def test_header_of_dsl_4_3(tmp_path):
    header = parse_header(HEADER_43)
    assert (header.prefix, header.load_function, header.module_type, header.wrapper) == (
        "plain", "plain_Kernel_Metadata_Load", "plain_Kernel_Metadata_t", "plain_wrapper")
    assert [(p.ctype, p.name) for p in header.params] == [("plain_Tensor_x_t", "x"), ("CUstream", "stream")]


def test_not_an_export_header(tmp_path):
    path = tmp_path / "x.h"
    path.write_text("#pragma once\nint f(void);\n")
    with pytest.raises(HeaderError, match="x.h: no `static inline void <prefix>_Kernel_Module_Load"):
        parse_header(path)


def test_unreadable_struct_field(tmp_path):
    text = HEADERS[0].read_text().replace("    void *data;\n", "    void (*fn)(int);\n")
    path = tmp_path / HEADERS[0].name
    path.write_text(text)
    with pytest.raises(HeaderError, match="a field the probe cannot read"):
        parse_header(path)
