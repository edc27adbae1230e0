"""TVM-FFI exports found as they are: `__tvm_ffi_<name>` with its internal loaders, the signature the entry quotes
(parsed as `cutlass.base_dsl.tvm_ffi_builder.spec.signature` writes it), the stride order its mangled launch-function
name spells, and default arguments that pass the object's own checks.  Objects: tests/data/tvm_ffi (build.py)."""
from __future__ import annotations

import pytest

import emu
from conftest import ROOT
from emu.cache.loaded import load_image
from emu.dsl.tvm_ffi.arguments import default_arguments, parse_arguments
from emu.dsl.tvm_ffi.signature import compact_strides, parse_signature, stride_order
from emu.errors import BadInput

DATA = ROOT / "tests" / "data" / "tvm_ffi"


def _export(name: str):
    export, = load_image(str(DATA / f"{name}.o"))[1]
    return export


def test_a_tvm_ffi_object_is_one_export_named_by_its_entry():
    export = _export("pair_add")
    assert (export.name, export.prefix, export.launch_abi) == ("pair_add", "__cute_internal_pair_add", "tvm_ffi")
    assert export.entry_symbol("tvm_ffi") == "__tvm_ffi_pair_add" and export.launch_function is None
    assert export.mangled_function.startswith("__cute_internal_pair_add_cutlass_pair_add_FakeTensorFloat16")
    assert export.ffi_signature == ("pair_add(x: Tensor([n0, 64], float16), y: Tensor([n0, 64], float16), k: int32, "
                                    "flag: bool)")
    assert export.kernel_info == {} and export.version is None and export.binary is not None
    assert export.kernels == ["kernel_cutlass_add_kernel_tensorptrf16gmemalign16o641i64_tensorptrf16gmemalign16o641i64___0"]


def test_the_signature_is_read_param_by_param():
    params = parse_signature(_export("vec_scale").ffi_signature)
    assert [(p.name, p.kind, p.dtype, p.shape) for p in params] == [
        ("x", "tensor", "float32", ("n0",)), ("s", "float", "float32", ()), ("stream", "stream", None, ())]
    odd = parse_signature("f(a: Tensor([4, m], bfloat16), b: Int(3), c: Bool(False), d: None, e: Shape([n0]), g: int64, "
                          "h: Tuple[int32, float32], i: DataPointer)")
    assert [(p.kind, p.value) for p in odd] == [("tensor", None), ("const_int", 3), ("const_bool", False), ("none", None),
                                                ("shape", None), ("int", None), ("tuple", None), ("pointer", None)]
    assert odd[0].shape == (4, "m")


def test_the_mangled_name_says_the_fake_tensors_are_column_major():
    """make_fake_compact_tensor lays (n0, 64) out with strides (1, n0): `div1 64 | 1 i64div1` in the name."""
    export = _export("pair_add")
    x, y = parse_signature(export.ffi_signature)[:2]
    assert stride_order(export.mangled_function, 0, x) == stride_order(export.mangled_function, 1, y) == "F"
    assert compact_strides([128, 64], "F") == [1, 128] and compact_strides([128, 64], "C") == [64, 1]
    assert stride_order(None, 0, x) is None


def test_defaults_share_a_symbolic_extent_and_pass_the_objects_checks():
    export = _export("pair_add")
    args = default_arguments(parse_signature(export.ffi_signature), export.mangled_function)
    x, y = args[0].tensor, args[1].tensor
    assert x.shape == y.shape == [128, 64] and x.strides == [1, 128] and x.data != y.data and x.data % 16 == 0
    run = emu.trace(DATA / "pair_add.o")
    entry, = run.entries
    assert (entry.entry, entry.returned, entry.raised) == ("tvm_ffi", 0, None)


def test_an_argument_that_is_not_of_the_form_is_named():
    with pytest.raises(BadInput, match=r"argument #1 .* not valid: item: Value error, an argument is one of"):
        parse_arguments([{"int": 1}, {"int": 2, "float": 1.0}])
    with pytest.raises(BadInput, match=r"argument #0 .*tensor.device: Value error, unknown device 'gpu:0'"):
        parse_arguments([{"tensor": {"dtype": "float16", "shape": [2], "device": "gpu:0"}}])
    with pytest.raises(BadInput, match=r"argument #0 .*2 strides for 1 extents"):
        parse_arguments([{"tensor": {"dtype": "float16", "shape": [2], "strides": [1, 1]}}])
    with pytest.raises(BadInput, match="a list"):
        parse_arguments({"x": 1})
    parsed = parse_arguments([{"tensor": {"dtype": "float16", "shape": [8, 4096], "strides": None, "data": "0x7f0000000000"}},
                              None, {"bool": True}, {"stream": 0x5000}])
    assert parsed[0].tensor.strides is None and parsed[0].tensor.strides_given and parsed[0].tensor.data == 0x7F00_0000_0000
    assert parsed[1] is None and parsed[2].kind == "bool"


def test_inspect_tells_the_form_and_what_it_does_not_carry(cli):
    result = cli("inspect", str(DATA / "vec_scale.o"))
    assert result.code == 0
    assert "TVM-FFI export vec_scale: entry __tvm_ffi_vec_scale(self, args, num_args, result)" in result.out
    assert "no __cute_internal_vec_scale_kernel_info: check cannot compare" in result.out
    assert "header wrapper" not in result.out and "4.3" not in result.out and "4.4" not in result.out
    described = emu.inspect(DATA / "vec_scale.o")
    assert described.tvm_ffi.signature.startswith("vec_scale(") and described.generation.launch_wrapper is None
