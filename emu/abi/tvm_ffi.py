"""Apache TVM-FFI's calling ABI: `int32_t __tvm_ffi_<name>(void *self, const TVMFFIAny *args, int32_t num_args,
TVMFFIAny *result)`, called as a framework calls it.

Each argument is a 16-byte `TVMFFIAny` (`tvm/ffi/c_api.h`): an int32 type index, 4 bytes of zero padding,
an 8-byte value; a tensor is a pointer (type index 7) to a 48-byte `DLTensor` (`dlpack.h`: data, device type
and id, ndim, dtype code/bits/lanes, shape pointer, strides pointer or NULL, byte_offset) with its int64
shape and strides arrays beside it.  Shapes and tuples are objects laid out as libtvm_ffi lays them out
(`tvm/ffi/c_api.h`, `container/shape.h`, `array.h`, `tensor.h`): a 24-byte `TVMFFIObject` header (combined ref
count, type index, padding, deleter) then the cell the DSL's entry reads after it (`get_object_cell_ptr`): an
ffi.Shape (69) `{int64 *data, size_t size}` with its extents inline after it, an ffi.Array (71) `TVMFFISeqCell
{data, size, capacity, data_deleter NULL}` with its TVMFFIAny items inline after it (as make_inplace_array_object
places them), a tensor inside an array an ffi.Tensor (70) whose cell is the DLTensor (as Tensor::FromDLPack makes
one from a torch tensor; NULL strides filled row-major at its tail, as FromDLPack does).  Their ref counts are
both one (make_object's start) and the deleter NULL: the caller owns the objects and the entry only reads them.
`self` is NULL, as for a function exported from an object.  The entry
returns 0, or -1 with an error raised through the TVM-FFI error setters (emu.stubs.families.tvm_ffi); the
result cell starts as None and is read back.  Both the x86-64 and AArch64 conventions pass the four in
integer registers.
"""
from __future__ import annotations

import struct
from typing import Any, Callable

from ..dsl.launch.arguments import TENSOR_DATA_BASE, TENSOR_DATA_STRIDE
from ..dsl.tvm_ffi.arguments import TvmFfiArgument, default_arguments, parse_arguments
from ..dsl.tvm_ffi.dlpack import DTYPES, parse_device
from ..dsl.tvm_ffi.signature import compact_strides, parse_signature, tensor_orders
from ..errors import ObjectFormatError
from .base import EntryArguments, GuestMemory, LaunchAbi, LaunchPlan, LaunchSite

# TVMFFITypeIndex
NONE, INT, BOOL, FLOAT, OPAQUE_PTR, DLTENSOR_PTR = 0, 1, 2, 3, 4, 7
SHAPE, TENSOR, ARRAY = 69, 70, 71
ANY = struct.Struct("<iIQ")                  # type index, zero padding, the value's 8 bytes
DLTENSOR = struct.Struct("<QiiiBBHQQQ")      # data, device type, device id, ndim, code, bits, lanes, shape, strides, byte_offset
OBJECT = struct.Struct("<QiIQ")              # TVMFFIObject: combined_ref_count, type_index, padding, deleter
BOTH_REFS_ONE = (1 << 32) | 1                # kCombinedRefCountBothOne: a strong and a weak reference
SHAPE_CELL = struct.Struct("<QQ")            # TVMFFIShapeCell: data, size
SEQ_CELL = struct.Struct("<QqqQ")            # TVMFFISeqCell: data, size, capacity, data_deleter
FROM_DLPACK_TAIL = 8                         # TensorObjFromDLPack's DLManagedTensor pointer after the DLTensor


class TvmFfiAbi(LaunchAbi):
    name = "tvm_ffi"

    def plan(self, site: LaunchSite, given: Any) -> LaunchPlan:
        """The compiled signature the entry quotes and the arguments: `given` (the argument form's list) or defaults."""
        export = site.export
        params = parse_signature(export.ffi_signature) if export.ffi_signature else None
        if given is None:
            if params is None:
                raise ObjectFormatError(f"the object does not quote __tvm_ffi_{export.name}'s signature (no \"when "
                                        "calling: `...`\" string), so emu cannot make default arguments: give them "
                                        "(`args:`, --args FILE)", path=site.path)
            arguments = default_arguments(params, export.mangled_function, site.path, export.ffi_device_type)
        else:
            arguments = parse_arguments(given, site.path)
        values = {"arguments": arguments, "orders": tensor_orders(params or [], export.mangled_function)}
        record = {"signature": export.ffi_signature, "given": given is not None, "args": [], "result": None}
        return LaunchPlan(params, values, record)

    def marshal(self, plan: LaunchPlan, memory: GuestMemory, outcome_slot: int) -> EntryArguments:
        """The TVMFFIAny cells, each tensor's DLTensor with its shape and strides, each shape's and tuple's object,
        and the result cell (None)."""
        writer = _CellWriter(memory, plan.values["orders"])
        cells, shown = zip(*(writer.cell(argument, nested=False) for argument in plan.values["arguments"])) \
            if plan.values["arguments"] else ((), ())
        args = memory.alloc(b"".join(cells)) if cells else 0
        result = memory.alloc(ANY.pack(NONE, 0, 0))
        plan.record["args"] = list(shown)
        return EntryArguments([0, args, len(cells), result], {"num_args": len(cells)}, result)

    def outcome(self, memory: GuestMemory, arguments: EntryArguments, returned: int | None) -> int | None:
        """The int32 the entry returned (its return register's low 32 bits, signed)."""
        if returned is None:
            return None
        low = returned & 0xFFFF_FFFF
        return low - (1 << 32) if low & 0x8000_0000 else low

    def run(self, call: Callable[..., bool], session: Any, export: Any, path: str, given: Any,
            read_raised: Callable[[], Any] | None = None) -> bool:
        """Plan, marshal and call `__tvm_ffi_<name>`, recorded as entry `tvm_ffi` with its result cell and the
        error it raised (`read_raised`, the run's TVM-FFI state)."""
        plan = self.plan(LaunchSite(path, export, session.image, session), given)
        memory = session.machine.host
        arguments = self.marshal(plan, memory, session.ret_slot)

        def read_outcome(returned: int | None) -> int | None:
            plan.record["result"] = _read_cell(memory, arguments.outcome_at)
            return self.outcome(memory, arguments, returned)

        return call("tvm_ffi", arguments.registers, arguments.shown, launch=plan.record, read_outcome=read_outcome,
                    read_raised=read_raised)


class _CellWriter:
    """Writes one call's arguments into guest memory: each item's TVMFFIAny cell and the item as passed. Tensors
    are counted in flattened order (tuples included) for their stride order and default data address."""

    def __init__(self, memory: GuestMemory, orders: list):
        self.memory, self.orders, self.tensors = memory, orders, 0

    def cell(self, argument: TvmFfiArgument | None, nested: bool) -> tuple[bytes, Any]:
        """(the 16-byte cell, the item as passed); `nested`: an item of an ffi.Array, where a tensor is an
        ffi.Tensor."""
        if argument is None:
            return ANY.pack(NONE, 0, 0), None
        kind = argument.kind
        if kind == "tensor":
            order = self.orders[self.tensors] if self.tensors < len(self.orders) else None
            address, written = _write_tensor(self.memory, argument, self.tensors, order, as_object=nested)
            self.tensors += 1
            return ANY.pack(TENSOR if nested else DLTENSOR_PTR, 0, address), {"tensor": written}
        if kind == "shape":
            extents = argument.shape
            data = struct.pack(f"<{len(extents)}q", *extents)
            return ANY.pack(SHAPE, 0, _write_object(self.memory, SHAPE, lambda at: SHAPE_CELL.pack(
                at + OBJECT.size + SHAPE_CELL.size, len(extents)) + data)), argument.shown()
        if kind == "tuple":
            cells, shown = [], []
            for item in argument.tuple_:
                cell, passed = self.cell(item, nested=True)
                cells.append(cell)
                shown.append(passed)
            return ANY.pack(ARRAY, 0, _write_object(self.memory, ARRAY, lambda at: SEQ_CELL.pack(
                at + OBJECT.size + SEQ_CELL.size, len(cells), len(cells), 0) + b"".join(cells))), {"tuple": shown}
        if kind == "float":
            return struct.pack("<iId", FLOAT, 0, float(argument.value_of("float"))), argument.shown()
        index = {"int": INT, "bool": BOOL, "stream": OPAQUE_PTR}[kind]
        return ANY.pack(index, 0, int(argument.value_of(kind)) & (1 << 64) - 1), argument.shown()


def _write_object(memory: GuestMemory, type_index: int, body: Callable[[int], bytes]) -> int:
    """A TVM-FFI object (header, then `body(its address)`: the cell and what follows it) in guest memory."""
    size = OBJECT.size + len(body(0))
    address = memory.alloc(bytes(size))
    memory.write(address, OBJECT.pack(BOTH_REFS_ONE, type_index, 0, 0) + body(address))
    return address


def _write_tensor(memory: GuestMemory, argument: TvmFfiArgument, index: int, order: tuple[int, ...] | None,
                  as_object: bool = False) -> tuple[int, dict]:
    """The DLTensor and its arrays in guest memory (`as_object`: inside an ffi.Tensor object, NULL strides filled
    row-major at its tail as Tensor::FromDLPack does): its address, and the tensor as it was passed."""
    tensor = argument.tensor
    code, bits = DTYPES[tensor.dtype]
    device_type, device_id = parse_device(tensor.device)
    shape = list(tensor.shape)
    strides = tensor.strides if tensor.strides_given else compact_strides(shape, order)
    data = tensor.data if tensor.data is not None else TENSOR_DATA_BASE + index * TENSOR_DATA_STRIDE
    shape_at = memory.alloc(struct.pack(f"<{len(shape)}q", *shape)) if shape else 0
    if as_object:
        tail = compact_strides(shape, None) if strides is None and shape else []
        strides = tail or strides
        strides_at = memory.alloc(struct.pack(f"<{len(strides)}q", *strides)) if strides and not tail else 0
        address = _write_object(memory, TENSOR, lambda at: DLTENSOR.pack(
            data, device_type, device_id, len(shape), code, bits, 1, shape_at,
            at + OBJECT.size + DLTENSOR.size + FROM_DLPACK_TAIL if tail else strides_at, tensor.byte_offset)
            + bytes(FROM_DLPACK_TAIL) + struct.pack(f"<{len(tail)}q", *tail))
    else:
        strides_at = memory.alloc(struct.pack(f"<{len(strides)}q", *strides)) if strides else 0
        address = memory.alloc(DLTENSOR.pack(data, device_type, device_id, len(shape), code, bits, 1, shape_at,
                                             strides_at, tensor.byte_offset))
    written = {"dtype": tensor.dtype, "shape": shape, "strides": strides, "data": data,
               "byte_offset": tensor.byte_offset, "device": tensor.device}
    return address, written


def _read_cell(memory: GuestMemory, address: int) -> dict:
    """A TVMFFIAny as {type_index, value}: the value an int, a float for type index 3."""
    type_index, _, raw = ANY.unpack(memory.read(address, ANY.size))
    value: Any = struct.unpack("<d", struct.pack("<Q", raw))[0] if type_index == FLOAT else raw
    return {"type_index": type_index, "value": value}


TVM_FFI = TvmFfiAbi()
