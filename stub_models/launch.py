"""Kernel launch and occupancy wrappers (CUDA runtime API); cudaLaunchKernelEx, which every export calls, is in loaders.py."""

from typing import ClassVar

from pydantic import Field

from .base import CudaCall
from .fields import Handle, Int, Out, Ptr, Size, UInt


class CudaLaunchKernel(CudaCall):
    """`_cudaLaunchKernel` does NOT have cudaLaunchKernel's signature.

    The public `cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
    size_t sharedMem, cudaStream_t stream)` passes each dim3 by value (x86-64: two registers per
    dim3).  The wrapper takes the six dimensions as separate unsigned ints (rsi, edx, ecx, r8d, r9d,
    then the stack), builds a cudaLaunchConfig_t on its stack with attrs = NULL, numAttrs = 0, and
    calls cudaLaunchKernelEx(&config, func, args): 10 arguments, the last four on the x86-64 stack.
    """

    symbol: ClassVar[str] = "_cudaLaunchKernel"
    prototype: ClassVar[str] = ("cudaError_t _cudaLaunchKernel(const void *func, unsigned int gridDimX, unsigned int gridDimY, "
                                "unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, "
                                "void **args, size_t sharedMem, cudaStream_t stream)")
    public_prototype: ClassVar[str] = ("cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, "
                                       "size_t sharedMem, cudaStream_t stream)")
    func: Handle = Field(description="the kernel")
    gridDimX: UInt = Field(description="grid size in blocks, x")
    gridDimY: UInt = Field(description="grid size in blocks, y")
    gridDimZ: UInt = Field(description="grid size in blocks, z")
    blockDimX: UInt = Field(description="block size in threads, x")
    blockDimY: UInt = Field(description="block size in threads, y")
    blockDimZ: UInt = Field(description="block size in threads, z (first stack argument on x86-64)")
    args: Ptr = Field(description="array of pointers to the kernel arguments")
    sharedMem: Size = Field(description="dynamic shared memory per block, bytes")
    stream: Handle = Field(description="stream (0: the legacy default stream)")


class CudaOccupancyMaxActiveBlocksPerMultiprocessor(CudaCall):
    symbol: ClassVar[str] = "_cudaOccupancyMaxActiveBlocksPerMultiprocessor"
    prototype: ClassVar[str] = ("cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, "
                                "int blockSize, size_t dynamicSMemSize)")
    numBlocks: Out("i32") = Field(description="receives the maximum number of resident blocks per SM")
    func: Handle = Field(description="the kernel")
    blockSize: Int = Field(description="threads per block the kernel would be launched with")
    dynamicSMemSize: Size = Field(description="dynamic shared memory per block, bytes")
