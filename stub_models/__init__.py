"""Pydantic models of the functions CuTe DSL exports call in libcute_dsl_runtime.so.

`CATALOGUE` maps each wrapper symbol to its model; it is the one registry emu's stub dispatch
reads.  `MODELS` lists every model explicitly; add a model by writing the class in the module of
its area and listing it here.  `wrappers.txt` is the list of symbols the library exports (the test
checks the two agree).

    device.py   device management, properties, profiler     launch.py   launches, occupancy
    library.py  cudaLibrary* and kernel attributes           stream.py   streams, events, graphs
    memory.py   malloc / free / memcpy / memset              driver.py   the `_cu*` driver wrappers
    helpers.py  the `cuda_dialect_*` helpers
"""
from __future__ import annotations

from .base import C, CudaCall, Param
from .device import (CudaDeviceGetAttribute, CudaDeviceSynchronize, CudaGetDevice, CudaGetDeviceCount,
                     CudaGetDeviceProperties, CudaProfilerStart, CudaProfilerStop, CudaSetDevice)
from .driver import (CuDeviceGet, CuKernelGetAttribute, CuLibraryGetGlobal, CuLibraryGetKernel, CuLibraryGetKernelCount,
                     CuLibraryGetManaged, CuLibraryGetModule, CuLibraryGetUnifiedFunction, CuLibraryLoadData,
                     CuLibraryLoadFromFile, CuLibraryUnload, CuTensorMapEncodeTiled)
from .helpers import (CudaDialectAssertSuccess, CudaDialectGetErrorName, CudaDialectInitLibraryOnce,
                      CudaDialectPrintOnError, CudaDialectUnloadLibraryOnce)
from .launch import CudaLaunchKernel, CudaLaunchKernelEx, CudaOccupancyMaxActiveBlocksPerMultiprocessor
from .library import (CudaFuncSetAttribute, CudaKernelSetAttributeForDevice, CudaLibraryGetGlobal, CudaLibraryGetKernel,
                      CudaLibraryGetKernelCount, CudaLibraryGetManaged, CudaLibraryGetUnifiedFunction, CudaLibraryLoadData,
                      CudaLibraryLoadFromFile, CudaLibraryUnload)
from .memory import (CudaFree, CudaFreeAsync, CudaFreeHost, CudaMalloc, CudaMallocAsync, CudaMallocHost, CudaMallocManaged,
                     CudaMemcpy, CudaMemcpyAsync, CudaMemset, CudaMemsetAsync)
from .stream import (CudaEventCreate, CudaEventDestroy, CudaEventElapsedTime, CudaEventRecord, CudaGraphDestroy,
                     CudaGraphExecDestroy, CudaGraphInstantiate, CudaGraphLaunch, CudaStreamAddCallback,
                     CudaStreamBeginCapture, CudaStreamCreate, CudaStreamDestroy, CudaStreamEndCapture,
                     CudaStreamSynchronize, CudaStreamWaitEvent)

MODELS: tuple[type[CudaCall], ...] = (
    # device
    CudaGetDevice,
    CudaGetDeviceCount,
    CudaSetDevice,
    CudaDeviceGetAttribute,
    CudaGetDeviceProperties,
    CudaDeviceSynchronize,
    CudaProfilerStart,
    CudaProfilerStop,
    # library / kernel
    CudaLibraryLoadData,
    CudaLibraryLoadFromFile,
    CudaLibraryUnload,
    CudaLibraryGetKernel,
    CudaLibraryGetKernelCount,
    CudaLibraryGetGlobal,
    CudaLibraryGetManaged,
    CudaLibraryGetUnifiedFunction,
    CudaFuncSetAttribute,
    CudaKernelSetAttributeForDevice,
    # launch
    CudaLaunchKernelEx,
    CudaLaunchKernel,
    CudaOccupancyMaxActiveBlocksPerMultiprocessor,
    # stream / event / graph
    CudaStreamCreate,
    CudaStreamDestroy,
    CudaStreamSynchronize,
    CudaStreamWaitEvent,
    CudaStreamAddCallback,
    CudaStreamBeginCapture,
    CudaStreamEndCapture,
    CudaEventCreate,
    CudaEventRecord,
    CudaEventDestroy,
    CudaEventElapsedTime,
    CudaGraphInstantiate,
    CudaGraphLaunch,
    CudaGraphDestroy,
    CudaGraphExecDestroy,
    # memory
    CudaMalloc,
    CudaMallocAsync,
    CudaMallocHost,
    CudaMallocManaged,
    CudaFree,
    CudaFreeAsync,
    CudaFreeHost,
    CudaMemcpy,
    CudaMemcpyAsync,
    CudaMemset,
    CudaMemsetAsync,
    # driver
    CuDeviceGet,
    CuKernelGetAttribute,
    CuLibraryLoadData,
    CuLibraryLoadFromFile,
    CuLibraryUnload,
    CuLibraryGetKernel,
    CuLibraryGetKernelCount,
    CuLibraryGetModule,
    CuLibraryGetGlobal,
    CuLibraryGetManaged,
    CuLibraryGetUnifiedFunction,
    CuTensorMapEncodeTiled,
    # cuda_dialect helpers
    CudaDialectInitLibraryOnce,
    CudaDialectUnloadLibraryOnce,
    CudaDialectGetErrorName,
    CudaDialectAssertSuccess,
    CudaDialectPrintOnError,
)

CATALOGUE: dict[str, type[CudaCall]] = {model.symbol: model for model in MODELS}

__all__ = ["C", "CATALOGUE", "CudaCall", "MODELS", "Param"]
