"""The struct a tensor argument is passed as: `{void *data; intN_t dynamic_shapes[n]; intM_t dynamic_strides[m];}`,
laid out with the C rules of both host architectures (LP64: an 8-byte pointer, natural alignment)."""
from __future__ import annotations

from dataclasses import dataclass

POINTER_SIZE = 8


def _align(value: int, align: int) -> int:
    return (value + align - 1) // align * align


@dataclass(frozen=True)
class TensorLayout:
    """The struct `{void *data; shapes[n]; strides[m];}` a tensor is passed as."""
    shape_count: int
    shape_width: int            # bytes per extent: 4 or 8
    stride_count: int
    stride_width: int
    shapes_offset: int = POINTER_SIZE
    strides_offset: int | None = None
    size: int | None = None

    def __post_init__(self) -> None:
        if self.strides_offset is None:
            end = self.shapes_offset + self.shape_count * self.shape_width
            object.__setattr__(self, "strides_offset", _align(end, self.stride_width if self.stride_count else 1))
        if self.size is None:
            end = self.strides_offset + self.stride_count * self.stride_width
            align = max([POINTER_SIZE] + [w for w, n in ((self.shape_width, self.shape_count),
                                                          (self.stride_width, self.stride_count)) if n])
            object.__setattr__(self, "size", _align(end, align))

    def describe(self) -> str:
        def part(count: int, width: int, what: str) -> str:
            return f"int{8 * width}_t {what}[{count}]" if count else ""
        fields = ["void *data", part(self.shape_count, self.shape_width, "dynamic_shapes"),
                  part(self.stride_count, self.stride_width, "dynamic_strides")]
        return "{" + "; ".join(f for f in fields if f) + "}"
