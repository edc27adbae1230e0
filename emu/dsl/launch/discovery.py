"""Tensor structs the launch code itself reveals, for an export without its header.

`args_spec` names each parameter and says `Tensor` (or nothing at all), but not which
dynamic extents and strides the tensor's struct carries (the header's `{void *data;
int32_t dynamic_shapes[n]; int64_t dynamic_strides[m];}`); the mangled launch-function name
spells them (`FakeTensorFloat16div1div8i64div81`: two 32-bit dynamic extents, one 64-bit
dynamic stride) but the DSL cuts it at 180 characters, so later tensors have no part of it.
The launch code reads every field of every struct it is given before it calls CUDA.  So
emu runs the wrapper once, up to its first CUDA call, with each unknown argument in a
block of its own (Machine.probe_reads), and keeps the struct layouts those loads fit: each
load starts at a field, covers whole fields, and every field is loaded.  Where several
layouts fit, the name's part for that tensor decides, then the reading that needs the fewest
unusual things (fit_cost: merged loads, padding loaded, widths other than the DSL's 32-bit
extents and 64-bit strides); where that still leaves a choice, emu says so instead of guessing.
"""
from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache
from typing import NamedTuple

from .mangled import name_allows, token_structs
from .tensor_struct import POINTER_SIZE, TensorLayout

BLOCK = 512                     # bytes of probe memory per args[] slot
PROBE_BUDGET = 200_000          # instructions: the wrapper reads its arguments long before this
PROBE_SLOTS = 64                # args[] slots offered: more than any export's parameters and ret
DEFAULT_WIDTHS = (4, 8)         # the DSL's FakeTensor: int32 extents, int64 strides
WIDTHS = (DEFAULT_WIDTHS, (4, 4), (8, 8))     # use_32bit_stride; 64-bit extents (and so strides)
SCALAR_SIZES = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "__half_raw": 2, "__nv_bfloat16": 2,
                "int32_t": 4, "uint32_t": 4, "float": 4, "int64_t": 8, "uint64_t": 8, "double": 8}


class SlotReads(NamedTuple):
    """What the probe saw: how many args[] slots the launch code read, and its loads of each slot's block."""
    passed: int | None                     # slots read before the first CUDA call (ret excluded); None: none
    loads: tuple[frozenset[tuple[int, int]], ...]

    def slot(self, index: int) -> set[tuple[int, int]]:
        return set(self.loads[index]) if index < len(self.loads) else set()


def slot_reads(loads: list[tuple[int, int]], blocks: list[int], array: int) -> SlotReads:
    """Sort the probe's loads into args[] slots read and (offset, size) loads of each block."""
    read = {(address - array) // POINTER_SIZE for address, _ in loads if address >= array}
    per_block: list[set[tuple[int, int]]] = [set() for _ in blocks]
    for address, size in loads:
        index = bisect_right(blocks, address) - 1
        if index >= 0 and address < blocks[index] + BLOCK:
            per_block[index].add((address - blocks[index], size))
    passed = max(read) + 1 if read else None
    if passed is not None and passed >= len(blocks):
        passed = None                        # it read every slot offered: it may take more
    return SlotReads(passed, tuple(map(frozenset, per_block)))


class Reading(NamedTuple):
    """What the loads of one argument's block say."""
    layouts: tuple[TensorLayout, ...]      # every tensor struct they fit, the chosen one first
    reason: str | None = None              # why none could be chosen; None when layouts[0] is the answer


def struct_key(layout: TensorLayout) -> tuple[int, int, int, int]:
    """A layout as emu.dsl.launch.mangled.token_structs spells one (width 0 for an empty array)."""
    return (layout.shape_count, layout.shape_width if layout.shape_count else 0,
            layout.stride_count, layout.stride_width if layout.stride_count else 0)


def _fields(layout: TensorLayout) -> list[tuple[int, int]]:
    return ([(0, POINTER_SIZE)] + [(layout.shapes_offset + i * layout.shape_width, layout.shape_width)
                                   for i in range(layout.shape_count)]
            + [(layout.strides_offset + i * layout.stride_width, layout.stride_width) for i in range(layout.stride_count)])


def fit_cost(layout: TensorLayout, reads: set[tuple[int, int]], widths: tuple[int, int] = DEFAULT_WIDTHS
             ) -> tuple[int, ...] | None:
    """How unusual the loads would be with this struct; None when they cannot be its loads.

    They fit when each starts at a field and, if scalar, ends at one, nothing is loaded past the
    struct, and every field is loaded.  The cost counts, most telling first, what the DSL seldom
    makes: more dynamic strides than extents, widths other than the export's (`widths`: 32-bit
    extents and 64-bit strides unless its other tensors say otherwise), extents beyond one more
    than the strides (a compact tensor has one static stride); then what a compiler seldom does:
    scalar loads merging two fields (LLVM does merge two int32 extents), vector loads spanning
    padding or elements of two widths, an array loaded partly by scalar and partly by vector loads.
    """
    fields = _fields(layout)
    starts = {offset for offset, _ in fields}
    ends = {offset + size for offset, size in fields}
    field_bytes = {byte for offset, size in fields for byte in range(offset, offset + size)}
    sizes = {offset: size for offset, size in fields}
    arrays = {offset: "shapes" if offset < layout.strides_offset else "strides" for offset, _ in fields[1:]}
    merged = padding = mixed = 0
    loaded_as: dict[str, set[bool]] = {}        # array -> {loaded by a scalar load, by a vector load}
    covered: set[int] = set()
    for offset, size in reads:
        if offset not in starts or offset + size > layout.size or (offset == 0 and size < POINTER_SIZE):
            return None
        span = set(range(offset, offset + size))
        if size <= POINTER_SIZE:
            if offset + size not in ends or span - field_bytes:
                return None
            merged += sum(1 for start in starts if offset < start < offset + size)
        else:
            padding += len(span - field_bytes)
            mixed += len({sizes[start] for start in starts if offset <= start < offset + size}) > 1
        covered |= span
        for start in starts:
            if offset <= start < offset + size and start in arrays:
                loaded_as.setdefault(arrays[start], set()).add(size > POINTER_SIZE)
    if not field_bytes <= covered:
        return None
    split = sum(1 for kinds in loaded_as.values() if len(kinds) > 1)
    unusual = int(layout.stride_count > layout.shape_count)     # dynamic strides come from dynamic extents
    other_widths = int(bool(layout.shape_count) and layout.shape_width != widths[0]) + \
        int(bool(layout.stride_count) and layout.stride_width != widths[1])
    imbalance = max(0, layout.shape_count - layout.stride_count - 1)
    return unusual, other_widths, imbalance, merged, padding, mixed, split


def candidates(reads: set[tuple[int, int]], widths: tuple[int, int] = DEFAULT_WIDTHS
               ) -> list[tuple[tuple[int, ...], TensorLayout]]:
    """Every tensor struct the loads fit, with its fit_cost, cheapest first."""
    return list(_candidates(frozenset(reads), widths))


@lru_cache(maxsize=1024)
def _candidates(reads: frozenset[tuple[int, int]], widths: tuple[int, int]
                ) -> tuple[tuple[tuple[int, ...], TensorLayout], ...]:
    """candidates(), kept per set of loads: a process launches the same exports again and again."""
    top = max((offset + size for offset, size in reads), default=POINTER_SIZE)
    scalar_top = max((offset + size for offset, size in reads if size <= POINTER_SIZE), default=POINTER_SIZE)
    found = []
    for shape_width, stride_width in WIDTHS:
        for shapes in range(0, max(0, top - POINTER_SIZE) // shape_width + 1):
            strides_offset = -(-(POINTER_SIZE + shapes * shape_width) // stride_width) * stride_width
            for strides in range(0, max(0, top - POINTER_SIZE) // stride_width + 1):
                end = strides_offset + strides * stride_width if strides else POINTER_SIZE + shapes * shape_width
                if end > top or end < scalar_top or top - end >= POINTER_SIZE:
                    continue                 # every field is loaded, no scalar load passes the last field
                layout = TensorLayout(shapes, shape_width, strides, stride_width)
                cost = fit_cost(layout, reads, widths) if layout.size - top < POINTER_SIZE else None
                if cost is not None:
                    found.append((cost, layout))
    cheapest: dict[tuple[int, int, int, int], tuple[tuple[int, ...], TensorLayout]] = {}
    for cost, layout in found:                       # an empty array's width is moot: one struct, its cheapest cost
        key = struct_key(layout)
        if key not in cheapest or cost < cheapest[key][0]:
            cheapest[key] = (cost, layout)
    return tuple(sorted(cheapest.values(), key=lambda item: item[0]))


def read_layout(name: str, reads: set[tuple[int, int]], token: str | None,
                widths: tuple[int, int] = DEFAULT_WIDTHS) -> Reading:
    """The struct of tensor `name`, from its loads and (when there is one) its part of the mangled name;
    `widths`: the extent and stride widths the export's other tensors use (export_widths)."""
    if not reads:
        structs = token_structs(token) if token else None
        if structs is not None and len(structs) == 1:          # unread: the name's one reading is all there is
            shapes, shape_width, strides, stride_width = next(iter(structs))
            return Reading((TensorLayout(shapes, shape_width or 4, strides, stride_width or 8),))
        return Reading((), f"the launch code did not read tensor {name} before its first CUDA call, and the mangled "
                           "launch-function name does not spell it")
    found = candidates(reads, widths)
    shown = ", ".join(f"{size}@{offset}" for offset, size in sorted(reads))
    if not found:
        return Reading((), f"the launch code's loads of tensor {name} (bytes@offset: {shown}) fit no "
                           "{void *data; dynamic_shapes[]; dynamic_strides[]} struct")
    allows = name_allows(token)
    if allows is not None:
        named = [(cost, layout) for cost, layout in found if allows(struct_key(layout))]
        if not named:
            return Reading(tuple(layout for _, layout in found),
                           f"the launch code's loads of tensor {name} ({shown}) disagree with the mangled launch-function "
                           f"name ({token})")
        found = named
    best = [layout for cost, layout in found if cost == found[0][0]]
    if len(best) > 1:
        options = "; ".join(layout.describe() for layout in best[:4])
        return Reading(tuple(best), f"the launch code's loads of tensor {name} ({shown}) fit more than one struct "
                                    f"equally well ({options})")
    return Reading(tuple(layout for _, layout in found))


def export_widths(tokens: list[str]) -> tuple[int, int]:
    """The extent and stride widths an export's tensors use, from their name parts that say both
    unambiguously (a `use_32bit_stride` export says 32-bit strides); the DSL's default otherwise."""
    seen = set()
    for token in tokens:
        structs = token_structs(token) or ()
        if len(structs) == 1:
            shapes, shape_width, strides, stride_width = next(iter(structs))
            if shapes and strides:
                seen.add((shape_width, stride_width))
    return seen.pop() if len(seen) == 1 else DEFAULT_WIDTHS


def is_struct(reads: set[tuple[int, int]]) -> bool:
    """Whether an argument with no annotation is read as a tensor struct: a pointer first, or more."""
    return (0, POINTER_SIZE) in reads or any(offset >= POINTER_SIZE for offset, _ in reads) or \
        any(offset == 0 and size > POINTER_SIZE for offset, size in reads)


def reads_fit_kind(kind: str | None, ctype: str | None, reads: set[tuple[int, int]]) -> bool:
    """Whether an args[] slot read this way can hold a parameter of this kind (an unread slot fits any;
    a list's or unannotated parameter's slot holds a tensor)."""
    if not reads or kind is None or kind == "array":
        return True
    if kind in ("tensor", "tensor_list", "unknown"):
        return is_struct(reads)
    if kind in ("stream", "pointer"):
        return reads <= {(0, POINTER_SIZE)}
    size = SCALAR_SIZES.get(ctype or "int32_t", 4)
    return all(offset == 0 and size_read <= size for offset, size_read in reads)


def slots_fit(params: list[tuple[str | None, str | None, int]], result: SlotReads) -> bool:
    """Whether parameters given as (kind, C type, slots taken), in order, are what the launch code reads:
    as many slots as it reads, each read as its parameter's kind is."""
    if sum(width for _, _, width in params) != result.passed:
        return False
    index = 0
    for kind, ctype, width in params:
        if not all(reads_fit_kind(kind, ctype, result.slot(index + offset)) for offset in range(width)):
            return False
        index += width
    return True


def pattern(data: int, extent: int) -> bytes:
    """What an unknown argument's block holds during the probe: an aligned data pointer, then every
    32-bit word a plausible extent (a 64-bit load of two of them is a plausible stride)."""
    return data.to_bytes(POINTER_SIZE, "little") + extent.to_bytes(4, "little") * ((BLOCK - POINTER_SIZE) // 4)
