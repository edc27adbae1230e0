"""The plain CUDA runtime functions the DSL runtime's helpers call inside themselves: recorded, never stubbed.

`cuda_dialect_init_library_once` and `cuda_dialect_unload_library_once` (helpers.py) call the CUDA runtime
directly, not through the `_cuda*` wrappers, and emu records those calls under the runtime's names with the
helper as their caller (emu.cuda.behaviours.helpers).  These models say how to show and match those records
(their parameters, which is a pointer, which an output) and what a scenario may inject into them.  They are
not in `model_of`'s catalogues on purpose: no stub family answers these names, so an object or shared library
that imports `cudaGetDeviceCount` itself (a static-runtime library's PLT) still has it unanswered, and
`inspect` does not call it stubbed.  `stub_models.INNER_CATALOGUE` lists them; `recorded_model` looks a
symbol up in every catalogue and then here.
"""

from typing import ClassVar

from pydantic import Field

from .base import CudaCall
from .enums import CudaError
from .fields import Enum, Handle, Out


class InnerCall(CudaCall):
    """Base of the calls a helper makes inside itself: `made_by` the helpers that make it, `injectable` whether a
    scenario's runtime.errors can make it fail (the helper's behaviour honours the injection)."""

    made_by: ClassVar[tuple[str, ...]]
    injectable: ClassVar[bool] = True
    returns_text: ClassVar[bool] = False     # returns a `const char *`: its record shows the text (args["text"])


class CudaGetDeviceCountInner(InnerCall):
    """How many devices there are: init_library_once calls `load_to_device` for each."""

    symbol: ClassVar[str] = "cudaGetDeviceCount"
    made_by: ClassVar[tuple[str, ...]] = ("cuda_dialect_init_library_once",)
    prototype: ClassVar[str] = "cudaError_t cudaGetDeviceCount(int *count)"
    count: Out("i32") = Field(description="receives the number of CUDA devices")


class CudaGetErrorNameInner(InnerCall):
    """The error's enum name ("cudaErrorNoKernelImageForDevice"), for the RuntimeError init_library_once raises."""

    symbol: ClassVar[str] = "cudaGetErrorName"
    made_by: ClassVar[tuple[str, ...]] = ("cuda_dialect_init_library_once",)
    injectable: ClassVar[bool] = False
    returns_text: ClassVar[bool] = True
    prototype: ClassVar[str] = "const char *cudaGetErrorName(cudaError_t error)"
    error: Enum(CudaError) = Field(description="the cudaError_t to name")


class CudaGetErrorStringInner(InnerCall):
    """The error's description ("no kernel image is available ..."), for the RuntimeError init_library_once raises."""

    symbol: ClassVar[str] = "cudaGetErrorString"
    made_by: ClassVar[tuple[str, ...]] = ("cuda_dialect_init_library_once",)
    injectable: ClassVar[bool] = False
    returns_text: ClassVar[bool] = True
    prototype: ClassVar[str] = "const char *cudaGetErrorString(cudaError_t error)"
    error: Enum(CudaError) = Field(description="the cudaError_t to describe")


class CudaLibraryUnloadInner(InnerCall):
    """unload_library_once's unload of the handle it swapped out (its result is dropped)."""

    symbol: ClassVar[str] = "cudaLibraryUnload"
    made_by: ClassVar[tuple[str, ...]] = ("cuda_dialect_unload_library_once",)
    prototype: ClassVar[str] = "cudaError_t cudaLibraryUnload(cudaLibrary_t library)"
    library: Handle = Field(description="the library handle unloaded")
