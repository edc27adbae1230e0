"""Device management, profiler and device-property wrappers (`_cuda*`, CUDA runtime API).

cudaGetDevice and cudaDeviceGetAttribute, which every export calls, are in loaders.py.  Every
wrapper here is a plain `jmp` into the statically linked CUDA runtime, so its signature is
the public prototype's.
"""

from typing import ClassVar

from pydantic import Field

from .base import CudaCall
from .fields import Int, Out, Struct


class CudaGetDeviceCount(CudaCall):
    symbol: ClassVar[str] = "_cudaGetDeviceCount"
    prototype: ClassVar[str] = "cudaError_t cudaGetDeviceCount(int *count)"
    count: Out("i32") = Field(description="receives the number of CUDA devices")


class CudaSetDevice(CudaCall):
    symbol: ClassVar[str] = "_cudaSetDevice"
    prototype: ClassVar[str] = "cudaError_t cudaSetDevice(int device)"
    device: Int = Field(description="device ordinal to make current for this host thread")


class CudaGetDeviceProperties(CudaCall):
    """cudaGetDeviceProperties; the CUDA 12 header maps the name to cudaGetDeviceProperties_v2.

    The callee fills the whole cudaDeviceProp struct (about 1 KiB) at `prop`.
    """

    symbol: ClassVar[str] = "_cudaGetDeviceProperties"
    prototype: ClassVar[str] = "cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device)"
    prop: Struct("cudaDeviceProp") = Field(description="cudaDeviceProp the callee fills in")
    device: Int = Field(description="device ordinal")


class CudaDeviceSynchronize(CudaCall):
    symbol: ClassVar[str] = "_cudaDeviceSynchronize"
    prototype: ClassVar[str] = "cudaError_t cudaDeviceSynchronize(void)"


class CudaProfilerStart(CudaCall):
    symbol: ClassVar[str] = "_cudaProfilerStart"
    prototype: ClassVar[str] = "cudaError_t cudaProfilerStart(void)"


class CudaProfilerStop(CudaCall):
    symbol: ClassVar[str] = "_cudaProfilerStop"
    prototype: ClassVar[str] = "cudaError_t cudaProfilerStop(void)"
