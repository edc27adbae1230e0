"""CUDA driver API wrappers (`_cu*`).

Unlike the `_cuda*` wrappers, these are not linked to a driver: on first use each resolves its
driver function with cudaGetDriverEntryPointByVersion(name, &fn, version, 0, &status), caches the
pointer, and then forwards its arguments unchanged.  The requested API version is 12080 for
cuDeviceGet, cuKernelGetAttribute, cuLibraryGetKernel, cuLibraryGetModule, cuLibraryLoadData and
cuLibraryLoadFromFile; 13000 for cuLibraryGetGlobal, cuLibraryGetKernelCount, cuLibraryGetManaged,
cuLibraryGetUnifiedFunction and cuLibraryUnload (those print "CUDA driver entry-point lookup failed
..." to stderr when it fails); 12000 for cuTensorMapEncodeTiled.  When the lookup fails a wrapper
returns 999 (CUDA_ERROR_UNKNOWN) without calling anything.  They return CUresult (enums.CUresult).
cuKernelGetAttribute, which every export calls, is in loaders.py.
"""

from typing import ClassVar, Literal

from pydantic import Field

from .base import CudaCall
from .library import (CudaLibraryGetGlobal, CudaLibraryGetKernelCount, CudaLibraryGetManaged, CudaLibraryGetUnifiedFunction,
                      CudaLibraryLoadFromFile, CudaLibraryUnload)
from .loaders import CudaLibraryGetKernel, CudaLibraryLoadData
from .enums import TensorMapDataType, TensorMapFloatOOBFill, TensorMapInterleave, TensorMapL2Promotion, TensorMapSwizzle
from .fields import Enum, Handle, Int, Out, Ptr, Struct, UInt

_LOAD_OPTIONS = ("CUjit_option *jitOptions, void **jitOptionsValues, unsigned int numJitOptions, "
                 "CUlibraryOption *libraryOptions, void **libraryOptionValues, unsigned int numLibraryOptions")


class DriverCall(CudaCall):
    """Base of the `_cu*` models (api = "driver")."""

    api: ClassVar[Literal["runtime", "driver", "helper"]] = "driver"


class CuDeviceGet(DriverCall):
    symbol: ClassVar[str] = "_cuDeviceGet"
    prototype: ClassVar[str] = "CUresult cuDeviceGet(CUdevice *device, int ordinal)"
    device: Out("i32") = Field(description="receives the CUdevice for the ordinal")
    ordinal: Int = Field(description="device ordinal")


class CuLibraryLoadData(CudaLibraryLoadData):
    """The driver twin of cudaLibraryLoadData: the same parameters, in the same order."""

    symbol: ClassVar[str] = "_cuLibraryLoadData"
    prototype: ClassVar[str] = f"CUresult cuLibraryLoadData(CUlibrary *library, const void *code, {_LOAD_OPTIONS})"
    api: ClassVar[Literal["runtime", "driver", "helper"]] = "driver"


class CuLibraryLoadFromFile(CudaLibraryLoadFromFile):
    """The driver twin of cudaLibraryLoadFromFile: the same parameters, in the same order."""

    symbol: ClassVar[str] = "_cuLibraryLoadFromFile"
    prototype: ClassVar[str] = f"CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, {_LOAD_OPTIONS})"
    api: ClassVar[Literal["runtime", "driver", "helper"]] = "driver"


class CuLibraryUnload(CudaLibraryUnload):
    """The driver twin of cudaLibraryUnload: the same parameters, in the same order."""

    symbol: ClassVar[str] = "_cuLibraryUnload"
    prototype: ClassVar[str] = "CUresult cuLibraryUnload(CUlibrary library)"
    api: ClassVar[Literal["runtime", "driver", "helper"]] = "driver"


class CuLibraryGetKernel(CudaLibraryGetKernel):
    """The driver twin of cudaLibraryGetKernel: the same parameters, in the same order."""

    symbol: ClassVar[str] = "_cuLibraryGetKernel"
    prototype: ClassVar[str] = "CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)"
    api: ClassVar[Literal["runtime", "driver", "helper"]] = "driver"


class CuLibraryGetKernelCount(CudaLibraryGetKernelCount):
    """The driver twin of cudaLibraryGetKernelCount: the same parameters, in the same order."""

    symbol: ClassVar[str] = "_cuLibraryGetKernelCount"
    prototype: ClassVar[str] = "CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)"
    api: ClassVar[Literal["runtime", "driver", "helper"]] = "driver"


class CuLibraryGetModule(DriverCall):
    symbol: ClassVar[str] = "_cuLibraryGetModule"
    prototype: ClassVar[str] = "CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)"
    pMod: Out("handle") = Field(description="receives the library's module in the current context")
    library: Handle = Field(description="library handle")


class CuLibraryGetGlobal(CudaLibraryGetGlobal):
    """The driver twin of cudaLibraryGetGlobal: the same parameters, in the same order."""

    symbol: ClassVar[str] = "_cuLibraryGetGlobal"
    prototype: ClassVar[str] = "CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)"
    api: ClassVar[Literal["runtime", "driver", "helper"]] = "driver"


class CuLibraryGetManaged(CudaLibraryGetManaged):
    """The driver twin of cudaLibraryGetManaged: the same parameters, in the same order."""

    symbol: ClassVar[str] = "_cuLibraryGetManaged"
    prototype: ClassVar[str] = "CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)"
    api: ClassVar[Literal["runtime", "driver", "helper"]] = "driver"


class CuLibraryGetUnifiedFunction(CudaLibraryGetUnifiedFunction):
    """The prototype's third parameter is `symbol`; the field is `symbol_` (CudaCall.symbol is taken)."""
    symbol: ClassVar[str] = "_cuLibraryGetUnifiedFunction"
    prototype: ClassVar[str] = "CUresult cuLibraryGetUnifiedFunction(void **fptr, CUlibrary library, const char *symbol)"
    api: ClassVar[Literal["runtime", "driver", "helper"]] = "driver"


class CuTensorMapEncodeTiled(DriverCall):
    """cuTensorMapEncodeTiled, with a post-fix the wrapper applies to the descriptor.

    Same 12 arguments as the driver function (the last six on the x86-64 stack).  After the driver
    returns CUDA_SUCCESS the wrapper asks for the driver version; if it is <= 13010 and the tensor's
    byte extent (ceil(bits(tensorDataType) * globalDim[0] / 8) + sum over i >= 1 of
    (globalDim[i] - 1) * globalStrides[i - 1]) is below 128 KiB, it clears bit 21 of the 64-bit
    word at tensorMap + 8.  The stub receives the call before any of this happens.
    """

    symbol: ClassVar[str] = "_cuTensorMapEncodeTiled"
    prototype: ClassVar[str] = ("CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, "
                                "cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim, "
                                "const cuuint64_t *globalStrides, const cuuint32_t *boxDim, const cuuint32_t *elementStrides, "
                                "CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, "
                                "CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill)")
    tensorMap: Struct("CUtensorMap") = Field(description="the 128-byte, 64-byte aligned descriptor the callee writes")
    tensorDataType: Enum(TensorMapDataType) = Field(description="CUtensorMapDataType")
    tensorRank: UInt = Field(description="number of dimensions (1-5)")
    globalAddress: Ptr = Field(description="start of the tensor in global memory")
    globalDim: Ptr = Field(description="cuuint64_t[tensorRank], elements per dimension")
    globalStrides: Ptr = Field(description="cuuint64_t[tensorRank - 1], byte strides of dimensions 1..rank-1")
    boxDim: Ptr = Field(description="cuuint32_t[tensorRank], box (tile) size per dimension")
    elementStrides: Ptr = Field(description="cuuint32_t[tensorRank], traversal strides")
    interleave: Enum(TensorMapInterleave) = Field(description="CUtensorMapInterleave")
    swizzle: Enum(TensorMapSwizzle) = Field(description="CUtensorMapSwizzle")
    l2Promotion: Enum(TensorMapL2Promotion) = Field(description="CUtensorMapL2promotion")
    oobFill: Enum(TensorMapFloatOOBFill) = Field(description="CUtensorMapFloatOOBfill")
