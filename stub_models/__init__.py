"""Pydantic models of the functions CuTe DSL exports call in libcute_dsl_runtime.so.

`REGISTRY` is the one registry of wrapper symbols: each symbol with the module of its area and
its model class; add a model by writing the class in that module and listing it here.
`CATALOGUE` maps each symbol to its model and is what emu's CUDA stub family reads; it imports a
module the first time one of its symbols is looked up, so a run builds only the models of the
wrappers its object imports (a process that runs one export skips about half of them).
`MODELS` is every model, in registry order.  `wrappers.txt` is the list of symbols the library
exports (the test checks the two agree).

    loaders.py  the eight every export calls (its loaders and launch): a run builds only these
    device.py   device management, properties, profiler     launch.py   launches, occupancy
    library.py  cudaLibrary* and kernel attributes           stream.py   streams, events, graphs
    memory.py   malloc / free / memcpy / memset              driver.py   the `_cu*` driver wrappers
    helpers.py  the `cuda_dialect_*` helpers
`LIBC_CATALOGUE` (libc.py) and `TVM_FFI_CATALOGUE` (tvm_ffi.py: libtvm_ffi.so's functions a TVM-FFI export
calls) are catalogues of their own families; `model_of` looks a symbol up in every catalogue.
`INNER_CATALOGUE` (inner.py) models the plain runtime calls the helpers make inside themselves: recorded,
never stubbed; `recorded_model` looks there too.
"""
from __future__ import annotations

from importlib import import_module
from typing import Iterator, Mapping

from .base import C, CudaCall, Param, StubCall

REGISTRY: dict[str, tuple[str, str]] = {
    # device
    "_cudaGetDevice": ("loaders", "CudaGetDevice"),
    "_cudaGetDeviceCount": ("device", "CudaGetDeviceCount"),
    "_cudaSetDevice": ("device", "CudaSetDevice"),
    "_cudaDeviceGetAttribute": ("loaders", "CudaDeviceGetAttribute"),
    "_cudaGetDeviceProperties": ("device", "CudaGetDeviceProperties"),
    "_cudaDeviceSynchronize": ("device", "CudaDeviceSynchronize"),
    "_cudaProfilerStart": ("device", "CudaProfilerStart"),
    "_cudaProfilerStop": ("device", "CudaProfilerStop"),
    # library / kernel
    "_cudaLibraryLoadData": ("loaders", "CudaLibraryLoadData"),
    "_cudaLibraryLoadFromFile": ("library", "CudaLibraryLoadFromFile"),
    "_cudaLibraryUnload": ("library", "CudaLibraryUnload"),
    "_cudaLibraryGetKernel": ("loaders", "CudaLibraryGetKernel"),
    "_cudaLibraryGetKernelCount": ("library", "CudaLibraryGetKernelCount"),
    "_cudaLibraryGetGlobal": ("library", "CudaLibraryGetGlobal"),
    "_cudaLibraryGetManaged": ("library", "CudaLibraryGetManaged"),
    "_cudaLibraryGetUnifiedFunction": ("library", "CudaLibraryGetUnifiedFunction"),
    "_cudaFuncSetAttribute": ("loaders", "CudaFuncSetAttribute"),
    "_cudaKernelSetAttributeForDevice": ("loaders", "CudaKernelSetAttributeForDevice"),
    # launch
    "_cudaLaunchKernelEx": ("loaders", "CudaLaunchKernelEx"),
    "_cudaLaunchKernel": ("launch", "CudaLaunchKernel"),
    "_cudaOccupancyMaxActiveBlocksPerMultiprocessor": ("launch", "CudaOccupancyMaxActiveBlocksPerMultiprocessor"),
    # stream / event / graph
    "_cudaStreamCreate": ("stream", "CudaStreamCreate"),
    "_cudaStreamDestroy": ("stream", "CudaStreamDestroy"),
    "_cudaStreamSynchronize": ("stream", "CudaStreamSynchronize"),
    "_cudaStreamWaitEvent": ("stream", "CudaStreamWaitEvent"),
    "_cudaStreamAddCallback": ("stream", "CudaStreamAddCallback"),
    "_cudaStreamBeginCapture": ("stream", "CudaStreamBeginCapture"),
    "_cudaStreamEndCapture": ("stream", "CudaStreamEndCapture"),
    "_cudaEventCreate": ("stream", "CudaEventCreate"),
    "_cudaEventRecord": ("stream", "CudaEventRecord"),
    "_cudaEventDestroy": ("stream", "CudaEventDestroy"),
    "_cudaEventElapsedTime": ("stream", "CudaEventElapsedTime"),
    "_cudaGraphInstantiate": ("stream", "CudaGraphInstantiate"),
    "_cudaGraphLaunch": ("stream", "CudaGraphLaunch"),
    "_cudaGraphDestroy": ("stream", "CudaGraphDestroy"),
    "_cudaGraphExecDestroy": ("stream", "CudaGraphExecDestroy"),
    # memory
    "_cudaMalloc": ("memory", "CudaMalloc"),
    "_cudaMallocAsync": ("memory", "CudaMallocAsync"),
    "_cudaMallocHost": ("memory", "CudaMallocHost"),
    "_cudaMallocManaged": ("memory", "CudaMallocManaged"),
    "_cudaFree": ("memory", "CudaFree"),
    "_cudaFreeAsync": ("memory", "CudaFreeAsync"),
    "_cudaFreeHost": ("memory", "CudaFreeHost"),
    "_cudaMemcpy": ("memory", "CudaMemcpy"),
    "_cudaMemcpyAsync": ("memory", "CudaMemcpyAsync"),
    "_cudaMemset": ("memory", "CudaMemset"),
    "_cudaMemsetAsync": ("memory", "CudaMemsetAsync"),
    # driver
    "_cuDeviceGet": ("driver", "CuDeviceGet"),
    "_cuKernelGetAttribute": ("loaders", "CuKernelGetAttribute"),
    "_cuLibraryLoadData": ("driver", "CuLibraryLoadData"),
    "_cuLibraryLoadFromFile": ("driver", "CuLibraryLoadFromFile"),
    "_cuLibraryUnload": ("driver", "CuLibraryUnload"),
    "_cuLibraryGetKernel": ("driver", "CuLibraryGetKernel"),
    "_cuLibraryGetKernelCount": ("driver", "CuLibraryGetKernelCount"),
    "_cuLibraryGetModule": ("driver", "CuLibraryGetModule"),
    "_cuLibraryGetGlobal": ("driver", "CuLibraryGetGlobal"),
    "_cuLibraryGetManaged": ("driver", "CuLibraryGetManaged"),
    "_cuLibraryGetUnifiedFunction": ("driver", "CuLibraryGetUnifiedFunction"),
    "_cuTensorMapEncodeTiled": ("driver", "CuTensorMapEncodeTiled"),
    # cuda_dialect helpers
    "cuda_dialect_init_library_once": ("helpers", "CudaDialectInitLibraryOnce"),
    "cuda_dialect_unload_library_once": ("helpers", "CudaDialectUnloadLibraryOnce"),
    "cuda_dialect_get_error_name": ("helpers", "CudaDialectGetErrorName"),
    "cuda_dialect_assert_success": ("helpers", "CudaDialectAssertSuccess"),
    "cuda_dialect_print_on_error": ("helpers", "CudaDialectPrintOnError"),
}


class Catalogue(Mapping):
    """symbol -> model class, importing a model's module on the first look-up of one of its symbols."""

    def __init__(self, registry: dict[str, tuple[str, str]]):
        self._registry = registry
        self._models: dict[str, type[StubCall]] = {}

    def __getitem__(self, symbol: str) -> type[StubCall]:
        model = self._models.get(symbol)
        if model is None:
            module, name = self._registry[symbol]
            model = getattr(import_module(f"{__name__}.{module}"), name)
            if model.symbol != symbol:
                raise TypeError(f"REGISTRY lists {name} for {symbol}, but it models {model.symbol}")
            self._models[symbol] = model
        return model

    def get(self, symbol: str, default=None):
        model = self._models.get(symbol)
        if model is not None:
            return model
        return self[symbol] if symbol in self._registry else default

    def __contains__(self, symbol: object) -> bool:
        return symbol in self._registry

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry)

    def __len__(self) -> int:
        return len(self._registry)


CATALOGUE: Mapping[str, type[CudaCall]] = Catalogue(REGISTRY)

# The C library functions host code calls (libc.py, in LIBC_MODELS' order): a catalogue of their own,
# so that an object that calls none of them (most exports) never builds their models.
LIBC_REGISTRY: dict[str, tuple[str, str]] = {
    "printf": ("libc", "Printf"),
    "fprintf": ("libc", "Fprintf"),
    "puts": ("libc", "Puts"),
    "fputs": ("libc", "Fputs"),
    "putchar": ("libc", "Putchar"),
    "putc": ("libc", "Putc"),
    "fputc": ("libc", "Fputc"),
    "fwrite": ("libc", "Fwrite"),
    "memcpy": ("libc", "Memcpy"),
    "memmove": ("libc", "Memmove"),
    "memset": ("libc", "Memset"),
    "strlen": ("libc", "Strlen"),
    "malloc": ("libc", "Malloc"),
    "calloc": ("libc", "Calloc"),
    "realloc": ("libc", "Realloc"),
    "free": ("libc", "Free"),
    "abort": ("libc", "Abort"),
    "exit": ("libc", "Exit"),
    "__stack_chk_fail": ("libc", "StackChkFail"),
}
LIBC_CATALOGUE: Mapping[str, type[StubCall]] = Catalogue(LIBC_REGISTRY)

# What a TVM-FFI export calls in libtvm_ffi.so (and the DSL runtime's error helper for it): tvm_ffi.py.
TVM_FFI_REGISTRY: dict[str, tuple[str, str]] = {
    "TVMFFIEnvGetStream": ("tvm_ffi", "TVMFFIEnvGetStream"),
    "TVMFFIErrorSetRaisedFromCStr": ("tvm_ffi", "TVMFFIErrorSetRaisedFromCStr"),
    "TVMFFIErrorSetRaisedFromCStrParts": ("tvm_ffi", "TVMFFIErrorSetRaisedFromCStrParts"),
    "CuteDSLRT_TVMFFISetRaisedCudaError": ("tvm_ffi", "CuteDSLRTTVMFFISetRaisedCudaError"),
}
TVM_FFI_CATALOGUE: Mapping[str, type[StubCall]] = Catalogue(TVM_FFI_REGISTRY)
CATALOGUES: tuple[Mapping[str, type[StubCall]], ...] = (CATALOGUE, LIBC_CATALOGUE, TVM_FFI_CATALOGUE)

# The plain runtime calls the cuda_dialect_* helpers make inside themselves (inner.py): recorded, never stubbed, so
# not in CATALOGUES (an import of one of these names stays unanswered); `recorded_model` finds them.
INNER_REGISTRY: dict[str, tuple[str, str]] = {
    "cudaGetDeviceCount": ("inner", "CudaGetDeviceCountInner"),
    "cudaGetErrorName": ("inner", "CudaGetErrorNameInner"),
    "cudaGetErrorString": ("inner", "CudaGetErrorStringInner"),
    "cudaLibraryUnload": ("inner", "CudaLibraryUnloadInner"),
}
INNER_CATALOGUE: Mapping[str, type[StubCall]] = Catalogue(INNER_REGISTRY)


def model_of(symbol: str) -> type[StubCall] | None:
    """The model of `symbol` in whichever catalogue lists it (None: none does)."""
    return next((found for catalogue in CATALOGUES if (found := catalogue.get(symbol)) is not None), None)


def recorded_model(symbol: str) -> type[StubCall] | None:
    """The model of a call a trace can hold: a stubbed symbol's, or a helper's inner runtime call's (inner.py)."""
    return model_of(symbol) or INNER_CATALOGUE.get(symbol)


def __getattr__(name: str):
    if name == "MODELS":       # every model: imports every area
        return tuple(CATALOGUE[symbol] for symbol in REGISTRY)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["C", "CATALOGUE", "CATALOGUES", "CudaCall", "INNER_CATALOGUE", "INNER_REGISTRY", "LIBC_CATALOGUE", "LIBC_REGISTRY", "MODELS", "Param", "REGISTRY",
           "StubCall", "TVM_FFI_CATALOGUE", "TVM_FFI_REGISTRY", "model_of", "recorded_model"]
