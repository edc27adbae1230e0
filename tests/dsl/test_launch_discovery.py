"""Reading a tensor's struct without the header: the mangled name's parts and the launch code's loads.

The loads below are those the real-world exports' launch code makes (tests/fixtures/realworld, recorded
with Machine.probe_reads): portable x86-64 and AArch64 builds load each field on its own, LLVM merges
two int32 extents into one 64-bit load in export_add_one, and host-CPU builds load strides with
16- and 32-byte vector loads that only the AVX unit sees.
"""
from __future__ import annotations

import pytest

from emu.dsl.header.parse import parse_header
from emu.cache.loaded import load_image
from emu.dsl.launch.discovery import read_layout, reads_fit_kind, struct_key
from emu.dsl.launch.mangled import name_allows, name_kinds, tensor_tokens, token_structs
from emu.dsl.launch.signature import from_header
from tests.oracles.recorder_lines import OBJECTS, ROOT

X86 = [entry for entry in OBJECTS if entry["host"] == "x86_64"]


@pytest.mark.parametrize("entry", X86, ids=[entry["prefix"] for entry in X86])
def test_every_readable_name_part_spells_the_header_struct(entry):
    """Each fake tensor's part of the real mangled names, read every way its digits allow, gives exactly
    the struct the header declares, and a from_dlpack tensor's part allows it (the parts cut off at 180
    characters are not read)."""
    _, (export,) = load_image(str(ROOT / entry["path"]))
    header = parse_header((ROOT / entry["header"]).read_text(), entry["header"], "x86_64")
    tensors = [p for p in from_header(header, entry["header"]).params if p.kind in ("tensor", "tensor_list")
               for _ in range(p.count or 1)]                    # a list's elements are passed one by one
    tokens = tensor_tokens(export.launch_function, len(tensors))
    assert tokens is not None
    for param, token in zip(tensors, tokens):
        if token.startswith("FakeTensor"):
            assert token_structs(token) == {struct_key(param.tensor)}, (param.name, token)
        else:                                       # from_dlpack: its i64 words, if any, count the 64-bit strides
            allows = name_allows(token)
            assert allows is None or allows(struct_key(param.tensor)), (param.name, token)


@pytest.mark.parametrize("token, structs", [
    ("FakeTensorFloat16_div1_div8_i64_div8_1_128", {(2, 4, 1, 8)}),       # `_128`: the next argument, a constexpr
    ("FakeTensorFloat16div16641div16", {(1, 4, 1, 4)}),                   # use_32bit_stride: no i64
    ("FakeTensorBFloat16div14096i64div81_", {(1, 4, 1, 8)}),              # div1, 4096 | i64 div8, 1
    ("FakeTensorFloat16_4096_1_None_None", {(0, 0, 0, 0)}),               # static: {void *data}
    ("FakeTensorInt64div11_None_", {(1, 4, 0, 0)}),
    ("FakeTensorFloat4E2M1FNx2div1div1", {(1, 4, 1, 4)}),                 # rank 1: one extent, one stride
    ("FakeTensorFloat16div1641div16", {(1, 4, 1, 4)}),      # div1 64 | 1 div16, div1 6 | 41 div16, div1641 | div16: all agree
    ("FakeTensorBF", None), ("Ptrgmem", None),
])
def test_name_parts_are_read_every_way_they_can_be(token, structs):
    assert token_structs(token) == (frozenset(structs) if structs is not None else None)


def test_a_cut_name_keeps_its_last_word_only_when_it_says_tensor():
    prefix = "_mlir_p__mlir_ciface_cutlass_f_" + "x" * 150
    assert name_kinds(prefix + "_FakeTensorFloat16div1_None_FakeTensorBF") == ["T", "N", "T"]
    assert name_kinds(prefix + "_FakeTensorFloat16div1_None_FakeTensorF16div1_Non") == ["T", "N", "T"]
    assert name_kinds("_mlir_p__mlir_ciface_cutlass_f_FakeTensorFloat16div1_None_FakeStream") == ["T", "N"]


PORTABLE = {(0, 8), (8, 4), (12, 4), (16, 8)}
MERGED = {(0, 8), (8, 8), (16, 8)}                                           # export_add_one: two int32 in one load
VECTOR = {(0, 8), (8, 4), (12, 4), (16, 4), (20, 4), (24, 32)}             # blackwell_fmha_backward V, host CPU
VECTOR_PADDED = {(0, 8), (8, 4), (12, 4), (16, 4), (20, 4), (24, 8), (32, 16)}   # fa4 v, host CPU


@pytest.mark.parametrize("reads, token, expected", [
    (PORTABLE, None, (2, 4, 1, 8)),
    (MERGED, "FakeTensorFloat32div16div1i64div11_", (2, 4, 1, 8)),
    (MERGED, None, (2, 4, 1, 8)),            # two int32 extents in one load rather than int64 extents
    (MERGED, "Tensorgmemodiv2561i64div256_", (2, 4, 1, 8)),          # from_dlpack: one i64 word, one 64-bit stride
    (VECTOR, None, (4, 4, 4, 8)),
    (VECTOR_PADDED, None, (4, 4, 3, 8)),
    ({(0, 8), (8, 4), (12, 4)}, None, (2, 4, 0, 0)),
    ({(0, 8), (8, 4), (12, 4)}, "FakeTensorFloat16div16641div16", (1, 4, 1, 4)),   # the name decides
    ({(0, 8)}, None, (0, 0, 0, 0)),
])
def test_the_struct_the_loads_fit(reads, token, expected):
    reading = read_layout("t", reads, token)
    assert reading.reason is None
    assert struct_key(reading.layouts[0]) == expected


@pytest.mark.parametrize("reads, token, says", [
    (set(), None, "did not read tensor t"),
    ({(0, 4)}, None, "fit no"),
    ({(0, 8), (8, 4), (16, 8), (12, 2)}, None, "fit no"),
    (PORTABLE, "FakeTensorFloat16div1div1div1i64div8i64div81", "disagree with the mangled launch-function name"),
])
def test_loads_that_fit_no_struct_are_refused(reads, token, says):
    reading = read_layout("t", reads, token)
    assert reading.reason is not None and says in reading.reason


@pytest.mark.parametrize("kind, ctype, reads, fits", [
    ("tensor", None, PORTABLE, True), ("tensor", None, {(0, 4)}, False),
    ("scalar", "int32_t", {(0, 4)}, True), ("scalar", "int32_t", PORTABLE, False),
    ("scalar", "float", {(0, 4)}, True), ("stream", None, {(0, 8)}, True), ("stream", None, {(0, 8), (8, 4)}, False),
    ("scalar", "int32_t", set(), True),
])
def test_a_slot_is_read_as_its_kind_is(kind, ctype, reads, fits):
    assert reads_fit_kind(kind, ctype, reads) is fits


def _signature(*params):
    from emu.dsl.launch.signature import LaunchParam, LaunchSignature
    built = tuple(LaunchParam(name, kind) for name, kind in params)
    return LaunchSignature("args_spec", built, tuple((name, "value", 0) for name, _ in params) + (("ret", "ret", 0),))


def test_more_slots_read_than_described_is_a_tensor_list_or_refused():
    """h2_elementwise_apply's unannotated `inputs` is a list of two tensors passed slot by slot: the code
    reads one slot more than args_spec describes. With no single unannotated parameter to be that list,
    the launch is refused instead of run with every later argument shifted by one slot."""
    from emu.dsl.launch.plan import _lengths_from_code
    from emu.dsl.launch.signature import LaunchSignatureError
    from emu.dsl.launch.discovery import SlotReads
    struct = frozenset(PORTABLE)
    reads = SlotReads(4, (struct, struct, struct, frozenset({(0, 8)})))
    listed = _lengths_from_code(_signature(("inputs", "unknown"), ("result", "tensor"), ("stream", "stream")), reads, "x.o")
    assert listed.param("inputs").kind == "tensor_list" and listed.param("inputs").count == 2
    assert [slot[:2] for slot in listed.slots] == [("inputs", "list_element"), ("inputs", "list_element"),
                                                   ("result", "value"), ("stream", "value"), ("ret", "ret")]
    with pytest.raises(LaunchSignatureError, match="reads 4 args\\[\\] slots and there is no way to split them"):
        _lengths_from_code(_signature(("a", "tensor"), ("b", "tensor"), ("stream", "stream")), reads, "x.o")
    fewer = SlotReads(2, (struct, struct))                       # a trailing parameter the code never reads
    assert _lengths_from_code(_signature(("a", "tensor"), ("b", "tensor"), ("c", "tensor")), fewer, "x.o").slots[-1] == ("ret", "ret", 0)
