"""Library / kernel wrappers of the CUDA runtime API (`_cudaLibrary*`, kernel attributes).

Each wrapper is a plain `jmp` into the statically linked CUDA runtime (public prototype).  The
cudaJitOption / cudaLibraryOption arrays are passed as raw pointers; emu does not decode them.
"""

from typing import ClassVar

from pydantic import Field

from .base import CudaCall
from .enums import CudaFuncAttribute
from .fields import CString, Enum, Handle, Int, Out, Ptr, UInt

_LOAD_OPTIONS = ("cudaJitOption *jitOptions, void **jitOptionsValues, unsigned int numJitOptions, "
                 "cudaLibraryOption *libraryOptions, void **libraryOptionValues, unsigned int numLibraryOptions")


class CudaLibraryLoadData(CudaCall):
    symbol: ClassVar[str] = "_cudaLibraryLoadData"
    prototype: ClassVar[str] = f"cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code, {_LOAD_OPTIONS})"
    library: Out("handle") = Field(description="receives the library handle")
    code: Ptr = Field(description="the embedded fatbin / cubin / PTX image")
    jitOptions: Ptr = Field(description="array of cudaJitOption")
    jitOptionsValues: Ptr = Field(description="array of JIT option values")
    numJitOptions: UInt = Field(description="number of JIT options")
    libraryOptions: Ptr = Field(description="array of cudaLibraryOption")
    libraryOptionValues: Ptr = Field(description="array of library option values")
    numLibraryOptions: UInt = Field(description="number of library options")


class CudaLibraryLoadFromFile(CudaCall):
    symbol: ClassVar[str] = "_cudaLibraryLoadFromFile"
    prototype: ClassVar[str] = f"cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t *library, const char *fileName, {_LOAD_OPTIONS})"
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


class CudaLibraryGetKernel(CudaCall):
    symbol: ClassVar[str] = "_cudaLibraryGetKernel"
    prototype: ClassVar[str] = "cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library, const char *name)"
    pKernel: Out("handle") = Field(description="receives the kernel handle")
    library: Handle = Field(description="library handle")
    name: CString = Field(description="kernel (entry function) name")


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


class CudaFuncSetAttribute(CudaCall):
    symbol: ClassVar[str] = "_cudaFuncSetAttribute"
    prototype: ClassVar[str] = "cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value)"
    func: Handle = Field(description="the kernel (a cudaKernel_t passed as a function pointer)")
    attr: Enum(CudaFuncAttribute) = Field(description="cudaFuncAttribute (8-15 as CUfunction_attribute)")
    value: Int = Field(description="the value to set")


class CudaKernelSetAttributeForDevice(CudaCall):
    symbol: ClassVar[str] = "_cudaKernelSetAttributeForDevice"
    prototype: ClassVar[str] = "cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel, cudaFuncAttribute attr, int value, int device)"
    kernel: Handle = Field(description="kernel handle")
    attr: Enum(CudaFuncAttribute) = Field(description="cudaFuncAttribute (8-15 as CUfunction_attribute)")
    value: Int = Field(description="the value to set")
    device: Int = Field(description="device ordinal")
