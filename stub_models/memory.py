"""Memory allocation, copy and set wrappers (CUDA runtime API).

Allocation results are modeled as `out` handles: emu hands out opaque values, it does not map
memory behind them, so host code that dereferences a cudaMallocHost / cudaMallocManaged pointer
needs a behaviour that maps it.
"""

from typing import ClassVar

from pydantic import Field

from .base import CudaCall
from .enums import MemcpyKind
from .fields import Enum, Handle, Int, Out, Ptr, Size, UInt


class CudaMalloc(CudaCall):
    symbol: ClassVar[str] = "_cudaMalloc"
    prototype: ClassVar[str] = "cudaError_t cudaMalloc(void **devPtr, size_t size)"
    devPtr: Out("handle") = Field(description="receives the device pointer")
    size: Size = Field(description="bytes to allocate")


class CudaMallocAsync(CudaCall):
    symbol: ClassVar[str] = "_cudaMallocAsync"
    prototype: ClassVar[str] = "cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)"
    devPtr: Out("handle") = Field(description="receives the device pointer")
    size: Size = Field(description="bytes to allocate")
    hStream: Handle = Field(description="stream ordering the allocation")


class CudaMallocHost(CudaCall):
    symbol: ClassVar[str] = "_cudaMallocHost"
    prototype: ClassVar[str] = "cudaError_t cudaMallocHost(void **ptr, size_t size)"
    ptr: Out("handle") = Field(description="receives the page-locked host pointer (host code may dereference it)")
    size: Size = Field(description="bytes to allocate")


class CudaMallocManaged(CudaCall):
    symbol: ClassVar[str] = "_cudaMallocManaged"
    prototype: ClassVar[str] = "cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)"
    devPtr: Out("handle") = Field(description="receives the managed pointer (host code may dereference it)")
    size: Size = Field(description="bytes to allocate")
    flags: UInt = Field(description="cudaMemAttachGlobal (1) or cudaMemAttachHost (2); see enums.MemAttachFlags")


class CudaFree(CudaCall):
    symbol: ClassVar[str] = "_cudaFree"
    prototype: ClassVar[str] = "cudaError_t cudaFree(void *devPtr)"
    devPtr: Handle = Field(description="device pointer to free (0 is a no-op)")


class CudaFreeAsync(CudaCall):
    symbol: ClassVar[str] = "_cudaFreeAsync"
    prototype: ClassVar[str] = "cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)"
    devPtr: Handle = Field(description="device pointer to free")
    hStream: Handle = Field(description="stream ordering the free")


class CudaFreeHost(CudaCall):
    symbol: ClassVar[str] = "_cudaFreeHost"
    prototype: ClassVar[str] = "cudaError_t cudaFreeHost(void *ptr)"
    ptr: Handle = Field(description="page-locked host pointer to free")


class CudaMemcpy(CudaCall):
    symbol: ClassVar[str] = "_cudaMemcpy"
    prototype: ClassVar[str] = "cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind)"
    dst: Ptr = Field(description="destination")
    src: Ptr = Field(description="source")
    count: Size = Field(description="bytes to copy")
    kind: Enum(MemcpyKind) = Field(description="cudaMemcpyKind")


class CudaMemcpyAsync(CudaCall):
    symbol: ClassVar[str] = "_cudaMemcpyAsync"
    prototype: ClassVar[str] = ("cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind, "
                                "cudaStream_t stream)")
    dst: Ptr = Field(description="destination")
    src: Ptr = Field(description="source")
    count: Size = Field(description="bytes to copy")
    kind: Enum(MemcpyKind) = Field(description="cudaMemcpyKind")
    stream: Handle = Field(description="stream ordering the copy")


class CudaMemset(CudaCall):
    symbol: ClassVar[str] = "_cudaMemset"
    prototype: ClassVar[str] = "cudaError_t cudaMemset(void *devPtr, int value, size_t count)"
    devPtr: Ptr = Field(description="device memory to set")
    value: Int = Field(description="byte value (the low 8 bits are used)")
    count: Size = Field(description="bytes to set")


class CudaMemsetAsync(CudaCall):
    symbol: ClassVar[str] = "_cudaMemsetAsync"
    prototype: ClassVar[str] = "cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)"
    devPtr: Ptr = Field(description="device memory to set")
    value: Int = Field(description="byte value (the low 8 bits are used)")
    count: Size = Field(description="bytes to set")
    stream: Handle = Field(description="stream ordering the set")
