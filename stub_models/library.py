"""Library / kernel wrappers of the CUDA runtime API (`_cudaLibrary*`, kernel attributes).

cudaLibraryLoadData, cudaLibraryGetKernel, cudaFuncSetAttribute and cudaKernelSetAttributeForDevice,
which every export calls, are in loaders.py.  Each wrapper is a plain `jmp` into the statically linked CUDA runtime (public prototype).  The
cudaJitOption / cudaLibraryOption arrays are passed as raw pointers; emu does not decode them.
"""

from typing import ClassVar

from pydantic import Field

from .base import CudaCall
from .fields import CString, Handle, Out, Ptr, UInt
from .loaders import LOAD_OPTIONS


class CudaLibraryLoadFromFile(CudaCall):
    symbol: ClassVar[str] = "_cudaLibraryLoadFromFile"
    prototype: ClassVar[str] = f"cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t *library, const char *fileName, {LOAD_OPTIONS})"
    library: Out("handle") = Field(description="receives the library handle")
    fileName: CString = Field(description="path of the cubin / fatbin / PTX file")
    jitOptions: Ptr = Field(description="array of cudaJitOption")
    jitOptionsValues: Ptr = Field(description="array of JIT option values")
    numJitOptions: UInt = Field(description="number of JIT options")
    libraryOptions: Ptr = Field(description="array of cudaLibraryOption")
    libraryOptionValues: Ptr = Field(description="array of library option values")
    numLibraryOptions: UInt = Field(description="number of library options")


class CudaLibraryUnload(CudaCall):
    symbol: ClassVar[str] = "_cudaLibraryUnload"
    prototype: ClassVar[str] = "cudaError_t cudaLibraryUnload(cudaLibrary_t library)"
    library: Handle = Field(description="library handle to unload")


class CudaLibraryGetKernelCount(CudaCall):
    symbol: ClassVar[str] = "_cudaLibraryGetKernelCount"
    prototype: ClassVar[str] = "cudaError_t cudaLibraryGetKernelCount(unsigned int *count, cudaLibrary_t lib)"
    count: Out("u32") = Field(description="receives the number of kernels in the library")
    lib: Handle = Field(description="library handle")


class CudaLibraryGetGlobal(CudaCall):
    symbol: ClassVar[str] = "_cudaLibraryGetGlobal"
    prototype: ClassVar[str] = "cudaError_t cudaLibraryGetGlobal(void **dptr, size_t *bytes, cudaLibrary_t library, const char *name)"
    dptr: Out("handle") = Field(description="receives the global's device pointer (may be NULL)")
    bytes: Out("size") = Field(description="receives the global's size in bytes (may be NULL)")
    library: Handle = Field(description="library handle")
    name: CString = Field(description="name of the __device__ global")


class CudaLibraryGetManaged(CudaCall):
    symbol: ClassVar[str] = "_cudaLibraryGetManaged"
    prototype: ClassVar[str] = "cudaError_t cudaLibraryGetManaged(void **dptr, size_t *bytes, cudaLibrary_t library, const char *name)"
    dptr: Out("handle") = Field(description="receives the managed variable's pointer (host-accessible; may be NULL)")
    bytes: Out("size") = Field(description="receives its size in bytes (may be NULL)")
    library: Handle = Field(description="library handle")
    name: CString = Field(description="name of the __managed__ variable")


class CudaLibraryGetUnifiedFunction(CudaCall):
    """The prototype's third parameter is `symbol`; the field is `symbol_` (CudaCall.symbol is taken)."""

    symbol: ClassVar[str] = "_cudaLibraryGetUnifiedFunction"
    prototype: ClassVar[str] = "cudaError_t cudaLibraryGetUnifiedFunction(void **fptr, cudaLibrary_t library, const char *symbol)"
    fptr: Out("handle") = Field(description="receives the unified function pointer")
    library: Handle = Field(description="library handle")
    symbol_: CString = Field(description="name of the unified function (prototype name `symbol`)")

