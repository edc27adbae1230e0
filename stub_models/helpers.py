"""The `cuda_dialect_*` helpers libcute_dsl_runtime.so exports next to the CUDA wrappers.

They are not CUDA API functions: the CuTe DSL's generated host code calls them (see
cutlass_dsl/tvm_ffi_provider.py, which declares them as
`i32 cuda_dialect_init_library_once(ptr, ptr, ptr, ptr)`, `void cuda_dialect_unload_library_once(ptr)`
and `ptr cuda_dialect_get_error_name(i32)`).  What each does was read from the x86-64
disassembly of nvidia-cutlass-dsl 4.8.0's libcute_dsl_runtime.so, and the `*_library_once` pair again
from 4.8.1's libcuda_dialect_runtime_static.a with a native run (tests/cuda/native_library_once/);
parameter names are ours.  Inside the library they call the CUDA runtime directly, not the `_cuda*`
wrappers: emu records those calls under the runtime's names (cudaGetDeviceCount, ...) with the
helper as their caller.  A model with `calls_back` runs guest code (emu.emulator.guest_calls).
"""

from typing import ClassVar, Literal

from pydantic import Field

from .base import CudaCall
from .enums import CudaError
from .fields import Enum, Ptr


class HelperCall(CudaCall):
    """Base of the `cuda_dialect_*` models (api = "helper")."""

    api: ClassVar[Literal["runtime", "driver", "helper"]] = "helper"
    calls_back: ClassVar[bool] = False    # its behaviour is a generator taking the guest (calls into it, its memory)


class CudaDialectInitLibraryOnce(HelperCall):
    """Load a CUDA library once per process, thread-safely, and run a per-device step.

    If `*library` is already non-NULL it returns 0 at once.  Otherwise it takes a process-wide spin
    lock, checks again, and calls `load(&lib)` (lib a local set to NULL; the generated `cuda_init`, which loads the embedded
    fatbin with cudaLibraryLoadData).  With `load_to_device` non-NULL it then calls
    cudaGetDeviceCount and `load_to_device(&lib, device)` for every ordinal (the generated
    `cuda_load_to_device`, which sets kernel attributes per device); only when every device fails
    is that an error.  On success it stores lib in `*library`, unlocks and returns 0.  On an error it
    calls `set_error("RuntimeError", "Got Cuda Runtime Error: <cudaGetErrorName> <cudaGetErrorString>")`
    (`set_error("RuntimeError", "CUDA Error")` if malloc fails), leaves `*library` NULL and returns -1.
    Quirk: when `load` fails, the message is built by calling `load` twice more (once for the string,
    once for the name), and a failing cudaGetDeviceCount is likewise called twice more.
    `set_error` is TVMFFIErrorSetRaisedFromCStr in the TVM-FFI exports.
    """

    symbol: ClassVar[str] = "cuda_dialect_init_library_once"
    calls_back: ClassVar[bool] = True
    prototype: ClassVar[str] = ("int cuda_dialect_init_library_once(void **library, cuda_dialect_load_fn load, "
                                "cuda_dialect_load_to_device_fn load_to_device, cuda_dialect_set_error_fn set_error)")
    library: Ptr = Field(description="address of the module's cached library handle (a global, 0 until loaded)")
    load: Ptr = Field(description="int (*)(void **lib): loads the library (generated cuda_init)")
    load_to_device: Ptr = Field(description="int (*)(void **lib, int device) or NULL: per-device setup (generated cuda_load_to_device)")
    set_error: Ptr = Field(description="void (*)(const char *kind, const char *message): error reporter")


class CudaDialectUnloadLibraryOnce(HelperCall):
    """Atomically swap `*library` with NULL and, if it held a handle, cudaLibraryUnload it.

    Returns void (the generated code registers it, through a wrapper, as a global destructor).
    """

    symbol: ClassVar[str] = "cuda_dialect_unload_library_once"
    calls_back: ClassVar[bool] = True
    prototype: ClassVar[str] = "void cuda_dialect_unload_library_once(void **library)"
    library: Ptr = Field(description="address of the cached library handle; set to NULL")


class CudaDialectGetErrorName(HelperCall):
    """Tail-calls cudaGetErrorName(error): returns a `const char *` such as "cudaErrorInvalidValue"."""

    symbol: ClassVar[str] = "cuda_dialect_get_error_name"
    prototype: ClassVar[str] = "const char *cuda_dialect_get_error_name(cudaError_t error)"
    error: Enum(CudaError) = Field(description="cudaError_t to name")


class CudaDialectAssertSuccess(HelperCall):
    """Return if `error` is 0; otherwise print to stderr
    "CUDA Dialect Assertion failed on CUDA error: <cudaGetErrorName> - <cudaGetErrorString>" and abort()."""

    symbol: ClassVar[str] = "cuda_dialect_assert_success"
    prototype: ClassVar[str] = "void cuda_dialect_assert_success(cudaError_t error)"
    error: Enum(CudaError) = Field(description="cudaError_t to check; non-zero aborts the process")


class CudaDialectPrintOnError(HelperCall):
    """Return if `error` is 0; otherwise print "CUDA error: <cudaGetErrorName> - <cudaGetErrorString>"
    to stderr and return (void)."""

    symbol: ClassVar[str] = "cuda_dialect_print_on_error"
    prototype: ClassVar[str] = "void cuda_dialect_print_on_error(cudaError_t error)"
    error: Enum(CudaError) = Field(description="cudaError_t to report when non-zero")
