"""The eight wrappers every export's loaders and launch call, in a module of their own.

Every nvidia-cutlass-dsl export emu has seen (4.3.5 to 4.8.1, every fixture in tests/fixtures)
imports exactly these: cudaGetDevice, cudaDeviceGetAttribute, cudaLibraryLoadData,
cudaLibraryGetKernel, cudaFuncSetAttribute, cudaKernelSetAttributeForDevice, cudaLaunchKernelEx
and the driver's cuKernelGetAttribute.  The catalogue imports a model's module on the first look-up
of its symbol, so keeping them apart from the rest of their areas (device.py, library.py,
launch.py, driver.py) lets a run build these eight models and not the other twenty-six those
modules hold: about ten milliseconds of every process.

The `_cuda*` ones are plain `jmp`s into the statically linked CUDA runtime (public prototypes);
the cudaJitOption / cudaLibraryOption arrays are passed as raw pointers, not decoded.
"""

from typing import ClassVar, Literal

from pydantic import Field

from .base import CudaCall
from .enums import CudaFuncAttribute, DeviceAttribute, FuncAttribute
from .fields import CString, Enum, Handle, Int, Out, Ptr, Struct, UInt

LOAD_OPTIONS = ("cudaJitOption *jitOptions, void **jitOptionsValues, unsigned int numJitOptions, "
                "cudaLibraryOption *libraryOptions, void **libraryOptionValues, unsigned int numLibraryOptions")


class CudaGetDevice(CudaCall):
    symbol: ClassVar[str] = "_cudaGetDevice"
    prototype: ClassVar[str] = "cudaError_t cudaGetDevice(int *device)"
    device: Out("i32") = Field(description="receives the current device ordinal")


class CudaDeviceGetAttribute(CudaCall):
    symbol: ClassVar[str] = "_cudaDeviceGetAttribute"
    prototype: ClassVar[str] = "cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device)"
    value: Out("i32") = Field(description="receives the attribute value")
    attr: Enum(DeviceAttribute) = Field(description="cudaDeviceAttr (same numbers as CUdevice_attribute)")
    device: Int = Field(description="device ordinal")


class CudaLibraryLoadData(CudaCall):
    symbol: ClassVar[str] = "_cudaLibraryLoadData"
    prototype: ClassVar[str] = f"cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code, {LOAD_OPTIONS})"
    library: Out("handle") = Field(description="receives the library handle")
    code: Ptr = Field(description="the embedded fatbin / cubin / PTX image")
    jitOptions: Ptr = Field(description="array of cudaJitOption")
    jitOptionsValues: Ptr = Field(description="array of JIT option values")
    numJitOptions: UInt = Field(description="number of JIT options")
    libraryOptions: Ptr = Field(description="array of cudaLibraryOption")
    libraryOptionValues: Ptr = Field(description="array of library option values")
    numLibraryOptions: UInt = Field(description="number of library options")


class CudaLibraryGetKernel(CudaCall):
    symbol: ClassVar[str] = "_cudaLibraryGetKernel"
    prototype: ClassVar[str] = "cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library, const char *name)"
    pKernel: Out("handle") = Field(description="receives the kernel handle")
    library: Handle = Field(description="library handle")
    name: CString = Field(description="kernel (entry function) name")


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


class CudaLaunchKernelEx(CudaCall):
    symbol: ClassVar[str] = "_cudaLaunchKernelEx"
    prototype: ClassVar[str] = "cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t *config, const void *func, void **args)"
    config: Struct("cudaLaunchConfig_t") = Field(description="launch configuration (grid, block, smem, stream, attributes)")
    func: Handle = Field(description="the kernel")
    args: Ptr = Field(description="array of pointers to the kernel arguments")


class CuKernelGetAttribute(CudaCall):
    """The wrapper's last argument is a device ordinal, not a CUdevice.

    A driver wrapper (driver.py says how those resolve their driver function).
    `_cuKernelGetAttribute` first calls `_cuDeviceGet(&dev, device)` and passes the resulting
    CUdevice on; if that fails it returns 999 (CUDA_ERROR_UNKNOWN), not cuDeviceGet's error.  Same
    register count as the public prototype (both types are int).
    """

    symbol: ClassVar[str] = "_cuKernelGetAttribute"
    prototype: ClassVar[str] = "CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)"
    api: ClassVar[Literal["runtime", "driver", "helper"]] = "driver"
    pi: Out("i32") = Field(description="receives the attribute value")
    attrib: Enum(FuncAttribute) = Field(description="CUfunction_attribute")
    kernel: Handle = Field(description="kernel handle")
    dev: Int = Field(description="device ordinal (the wrapper converts it with cuDeviceGet)")
