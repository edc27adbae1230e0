"""DLPack's codes, as `dlpack.h` (shipped in the apache-tvm-ffi wheel) numbers them: data types by the names
TVM-FFI prints (`float16`, `bfloat16`, `float8_e4m3fn`, ...) and device types by their names (`cuda:0`)."""
from __future__ import annotations

# DLDataTypeCode
_INT, _UINT, _FLOAT, _BFLOAT, _BOOL = 0, 1, 2, 4, 6
_FLOAT_CODES = {"float8_e3m4": 7, "float8_e4m3": 8, "float8_e4m3b11fnuz": 9, "float8_e4m3fn": 10,
                "float8_e4m3fnuz": 11, "float8_e5m2": 12, "float8_e5m2fnuz": 13, "float8_e8m0fnu": 14,
                "float6_e2m3fn": 15, "float6_e3m2fn": 16, "float4_e2m1fn": 17}

DTYPES: dict[str, tuple[int, int]] = {       # name -> (DLDataType code, bits); lanes are 1
    **{f"int{b}": (_INT, b) for b in (8, 16, 32, 64)},
    **{f"uint{b}": (_UINT, b) for b in (8, 16, 32, 64)},
    **{f"float{b}": (_FLOAT, b) for b in (16, 32, 64)},
    "bfloat16": (_BFLOAT, 16),
    "bool": (_BOOL, 8),
    **{name: (code, int(name[5])) for name, code in _FLOAT_CODES.items()},
}

DEVICE_TYPES: dict[str, int] = {             # DLDeviceType
    "cpu": 1, "cuda": 2, "cuda_host": 3, "opencl": 4, "vulkan": 7, "metal": 8, "vpi": 9, "rocm": 10,
    "rocm_host": 11, "ext_dev": 12, "cuda_managed": 13, "oneapi": 14, "webgpu": 15, "hexagon": 16, "maia": 17,
}
CUDA = DEVICE_TYPES["cuda"]


def parse_device(text: str) -> tuple[int, int]:
    """`cuda:0`, `cpu`, `cuda_host:1` -> (DLDeviceType, device id); ValueError naming the choices."""
    kind, _, index = str(text).partition(":")
    if kind not in DEVICE_TYPES:
        raise ValueError(f"unknown device {text!r} (one of {', '.join(DEVICE_TYPES)}, optionally :<index>)")
    if index and not index.isdigit():
        raise ValueError(f"device {text!r}: the index after ':' must be a non-negative integer")
    return DEVICE_TYPES[kind], int(index or 0)
