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
    assert stride_order(export.mangled_function, 0, x) == stride_order(export.mangled_function, 1, y) == (0, 1)
    assert compact_strides([128, 64], (0, 1)) == [1, 128] and compact_strides([128, 64], None) == [64, 1]
    assert compact_strides([2, 3, 4], (1, 0, 2)) == [3, 1, 6]
    assert stride_order(None, 0, x) is None


def test_defaults_share_a_symbolic_extent_and_pass_the_objects_checks():
    export = _export("pair_add")
    args = default_arguments(parse_signature(export.ffi_signature), export.mangled_function)
    x, y = args[0].tensor, args[1].tensor
    assert x.shape == y.shape == [128, 64] and x.strides == [1, 128] and x.data != y.data and x.data % 16 == 0
    run = emu.trace(DATA / "pair_add.o")
    call, end = run.entries
    assert (call.entry, call.returned, call.raised, end.entry) == ("tvm_ffi", 0, None, "process_exit")


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


def test_what_real_world_objects_write_differently_is_read_too():
    """Read off objects built as real projects build them (tvm-native's fixtures): the signature quotes the Python
    function's name (`__call__` of a kernel class, not the export's), a CPU torch tensor's checks ask for
    device_type=cpu, a GEMM's later operands lose their part of a name cut at 180 characters, and a class's kernel
    slot is `kernels_cutlass_dsl_<class>_kernel_...`."""
    from types import SimpleNamespace

    from emu.dsl.tvm_ffi.export import _kernel_slots
    from emu.dsl.tvm_ffi.signature import expected_device_type, signature_text, tensor_orders
    data = b"\0Expects 2 parameters\0 when calling: `__call__(mX: Tensor([n0, 4096], bfloat16), stream: Stream)`\0"
    assert signature_text([data], "func") == "__call__(mX: Tensor([n0, 4096], bfloat16), stream: Stream)"
    assert signature_text([data + data.replace(b"mX", b"mY")], "func") is None            # two, neither func's
    assert expected_device_type([b"\0, expected device_type=cpu\0"]) == "cpu"
    assert expected_device_type([b"\0, expected device_type=cpu\0, expected device_type=cuda\0"]) is None
    name = ("__cute_internal_hopper_gemm_cutlass___call___example_cute_hopper_kernel_dense_gemm_dense_gemmHopperWgmma"
            "GemmKernel_object_at__FakeTensorFloat16div1div8div1i64div81i64div8_FakeTensorFloat16div8div8div1i64div81")
    params = parse_signature("__call__(a: Tensor([n0, n1, n2], float16), b: Tensor([n3, n4, n5], float16), "
                             "c: Tensor([n6, n7, n8], float16), stream: Stream)")
    assert tensor_orders(params, name) == [(1, 0, 2)] * 3          # mode 1 contiguous, as a's part says
    symbols = [SimpleNamespace(name=n, defined=True) for n in ("kernels_binary", "kernels_cutlass_dsl_add_kernel_0")]
    assert _kernel_slots(SimpleNamespace(symbols=symbols)) == ["cutlass_dsl_add_kernel_0"]
