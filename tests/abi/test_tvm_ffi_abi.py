"""Apache TVM-FFI's ABI marshalled byte for byte: 16-byte TVMFFIAny cells (c_api.h: int32 type index, zero padding,
8-byte value), 48-byte DLTensors (dlpack.h) with int64 shape and strides (or a NULL strides pointer), the
registers (self = NULL, args, num_args, result), the int32 return and the result cell read back."""
from __future__ import annotations

import struct
from types import SimpleNamespace

from emu.abi import launch_abi
from emu.abi.base import LaunchPlan
from emu.abi.tvm_ffi import TVM_FFI
from emu.dsl.tvm_ffi.arguments import parse_arguments

from test_launch_abi import FakeMemory

ARGS = [{"tensor": {"dtype": "bfloat16", "shape": [8, 4096], "strides": [4096, 1], "data": 0x7F00_0000_0000,
                    "byte_offset": 64, "device": "cuda:1"}},
        {"tensor": {"dtype": "float16", "shape": [2], "strides": None}},
        {"int": -5}, {"float": 2.5}, {"bool": True}, {"stream": 0x5000}, None]


def _marshalled():
    memory = FakeMemory()
    plan = LaunchPlan(None, {"arguments": parse_arguments(ARGS), "orders": []}, {"args": []})
    return memory, plan, TVM_FFI.marshal(plan, memory, 0)


def test_the_abi_is_registered_by_name():
    assert launch_abi("tvm_ffi") is TVM_FFI


def test_each_argument_is_a_16_byte_cell_and_the_registers_are_self_args_count_result():
    memory, plan, arguments = _marshalled()
    self_, array, count, result = arguments.registers
    assert self_ == 0 and count == 7 and arguments.outcome_at == result
    cells = [struct.unpack("<iIQ", memory.read(array + 16 * i, 16)) for i in range(7)]
    assert [c[0] for c in cells] == [7, 7, 1, 3, 2, 4, 0] and all(c[1] == 0 for c in cells)
    assert cells[2][2] == (-5) & (1 << 64) - 1 and struct.unpack("<d", struct.pack("<Q", cells[3][2]))[0] == 2.5
    assert cells[4][2] == 1 and cells[5][2] == 0x5000 and cells[6][2] == 0
    assert struct.unpack("<iIQ", memory.read(result, 16)) == (0, 0, 0)          # the result cell starts as None


def test_a_tensor_is_a_dltensor_with_its_shape_and_strides_or_null():
    memory, plan, arguments = _marshalled()
    first = struct.unpack("<iIQ", memory.read(arguments.registers[1], 16))[2]
    data, dev_type, dev_id, ndim, code, bits, lanes, shape, strides, offset = struct.unpack(
        "<QiiiBBHQQQ", memory.read(first, 48))
    assert (data, dev_type, dev_id, ndim, code, bits, lanes, offset) == (0x7F00_0000_0000, 2, 1, 2, 4, 16, 1, 64)
    assert struct.unpack("<2q", memory.read(shape, 16)) == (8, 4096)
    assert struct.unpack("<2q", memory.read(strides, 16)) == (4096, 1)
    second = struct.unpack("<iIQ", memory.read(arguments.registers[1] + 16, 16))[2]
    fields = struct.unpack("<QiiiBBHQQQ", memory.read(second, 48))
    assert fields[0] == 0xD100_0000 and fields[4:6] == (2, 16) and fields[8] == 0      # fake data; strides NULL
    assert plan.record["args"][1]["tensor"]["strides"] is None


def test_the_outcome_is_the_signed_int32_of_the_return_register_and_the_result_cell_is_read():
    assert TVM_FFI.outcome(None, None, 0xFFFF_FFFF) == -1 and TVM_FFI.outcome(None, None, 0x1_0000_0000) == 0
    assert TVM_FFI.outcome(None, None, None) is None
    memory = FakeMemory()
    session = SimpleNamespace(image=None, ret_slot=0, machine=SimpleNamespace(host=memory))
    export = SimpleNamespace(ffi_signature="f(n: int32)", mangled_function=None, name="f", ffi_device_type=None)
    seen = {}

    def call(entry, registers, shown, launch, read_outcome, read_raised):
        memory.write(registers[3], struct.pack("<iIq", 1, 0, 42))       # the entry stores an int result
        seen.update(entry=entry, returned=read_outcome(0), launch=launch, raised=read_raised())
        return True

    assert TVM_FFI.run(call, session, export, "f.o", None, read_raised=lambda: None)
    assert seen["entry"] == "tvm_ffi" and seen["returned"] == 0
    assert seen["launch"]["result"] == {"type_index": 1, "value": 42} and seen["launch"]["args"] == [{"int": 1}]
