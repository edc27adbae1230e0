"""TVM-FFI Shape and Tuple parameters: the signature's `Shape([...])` and `Tuple[...]` read recursively, the argument
form's `{shape: [...]}` and `{tuple: [...]}` (errors naming the item's path), their defaults, and the objects emu
lays out (ffi.Shape, ffi.Array, ffi.Tensor inside an array) compared with the REAL libtvm_ffi.so's: objects.c makes
the same objects with the library's own constructors and prints their layout, and emu's guest bytes must read the
same, header, cell and inline storage alike."""
from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import pytest

from emu.abi.base import LaunchPlan
from emu.abi.tvm_ffi import TVM_FFI
from emu.dsl.tvm_ffi.arguments import default_arguments, parse_arguments
from emu.dsl.tvm_ffi.signature import parse_signature, signature_text, tensor_orders
from emu.errors import BadInput
from tests import oracles
from tests.oracles import tvm_ffi_native as native

from test_launch_abi import FakeMemory

OWN = native.FIXTURES / "own"
STRIDED = {"tensor": {"dtype": "float32", "shape": [128, 8], "strides": [1, 128], "data": 0x7F00_0100_0000}}
COMPACT = {"tensor": {"dtype": "float32", "shape": [128, 8], "strides": None, "data": 0x7F00_0100_0000}}
EXTENTS = {"shape": [4, 128, -1]}
# the objects objects.c makes with the library: a shape, and an array of every item kind with a nested array
ARGS = [EXTENTS, {"tuple": [{"int": 3}, None, {"bool": True}, {"float": 0.5}, {"stream": 0x5757}, STRIDED, COMPACT,
                            {"tuple": [{"int": 2}, EXTENTS]}]}]


def _signature(name: str) -> str:
    """The signature the committed object's entry quotes."""
    return signature_text([(OWN / f"{name}.o").read_bytes()], name)


def _internal_name(name: str) -> str:
    listing = subprocess.run(["nm", str(OWN / f"{name}.o")], check=True, capture_output=True, text=True).stdout
    return next(line.split()[-1] for line in listing.splitlines() if f"__cute_internal_{name}_cutlass_" in line)


def test_shape_and_tuple_parameters_are_read_from_the_real_signatures():
    nested = parse_signature(_signature("nested_tuple"))
    assert [p.kind for p in nested] == ["tensor", "tuple", "tuple", "stream"]
    extents, pair = nested[1], nested[2]
    assert [(e.name, e.kind, e.shape) for e in extents.elements] == [("extents[0]", "shape", ("n1", 4)),
                                                                      ("extents[1]", "int", ())]
    assert [(e.kind, e.dtype, e.shape) for e in pair.elements] == [("tensor", "float32", ("n4", 8)), ("int", "int32", ())]
    dataclass = parse_signature(_signature("dataclass_arg"))[1]
    assert [(e.kind, e.value) for e in dataclass.elements] == [("tensor", None), ("tensor", None), ("float", None),
                                                              ("int", None), ("none", None), ("const_int", 2)]
    assert parse_signature(_signature("shape_arg"))[1][1:5] == ("shape", "Shape([n1, 4])", None, ("n1", 4))
    odd = parse_signature("f(a: Shape([x+1]), b: Tuple[int32, Weird(3)])")
    assert odd[0].kind == "unknown" and odd[1].elements[1].kind == "unknown"      # never guessed


def test_a_tensor_inside_a_tuple_takes_its_flattened_place_in_the_mangled_name():
    """nested_tuple's pair[0] and dataclass_arg's args.aux are column-major (stride_order=(0, 1) when built); the
    dataclass's field names run into its tensors' layouts (`auxFakeTensorFloat32div181i64div1alphaFloat32...`)."""
    params = parse_signature(_signature("nested_tuple"))
    assert tensor_orders(params, _internal_name("nested_tuple")) == [None, (0, 1)]
    params = parse_signature(_signature("dataclass_arg"))
    assert tensor_orders(params, _internal_name("dataclass_arg")) == [None, None, (0, 1)]


def test_defaults_recurse_with_distinct_data_and_the_stride_order():
    params = parse_signature(_signature("nested_tuple"))
    x, extents, pair, stream = (a.shown() if a else None
                                for a in default_arguments(params, _internal_name("nested_tuple")))
    assert extents == {"tuple": [{"shape": [128, 4]}, {"int": 1}]}
    inner = pair["tuple"][0]["tensor"]
    assert (inner["shape"], inner["strides"]) == ([128, 8], [1, 128])
    assert inner["data"] == x["tensor"]["data"] + 0x100_0000
    dataclass = default_arguments(parse_signature(_signature("dataclass_arg")), _internal_name("dataclass_arg"))
    assert [a.shown() if a else None for a in dataclass[1].tuple_][2:] == [{"float": 1.0}, {"int": 1}, None, {"int": 2}]
    assert dataclass[1].tuple_[1].tensor.strides == [1, 128]
    with pytest.raises(BadInput, match=r"parameter b\[1\]: Weird\(3\) has no default"):
        default_arguments(parse_signature("f(a: int32, b: Tuple[int32, Weird(3)])"), None)


def test_an_item_inside_a_tuple_is_named_by_its_path():
    with pytest.raises(BadInput, match=r"argument #1\.tuple\[2\]\.tuple\[0\] \(\{'int': 1\.5\}\) is not valid: int"):
        parse_arguments([None, {"tuple": [None, {"int": 1}, {"tuple": [{"int": 1.5}]}]}])
    with pytest.raises(BadInput, match=r"argument #0 .*shape\.1: Input should be a valid integer"):
        parse_arguments([{"shape": [1, "n"]}])
    with pytest.raises(BadInput, match=r"argument #0 .*not shape and tuple together"):
        parse_arguments([{"shape": [1], "tuple": []}])
    deep: dict = {"int": 1}
    for _ in range(40):
        deep = {"tuple": [deep]}
    with pytest.raises(BadInput, match=r"argument #0 nests tuples deeper than 32"):
        parse_arguments([deep])
    parsed = parse_arguments([{"tuple": [None, {"shape": []}, {"tuple": []}]}])
    assert parsed[0].kind == "tuple" and parsed[0].tuple_[0] is None and parsed[0].tuple_[1].shape == []


def _emu_layout(memory, cell: bytes) -> dict:
    """objects.c's description of an item, read from emu's guest bytes."""
    type_index, padding, value = struct.unpack("<iIQ", cell)
    if type_index < 64:
        shown = struct.unpack("<d", struct.pack("<Q", value))[0] if type_index == 3 else struct.unpack("<q", cell[8:])[0]
        return {"type_index": type_index, "padding": padding, "value": shown}
    refs, own_index, _, _ = struct.unpack("<QiIQ", memory.read(value, 24))
    out = {"type_index": own_index, "strong": refs & 0xFFFF_FFFF, "weak": refs >> 32}

    def pointer(p):
        return None if not p else {"offset": p - value} if value <= p < value + 4096 else "outside"
    if own_index == 69:
        data, size = struct.unpack("<QQ", memory.read(value + 24, 16))
        out |= {"data": pointer(data), "size": size, "extents": list(struct.unpack(f"<{size}q", memory.read(data, 8 * size)))}
    elif own_index == 71:
        data, size, capacity, deleter = struct.unpack("<QqqQ", memory.read(value + 24, 32))
        out |= {"data": pointer(data), "size": size, "capacity": capacity, "data_deleter": int(deleter != 0),
                "items": [_emu_layout(memory, memory.read(data + 16 * i, 16)) for i in range(size)]}
    elif own_index == 70:
        data, dev_type, dev_id, ndim, code, bits, lanes, shape, strides, offset = struct.unpack(
            "<QiiiBBHQQQ", memory.read(value + 24, 48))
        out["tensor"] = {"data": data, "device": [dev_type, dev_id], "ndim": ndim, "dtype": [code, bits, lanes],
                         "shape": list(struct.unpack(f"<{ndim}q", memory.read(shape, 8 * ndim))),
                         "strides_at": pointer(strides),
                         "strides": list(struct.unpack(f"<{ndim}q", memory.read(strides, 8 * ndim))),
                         "byte_offset": offset}
    return out


@pytest.mark.oracle(oracles.TVM_FFI)
def test_emu_lays_out_shapes_arrays_and_tensors_as_libtvm_ffi_does(tmp_path):
    if not native.available():
        pytest.skip("needs cc and the apache-tvm-ffi wheel (the dsl extra)")
    libs = native.libraries()
    exe = tmp_path / "objects"
    subprocess.run(["cc", "-O0", "-I", str(native.NATIVE), "-I", str(libs["tvm_ffi_include"]), str(native.NATIVE / "objects.c"),
                    f"-L{libs['tvm_ffi_lib']}", "-ltvm_ffi", f"-Wl,-rpath,{libs['tvm_ffi_lib']}", "-o", str(exe)],
                   check=True, capture_output=True)
    real = json.loads(subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout)
    memory = FakeMemory()
    plan = LaunchPlan(None, {"arguments": parse_arguments(ARGS), "orders": []}, {"args": []})
    arguments = TVM_FFI.marshal(plan, memory, 0)
    array = arguments.registers[1]
    emu = {"shape": _emu_layout(memory, memory.read(array, 16)), "array": _emu_layout(memory, memory.read(array + 16, 16))}
    assert emu == real
    assert plan.record["args"][1]["tuple"][6]["tensor"]["strides"] == [8, 1]     # filled as Tensor::FromDLPack does


def test_a_signature_nesting_tuples_past_the_bound_is_unknown_not_a_stack_overflow():
    """The signature is text from the object (untrusted): tuples nested deeper than any compiled signature would be
    are read as a type emu does not know, so the defaults refuse it by name instead of the parser recursing
    until Python's stack runs out."""
    from emu.dsl.tvm_ffi.signature import MAX_TUPLE_DEPTH, parse_signature
    from emu.errors import BadInput

    for depth in (MAX_TUPLE_DEPTH, MAX_TUPLE_DEPTH + 1, 5000):
        (param,) = parse_signature("f(x: " + "Tuple[" * depth + "int32" + "]" * depth + ")")
        inner = param
        for _ in range(min(depth, MAX_TUPLE_DEPTH)):
            assert inner.kind == "tuple"
            (inner,) = inner.elements
        assert inner.kind == ("int" if depth <= MAX_TUPLE_DEPTH else "unknown")
        if depth > MAX_TUPLE_DEPTH:
            with pytest.raises(BadInput, match="has no default"):
                default_arguments([param], None)
