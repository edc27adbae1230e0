"""Former home of the runtime models; they now live in loaders/device/library/launch/stream/memory.py.

Kept so older imports keep working: re-exports the models and field types that lived here.
"""

from .device import CudaGetDeviceCount
from .fields import CString, Handle, Int, Out, Ptr, UInt
from .loaders import (CudaDeviceGetAttribute, CudaFuncSetAttribute, CudaGetDevice, CudaKernelSetAttributeForDevice,
                      CudaLaunchKernelEx, CudaLibraryGetKernel, CudaLibraryLoadData)

__all__ = ["CString", "CudaDeviceGetAttribute", "CudaFuncSetAttribute", "CudaGetDevice", "CudaGetDeviceCount",
           "CudaKernelSetAttributeForDevice", "CudaLaunchKernelEx", "CudaLibraryGetKernel", "CudaLibraryLoadData",
           "Handle", "Int", "Out", "Ptr", "UInt"]
