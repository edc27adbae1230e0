"""CUDA enums by their numbers, so traces can show `9 PREFERRED_SHARED_MEMORY_CARVEOUT`.

Names drop the C prefix (`CU_FUNC_ATTRIBUTE_`, `CU_DEVICE_ATTRIBUTE_`, `cudaLaunchAttribute`,
`cudaError`) and use the driver API's upper-case spelling where the driver has the enum; runtime-only
enums turn the runtime's CamelCase into UPPER_SNAKE (`cudaErrorInvalidValue` -> INVALID_VALUE).
`enum_value` accepts every spelling (number, our name, driver or runtime name with its prefix).

Values follow the CUDA 12.9 and 13.x headers (13.x adds to 12.9; nothing was renumbered).  The
class bodies were generated once from cuda-bindings 13.5 (plus 12.9 for the few names 13 dropped);
tests/stubs/test_stub_models.py checks every value and name against cuda-bindings where it is installed.
This module itself never imports cuda-bindings.  The enums a run of the loaders uses are made at import;
the others (CUresult, limits, streams, events, memory, tensor maps) when first named (`_more`).
"""
from __future__ import annotations

from enum import IntEnum

try:
    # How the standard library makes its own large enums (http.HTTPStatus, re.RegexFlag...): the class
    # that the class statement would make, members and all, built without EnumType's per-member hooks
    # (a third of the time: over 2 ms of a cold run for these).  tests/stubs/test_stub_models.py checks each
    # against the one `class X(IntEnum)` makes, with the standard library's own comparison.
    from enum import _simple_enum as _fast
except ImportError:                 # Python 3.10: the class statement's own way
    def _fast(etype):
        def make(cls):
            body = type(etype).__prepare__(cls.__name__, (etype,))
            for key, value in cls.__dict__.items():
                if key not in ("__dict__", "__weakref__"):
                    body[key] = value
            return type(etype)(cls.__name__, (etype,), body)
        return make


@_fast(IntEnum)
class FuncAttribute:
    """CUfunction_attribute (cuKernelGetAttribute / cuFuncGetAttribute).

    0-7 are read-only; 8-15 have the same numbers in the runtime's cudaFuncAttribute.  From 16 the
    two enums part: CU_FUNC_ATTRIBUTE_DEVICE_NODE_UPDATE_SUPPORTED is 16 and SHARED_MEMORY_MODE 17,
    while cudaFuncAttributeSharedMemoryMode is 16 (see CudaFuncAttribute).
    """

    MAX_THREADS_PER_BLOCK = 0
    SHARED_SIZE_BYTES = 1
    CONST_SIZE_BYTES = 2
    LOCAL_SIZE_BYTES = 3
    NUM_REGS = 4
    PTX_VERSION = 5
    BINARY_VERSION = 6
    CACHE_MODE_CA = 7
    MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
    PREFERRED_SHARED_MEMORY_CARVEOUT = 9
    CLUSTER_SIZE_MUST_BE_SET = 10
    REQUIRED_CLUSTER_WIDTH = 11
    REQUIRED_CLUSTER_HEIGHT = 12
    REQUIRED_CLUSTER_DEPTH = 13
    NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
    CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15
    DEVICE_NODE_UPDATE_SUPPORTED = 16
    SHARED_MEMORY_MODE = 17


READ_ONLY_FUNC_ATTRIBUTES = frozenset(range(0, 8))
# The attributes cudaFuncSetAttribute / cudaKernelSetAttributeForDevice accept on CUDA 12 (8-15);
# CUDA 13's runtime adds cudaFuncAttributeSharedMemoryMode = 16.
SETTABLE_FUNC_ATTRIBUTES = frozenset(range(8, 16))


@_fast(IntEnum)
class CudaFuncAttribute:
    """cudaFuncAttribute, the `attr` of cudaFuncSetAttribute / cudaKernelSetAttributeForDevice.

    8-15 equal CUfunction_attribute's numbers and carry its names; 16 is the runtime's
    cudaFuncAttributeSharedMemoryMode (CUDA 13), which the driver numbers 17.  0-7 are not
    cudaFuncAttribute values (a real H200 answers cudaErrorInvalidValue for them) but keep the
    driver's names so traces of such calls stay readable.
    """

    MAX_THREADS_PER_BLOCK = 0
    SHARED_SIZE_BYTES = 1
    CONST_SIZE_BYTES = 2
    LOCAL_SIZE_BYTES = 3
    NUM_REGS = 4
    PTX_VERSION = 5
    BINARY_VERSION = 6
    CACHE_MODE_CA = 7
    MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
    PREFERRED_SHARED_MEMORY_CARVEOUT = 9
    CLUSTER_SIZE_MUST_BE_SET = 10
    REQUIRED_CLUSTER_WIDTH = 11
    REQUIRED_CLUSTER_HEIGHT = 12
    REQUIRED_CLUSTER_DEPTH = 13
    NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
    CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15
    SHARED_MEMORY_MODE = 16


@_fast(IntEnum)
class LaunchAttributeID:
    """cudaLaunchAttributeID / CUlaunchAttributeID (same numbers; 15 is unassigned)."""

    IGNORE = 0
    ACCESS_POLICY_WINDOW = 1
    COOPERATIVE = 2
    SYNCHRONIZATION_POLICY = 3
    CLUSTER_DIMENSION = 4
    CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5
    PROGRAMMATIC_STREAM_SERIALIZATION = 6
    PROGRAMMATIC_EVENT = 7
    PRIORITY = 8
    MEM_SYNC_DOMAIN_MAP = 9
    MEM_SYNC_DOMAIN = 10
    PREFERRED_CLUSTER_DIMENSION = 11
    LAUNCH_COMPLETION_EVENT = 12
    DEVICE_UPDATABLE_KERNEL_NODE = 13
    PREFERRED_SHARED_MEMORY_CARVEOUT = 14
    NVLINK_UTIL_CENTRIC_SCHEDULING = 16
    PORTABLE_CLUSTER_SIZE_MODE = 17
    SHARED_MEMORY_MODE = 18


@_fast(IntEnum)
class CudaError:
    """cudaError_t, every value of the CUDA 12.9 and 13.x runtime headers (`cudaErrorInvalidValue` -> INVALID_VALUE).

    The `_cuda*` wrappers return these; emu's traces label return values with this enum.
    """

    SUCCESS = 0
    INVALID_VALUE = 1
    MEMORY_ALLOCATION = 2
    INITIALIZATION_ERROR = 3
    CUDART_UNLOADING = 4
    PROFILER_DISABLED = 5
    PROFILER_NOT_INITIALIZED = 6
    PROFILER_ALREADY_STARTED = 7
    PROFILER_ALREADY_STOPPED = 8
    INVALID_CONFIGURATION = 9
    VERSION_TRANSLATION = 10
    INVALID_PITCH_VALUE = 12
    INVALID_SYMBOL = 13
    INVALID_HOST_POINTER = 16
    INVALID_DEVICE_POINTER = 17
    INVALID_TEXTURE = 18
    INVALID_TEXTURE_BINDING = 19
    INVALID_CHANNEL_DESCRIPTOR = 20
    INVALID_MEMCPY_DIRECTION = 21
    ADDRESS_OF_CONSTANT = 22
    TEXTURE_FETCH_FAILED = 23
    TEXTURE_NOT_BOUND = 24
    SYNCHRONIZATION_ERROR = 25
    INVALID_FILTER_SETTING = 26
    INVALID_NORM_SETTING = 27
    MIXED_DEVICE_EXECUTION = 28
    NOT_YET_IMPLEMENTED = 31
    MEMORY_VALUE_TOO_LARGE = 32
    STUB_LIBRARY = 34
    INSUFFICIENT_DRIVER = 35
    CALL_REQUIRES_NEWER_DRIVER = 36
    INVALID_SURFACE = 37
    DUPLICATE_VARIABLE_NAME = 43
    DUPLICATE_TEXTURE_NAME = 44
    DUPLICATE_SURFACE_NAME = 45
    DEVICES_UNAVAILABLE = 46
    INCOMPATIBLE_DRIVER_CONTEXT = 49
    MISSING_CONFIGURATION = 52
    PRIOR_LAUNCH_FAILURE = 53
    LAUNCH_MAX_DEPTH_EXCEEDED = 65
    LAUNCH_FILE_SCOPED_TEX = 66
    LAUNCH_FILE_SCOPED_SURF = 67
    SYNC_DEPTH_EXCEEDED = 68
    LAUNCH_PENDING_COUNT_EXCEEDED = 69
    INVALID_DEVICE_FUNCTION = 98
    NO_DEVICE = 100
    INVALID_DEVICE = 101
    DEVICE_NOT_LICENSED = 102
    SOFTWARE_VALIDITY_NOT_ESTABLISHED = 103
    STARTUP_FAILURE = 127
    INVALID_KERNEL_IMAGE = 200
    DEVICE_UNINITIALIZED = 201
    MAP_BUFFER_OBJECT_FAILED = 205
    UNMAP_BUFFER_OBJECT_FAILED = 206
    ARRAY_IS_MAPPED = 207
    ALREADY_MAPPED = 208
    NO_KERNEL_IMAGE_FOR_DEVICE = 209
    ALREADY_ACQUIRED = 210
    NOT_MAPPED = 211
    NOT_MAPPED_AS_ARRAY = 212
    NOT_MAPPED_AS_POINTER = 213
    ECC_UNCORRECTABLE = 214
    UNSUPPORTED_LIMIT = 215
    DEVICE_ALREADY_IN_USE = 216
    PEER_ACCESS_UNSUPPORTED = 217
    INVALID_PTX = 218
    INVALID_GRAPHICS_CONTEXT = 219
    NVLINK_UNCORRECTABLE = 220
    JIT_COMPILER_NOT_FOUND = 221
    UNSUPPORTED_PTX_VERSION = 222
    JIT_COMPILATION_DISABLED = 223
    UNSUPPORTED_EXEC_AFFINITY = 224
    UNSUPPORTED_DEV_SIDE_SYNC = 225
    CONTAINED = 226
    INSUFFICIENT_LOADER_VERSION = 227
    INVALID_SOURCE = 300
    FILE_NOT_FOUND = 301
    SHARED_OBJECT_SYMBOL_NOT_FOUND = 302
    SHARED_OBJECT_INIT_FAILED = 303
    OPERATING_SYSTEM = 304
    INVALID_RESOURCE_HANDLE = 400
    ILLEGAL_STATE = 401
    LOSSY_QUERY = 402
    SYMBOL_NOT_FOUND = 500
    NOT_READY = 600
    ILLEGAL_ADDRESS = 700
    LAUNCH_OUT_OF_RESOURCES = 701
    LAUNCH_TIMEOUT = 702
    LAUNCH_INCOMPATIBLE_TEXTURING = 703
    PEER_ACCESS_ALREADY_ENABLED = 704
    PEER_ACCESS_NOT_ENABLED = 705
    SET_ON_ACTIVE_PROCESS = 708
    CONTEXT_IS_DESTROYED = 709
    ASSERT = 710
    TOO_MANY_PEERS = 711
    HOST_MEMORY_ALREADY_REGISTERED = 712
    HOST_MEMORY_NOT_REGISTERED = 713
    HARDWARE_STACK_ERROR = 714
    ILLEGAL_INSTRUCTION = 715
    MISALIGNED_ADDRESS = 716
    INVALID_ADDRESS_SPACE = 717
    INVALID_PC = 718
    LAUNCH_FAILURE = 719
    COOPERATIVE_LAUNCH_TOO_LARGE = 720
    TENSOR_MEMORY_LEAK = 721
    NOT_PERMITTED = 800
    NOT_SUPPORTED = 801
    SYSTEM_NOT_READY = 802
    SYSTEM_DRIVER_MISMATCH = 803
    COMPAT_NOT_SUPPORTED_ON_DEVICE = 804
    MPS_CONNECTION_FAILED = 805
    MPS_RPC_FAILURE = 806
    MPS_SERVER_NOT_READY = 807
    MPS_MAX_CLIENTS_REACHED = 808
    MPS_MAX_CONNECTIONS_REACHED = 809
    MPS_CLIENT_TERMINATED = 810
    CDP_NOT_SUPPORTED = 811
    CDP_VERSION_MISMATCH = 812
    STREAM_CAPTURE_UNSUPPORTED = 900
    STREAM_CAPTURE_INVALIDATED = 901
    STREAM_CAPTURE_MERGE = 902
    STREAM_CAPTURE_UNMATCHED = 903
    STREAM_CAPTURE_UNJOINED = 904
    STREAM_CAPTURE_ISOLATION = 905
    STREAM_CAPTURE_IMPLICIT = 906
    CAPTURED_EVENT = 907
    STREAM_CAPTURE_WRONG_THREAD = 908
    TIMEOUT = 909
    GRAPH_EXEC_UPDATE_FAILURE = 910
    EXTERNAL_DEVICE = 911
    INVALID_CLUSTER_SIZE = 912
    FUNCTION_NOT_LOADED = 913
    INVALID_RESOURCE_TYPE = 914
    INVALID_RESOURCE_CONFIGURATION = 915
    STREAM_DETACHED = 917
    GRAPH_RECAPTURE_FAILURE = 918
    FABRIC_NOT_READY = 919
    UNKNOWN = 999
    API_FAILURE_BASE = 10000


@_fast(IntEnum)
class DeviceAttribute:
    """CUdevice_attribute numbers, which cudaDeviceGetAttribute accepts too (cudaDeviceAttr is the same
    numbering with gaps: 44, 102-105, 107, 110, 136, 137, 146, ... exist only in the driver enum, and a
    real H200 answers them through cudaDeviceGetAttribute; see facts/h200-probe.jsonl).

    Names use the driver spelling without CU_DEVICE_ATTRIBUTE_ (MAXIMUM_TEXTURE1D_WIDTH, not the
    runtime's MaxTexture1DWidth; `enum_value` accepts both).  Later names for one number are aliases
    (SHARED_MEMORY_PER_BLOCK is MAX_SHARED_MEMORY_PER_BLOCK).  CUDA 13.x values up to 161.
    """

    MAX_THREADS_PER_BLOCK = 1
    MAX_BLOCK_DIM_X = 2
    MAX_BLOCK_DIM_Y = 3
    MAX_BLOCK_DIM_Z = 4
    MAX_GRID_DIM_X = 5
    MAX_GRID_DIM_Y = 6
    MAX_GRID_DIM_Z = 7
    MAX_SHARED_MEMORY_PER_BLOCK = 8
    SHARED_MEMORY_PER_BLOCK = 8
    TOTAL_CONSTANT_MEMORY = 9
    WARP_SIZE = 10
    MAX_PITCH = 11
    MAX_REGISTERS_PER_BLOCK = 12
    REGISTERS_PER_BLOCK = 12
    CLOCK_RATE = 13
    TEXTURE_ALIGNMENT = 14
    GPU_OVERLAP = 15
    MULTIPROCESSOR_COUNT = 16
    KERNEL_EXEC_TIMEOUT = 17
    INTEGRATED = 18
    CAN_MAP_HOST_MEMORY = 19
    COMPUTE_MODE = 20
    MAXIMUM_TEXTURE1D_WIDTH = 21
    MAXIMUM_TEXTURE2D_WIDTH = 22
    MAXIMUM_TEXTURE2D_HEIGHT = 23
    MAXIMUM_TEXTURE3D_WIDTH = 24
    MAXIMUM_TEXTURE3D_HEIGHT = 25
    MAXIMUM_TEXTURE3D_DEPTH = 26
    MAXIMUM_TEXTURE2D_LAYERED_WIDTH = 27
    MAXIMUM_TEXTURE2D_ARRAY_WIDTH = 27
    MAXIMUM_TEXTURE2D_LAYERED_HEIGHT = 28
    MAXIMUM_TEXTURE2D_ARRAY_HEIGHT = 28
    MAXIMUM_TEXTURE2D_LAYERED_LAYERS = 29
    MAXIMUM_TEXTURE2D_ARRAY_NUMSLICES = 29
    SURFACE_ALIGNMENT = 30
    CONCURRENT_KERNELS = 31
    ECC_ENABLED = 32
    PCI_BUS_ID = 33
    PCI_DEVICE_ID = 34
    TCC_DRIVER = 35
    MEMORY_CLOCK_RATE = 36
    GLOBAL_MEMORY_BUS_WIDTH = 37
    L2_CACHE_SIZE = 38
    MAX_THREADS_PER_MULTIPROCESSOR = 39
    ASYNC_ENGINE_COUNT = 40
    UNIFIED_ADDRESSING = 41
    MAXIMUM_TEXTURE1D_LAYERED_WIDTH = 42
    MAXIMUM_TEXTURE1D_LAYERED_LAYERS = 43
    CAN_TEX2D_GATHER = 44
    MAXIMUM_TEXTURE2D_GATHER_WIDTH = 45
    MAXIMUM_TEXTURE2D_GATHER_HEIGHT = 46
    MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE = 47
    MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE = 48
    MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE = 49
    PCI_DOMAIN_ID = 50
    TEXTURE_PITCH_ALIGNMENT = 51
    MAXIMUM_TEXTURECUBEMAP_WIDTH = 52
    MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH = 53
    MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS = 54
    MAXIMUM_SURFACE1D_WIDTH = 55
    MAXIMUM_SURFACE2D_WIDTH = 56
    MAXIMUM_SURFACE2D_HEIGHT = 57
    MAXIMUM_SURFACE3D_WIDTH = 58
    MAXIMUM_SURFACE3D_HEIGHT = 59
    MAXIMUM_SURFACE3D_DEPTH = 60
    MAXIMUM_SURFACE1D_LAYERED_WIDTH = 61
    MAXIMUM_SURFACE1D_LAYERED_LAYERS = 62
    MAXIMUM_SURFACE2D_LAYERED_WIDTH = 63
    MAXIMUM_SURFACE2D_LAYERED_HEIGHT = 64
    MAXIMUM_SURFACE2D_LAYERED_LAYERS = 65
    MAXIMUM_SURFACECUBEMAP_WIDTH = 66
    MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH = 67
    MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS = 68
    MAXIMUM_TEXTURE1D_LINEAR_WIDTH = 69
    MAXIMUM_TEXTURE2D_LINEAR_WIDTH = 70
    MAXIMUM_TEXTURE2D_LINEAR_HEIGHT = 71
    MAXIMUM_TEXTURE2D_LINEAR_PITCH = 72
    MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH = 73
    MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT = 74
    COMPUTE_CAPABILITY_MAJOR = 75
    COMPUTE_CAPABILITY_MINOR = 76
    MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH = 77
    STREAM_PRIORITIES_SUPPORTED = 78
    GLOBAL_L1_CACHE_SUPPORTED = 79
    LOCAL_L1_CACHE_SUPPORTED = 80
    MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81
    MAX_REGISTERS_PER_MULTIPROCESSOR = 82
    MANAGED_MEMORY = 83
    MULTI_GPU_BOARD = 84
    MULTI_GPU_BOARD_GROUP_ID = 85
    HOST_NATIVE_ATOMIC_SUPPORTED = 86
    SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO = 87
    PAGEABLE_MEMORY_ACCESS = 88
    CONCURRENT_MANAGED_ACCESS = 89
    COMPUTE_PREEMPTION_SUPPORTED = 90
    CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91
    CAN_USE_STREAM_MEM_OPS_V1 = 92
    CAN_USE_64_BIT_STREAM_MEM_OPS_V1 = 93
    CAN_USE_STREAM_WAIT_VALUE_NOR_V1 = 94
    COOPERATIVE_LAUNCH = 95
    COOPERATIVE_MULTI_DEVICE_LAUNCH = 96
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
    CAN_FLUSH_REMOTE_WRITES = 98
    HOST_REGISTER_SUPPORTED = 99
    PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 100
    DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 101
    VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED = 102
    VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102
    HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103
    HANDLE_TYPE_WIN32_HANDLE_SUPPORTED = 104
    HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED = 105
    MAX_BLOCKS_PER_MULTIPROCESSOR = 106
    GENERIC_COMPRESSION_SUPPORTED = 107
    MAX_PERSISTING_L2_CACHE_SIZE = 108
    MAX_ACCESS_POLICY_WINDOW_SIZE = 109
    GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 110
    RESERVED_SHARED_MEMORY_PER_BLOCK = 111
    SPARSE_CUDA_ARRAY_SUPPORTED = 112
    READ_ONLY_HOST_REGISTER_SUPPORTED = 113
    TIMELINE_SEMAPHORE_INTEROP_SUPPORTED = 114
    MEMORY_POOLS_SUPPORTED = 115
    GPU_DIRECT_RDMA_SUPPORTED = 116
    GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 117
    GPU_DIRECT_RDMA_WRITES_ORDERING = 118
    MEMPOOL_SUPPORTED_HANDLE_TYPES = 119
    CLUSTER_LAUNCH = 120
    DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED = 121
    CAN_USE_64_BIT_STREAM_MEM_OPS = 122
    CAN_USE_STREAM_WAIT_VALUE_NOR = 123
    DMA_BUF_SUPPORTED = 124
    IPC_EVENT_SUPPORTED = 125
    MEM_SYNC_DOMAIN_COUNT = 126
    TENSOR_MAP_ACCESS_SUPPORTED = 127
    HANDLE_TYPE_FABRIC_SUPPORTED = 128
    UNIFIED_FUNCTION_POINTERS = 129
    NUMA_CONFIG = 130
    NUMA_ID = 131
    MULTICAST_SUPPORTED = 132
    MPS_ENABLED = 133
    HOST_NUMA_ID = 134
    D3D12_CIG_SUPPORTED = 135
    MEM_DECOMPRESS_ALGORITHM_MASK = 136
    MEM_DECOMPRESS_MAXIMUM_LENGTH = 137
    VULKAN_CIG_SUPPORTED = 138
    GPU_PCI_DEVICE_ID = 139
    GPU_PCI_SUBSYSTEM_ID = 140
    HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 141
    HOST_NUMA_MEMORY_POOLS_SUPPORTED = 142
    HOST_NUMA_MULTINODE_IPC_SUPPORTED = 143
    HOST_MEMORY_POOLS_SUPPORTED = 144
    HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 145
    HOST_ALLOC_DMA_BUF_SUPPORTED = 146
    ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED = 147
    ATOMIC_REDUCTION_SUPPORTED = 148
    LOCALITY_DOMAIN_COUNT = 149
    MAX_OVERSIZED_SHARED_MEMORY_PER_BLOCK = 150
    D3D12_CIG_STREAMS_SUPPORTED = 151
    DMA_BUF_MMAP_SUPPORTED = 152
    LOGICAL_ENDPOINT_UNICAST_SUPPORTED = 153
    LOGICAL_ENDPOINT_MULTICAST_SUPPORTED = 154
    LOGICAL_ENDPOINT_COUNTED_OPS_SUPPORTED = 155
    LOGICAL_ENDPOINT_UNICAST_ACCESS_ON_OWNER_DEVICE_SUPPORTED = 156
    LOCALITY_DOMAIN_MULTIPROCESSOR_COUNT = 157
    LOGICAL_ENDPOINT_SUPPORTED_HANDLE_TYPES = 158
    VULKAN_CIG_STREAMS_SUPPORTED = 159
    TENSOR_MAP_LARGE_TENSOR_MIN_SIZE = 160
    GPU_DIRECT_RDMA_WITH_LOCALIZED_MEMORY_SUPPORTED = 161


def _more() -> dict[str, type[IntEnum]]:
    """The enums no run of an export's loaders asks for (CUresult, the limits, streams, events, memory
    and tensor maps): made the first time one of them is named (module `__getattr__`), not at import."""

    @_fast(IntEnum)
    class CUresult:
        """CUresult, the driver's error codes (`CUDA_ERROR_INVALID_VALUE` -> INVALID_VALUE), CUDA 13.x.

        The `_cu*` wrappers return these.  Most numbers coincide with cudaError_t, the names often
        do not (500 is CUDA_ERROR_NOT_FOUND here, cudaErrorSymbolNotFound there; 201 is
        CUDA_ERROR_INVALID_CONTEXT here, cudaErrorDeviceUninitialized there).
        """

        SUCCESS = 0
        INVALID_VALUE = 1
        OUT_OF_MEMORY = 2
        NOT_INITIALIZED = 3
        DEINITIALIZED = 4
        PROFILER_DISABLED = 5
        PROFILER_NOT_INITIALIZED = 6
        PROFILER_ALREADY_STARTED = 7
        PROFILER_ALREADY_STOPPED = 8
        STUB_LIBRARY = 34
        CALL_REQUIRES_NEWER_DRIVER = 36
        DEVICE_UNAVAILABLE = 46
        MULTICAST_RESOURCE_FULL = 47
        NO_DEVICE = 100
        INVALID_DEVICE = 101
        DEVICE_NOT_LICENSED = 102
        INVALID_IMAGE = 200
        INVALID_CONTEXT = 201
        CONTEXT_ALREADY_CURRENT = 202
        MAP_FAILED = 205
        UNMAP_FAILED = 206
        ARRAY_IS_MAPPED = 207
        ALREADY_MAPPED = 208
        NO_BINARY_FOR_GPU = 209
        ALREADY_ACQUIRED = 210
        NOT_MAPPED = 211
        NOT_MAPPED_AS_ARRAY = 212
        NOT_MAPPED_AS_POINTER = 213
        ECC_UNCORRECTABLE = 214
        UNSUPPORTED_LIMIT = 215
        CONTEXT_ALREADY_IN_USE = 216
        PEER_ACCESS_UNSUPPORTED = 217
        INVALID_PTX = 218
        INVALID_GRAPHICS_CONTEXT = 219
        NVLINK_UNCORRECTABLE = 220
        JIT_COMPILER_NOT_FOUND = 221
        UNSUPPORTED_PTX_VERSION = 222
        JIT_COMPILATION_DISABLED = 223
        UNSUPPORTED_EXEC_AFFINITY = 224
        UNSUPPORTED_DEVSIDE_SYNC = 225
        CONTAINED = 226
        INSUFFICIENT_LOADER_VERSION = 227
        INVALID_SOURCE = 300
        FILE_NOT_FOUND = 301
        SHARED_OBJECT_SYMBOL_NOT_FOUND = 302
        SHARED_OBJECT_INIT_FAILED = 303
        OPERATING_SYSTEM = 304
        INVALID_HANDLE = 400
        ILLEGAL_STATE = 401
        LOSSY_QUERY = 402
        NOT_FOUND = 500
        NOT_READY = 600
        ILLEGAL_ADDRESS = 700
        LAUNCH_OUT_OF_RESOURCES = 701
        LAUNCH_TIMEOUT = 702
        LAUNCH_INCOMPATIBLE_TEXTURING = 703
        PEER_ACCESS_ALREADY_ENABLED = 704
        PEER_ACCESS_NOT_ENABLED = 705
        PRIMARY_CONTEXT_ACTIVE = 708
        CONTEXT_IS_DESTROYED = 709
        ASSERT = 710
        TOO_MANY_PEERS = 711
        HOST_MEMORY_ALREADY_REGISTERED = 712
        HOST_MEMORY_NOT_REGISTERED = 713
        HARDWARE_STACK_ERROR = 714
        ILLEGAL_INSTRUCTION = 715
        MISALIGNED_ADDRESS = 716
        INVALID_ADDRESS_SPACE = 717
        INVALID_PC = 718
        LAUNCH_FAILED = 719
        COOPERATIVE_LAUNCH_TOO_LARGE = 720
        TENSOR_MEMORY_LEAK = 721
        NOT_PERMITTED = 800
        NOT_SUPPORTED = 801
        SYSTEM_NOT_READY = 802
        SYSTEM_DRIVER_MISMATCH = 803
        COMPAT_NOT_SUPPORTED_ON_DEVICE = 804
        MPS_CONNECTION_FAILED = 805
        MPS_RPC_FAILURE = 806
        MPS_SERVER_NOT_READY = 807
        MPS_MAX_CLIENTS_REACHED = 808
        MPS_MAX_CONNECTIONS_REACHED = 809
        MPS_CLIENT_TERMINATED = 810
        CDP_NOT_SUPPORTED = 811
        CDP_VERSION_MISMATCH = 812
        STREAM_CAPTURE_UNSUPPORTED = 900
        STREAM_CAPTURE_INVALIDATED = 901
        STREAM_CAPTURE_MERGE = 902
        STREAM_CAPTURE_UNMATCHED = 903
        STREAM_CAPTURE_UNJOINED = 904
        STREAM_CAPTURE_ISOLATION = 905
        STREAM_CAPTURE_IMPLICIT = 906
        CAPTURED_EVENT = 907
        STREAM_CAPTURE_WRONG_THREAD = 908
        TIMEOUT = 909
        GRAPH_EXEC_UPDATE_FAILURE = 910
        EXTERNAL_DEVICE = 911
        INVALID_CLUSTER_SIZE = 912
        FUNCTION_NOT_LOADED = 913
        INVALID_RESOURCE_TYPE = 914
        INVALID_RESOURCE_CONFIGURATION = 915
        KEY_ROTATION = 916
        STREAM_DETACHED = 917
        GRAPH_RECAPTURE_FAILURE = 918
        FABRIC_NOT_READY = 919
        UNKNOWN = 999


    @_fast(IntEnum)
    class Limit:
        """cudaLimit / CUlimit (7-9 exist only in the driver enum)."""

        STACK_SIZE = 0
        PRINTF_FIFO_SIZE = 1
        MALLOC_HEAP_SIZE = 2
        DEV_RUNTIME_SYNC_DEPTH = 3
        DEV_RUNTIME_PENDING_LAUNCH_COUNT = 4
        MAX_L2_FETCH_GRANULARITY = 5
        PERSISTING_L2_CACHE_SIZE = 6
        SHMEM_SIZE = 7
        CIG_ENABLED = 8
        CIG_SHMEM_FALLBACK_ENABLED = 9
        PER_BLOCK_MEMORY_SIZE = 10


    @_fast(IntEnum)
    class FuncCache:
        """cudaFuncCache / CUfunc_cache."""

        PREFER_NONE = 0
        PREFER_SHARED = 1
        PREFER_L1 = 2
        PREFER_EQUAL = 3


    @_fast(IntEnum)
    class SharedMemConfig:
        """cudaSharedMemConfig (deprecated bank-size configuration)."""

        BANK_SIZE_DEFAULT = 0
        BANK_SIZE_FOUR_BYTE = 1
        BANK_SIZE_EIGHT_BYTE = 2


    @_fast(IntEnum)
    class MemcpyKind:
        """cudaMemcpyKind, the `kind` argument of cudaMemcpy / cudaMemcpyAsync."""

        HOST_TO_HOST = 0
        HOST_TO_DEVICE = 1
        DEVICE_TO_HOST = 2
        DEVICE_TO_DEVICE = 3
        DEFAULT = 4


    @_fast(IntEnum)
    class StreamCaptureMode:
        """cudaStreamCaptureMode, the `mode` argument of cudaStreamBeginCapture."""

        GLOBAL = 0
        THREAD_LOCAL = 1
        RELAXED = 2


    @_fast(IntEnum)
    class GraphInstantiateFlags:
        """cudaGraphInstantiateFlags, bits of cudaGraphInstantiate's `flags` (labels show single bits only)."""

        AUTO_FREE_ON_LAUNCH = 1
        UPLOAD = 2
        DEVICE_LAUNCH = 4
        USE_NODE_PRIORITY = 8


    @_fast(IntEnum)
    class TensorMapDataType:
        """CUtensorMapDataType, cuTensorMapEncodeTiled's `tensorDataType` (the 16U4/16U6 packed types keep
        TYPE_ in their names, a Python name cannot start with a digit).
        """

        UINT8 = 0
        UINT16 = 1
        UINT32 = 2
        INT32 = 3
        UINT64 = 4
        INT64 = 5
        FLOAT16 = 6
        FLOAT32 = 7
        FLOAT64 = 8
        BFLOAT16 = 9
        FLOAT32_FTZ = 10
        TFLOAT32 = 11
        TFLOAT32_FTZ = 12
        TYPE_16U4_ALIGN8B = 13
        TYPE_16U4_ALIGN16B = 14
        TYPE_16U6_ALIGN16B = 15


    @_fast(IntEnum)
    class TensorMapInterleave:
        """CUtensorMapInterleave (a name cannot start with a digit: 16B is INTERLEAVE_16B)."""

        NONE = 0
        INTERLEAVE_16B = 1
        INTERLEAVE_32B = 2


    @_fast(IntEnum)
    class TensorMapSwizzle:
        """CUtensorMapSwizzle (a name cannot start with a digit: 32B is SWIZZLE_32B)."""

        NONE = 0
        SWIZZLE_32B = 1
        SWIZZLE_64B = 2
        SWIZZLE_128B = 3
        SWIZZLE_128B_ATOM_32B = 4
        SWIZZLE_128B_ATOM_32B_FLIP_8B = 5
        SWIZZLE_128B_ATOM_64B = 6


    @_fast(IntEnum)
    class TensorMapL2Promotion:
        """CUtensorMapL2promotion."""

        NONE = 0
        L2_64B = 1
        L2_128B = 2
        L2_256B = 3


    @_fast(IntEnum)
    class TensorMapFloatOOBFill:
        """CUtensorMapFloatOOBfill."""

        NONE = 0
        NAN_REQUEST_ZERO_FMA = 1


    @_fast(IntEnum)
    class StreamFlags:
        """cudaStreamDefault / cudaStreamNonBlocking (cudaStreamCreateWithFlags; cudaStreamCreate uses 0)."""

        DEFAULT = 0
        NON_BLOCKING = 1


    @_fast(IntEnum)
    class EventFlags:
        """cudaEventDefault, cudaEventBlockingSync, ... (bits of cudaEventCreateWithFlags' `flags`)."""

        DEFAULT = 0
        BLOCKING_SYNC = 1
        DISABLE_TIMING = 2
        INTERPROCESS = 4


    @_fast(IntEnum)
    class MemAttachFlags:
        """cudaMemAttachGlobal / Host / Single, the `flags` of cudaMallocManaged."""

        GLOBAL = 1
        HOST = 2
        SINGLE = 4

    made = (CUresult, Limit, FuncCache, SharedMemConfig, MemcpyKind, StreamCaptureMode, GraphInstantiateFlags,
            TensorMapDataType, TensorMapInterleave, TensorMapSwizzle, TensorMapL2Promotion, TensorMapFloatOOBFill,
            StreamFlags, EventFlags, MemAttachFlags)
    for enum in made:       # each docstring as the class statement at module level writes it (indented once)
        enum.__doc__ = enum.__doc__.replace("\n    ", "\n")
    return {enum.__name__: enum for enum in made}


_MORE = ("CUresult", "Limit", "FuncCache", "SharedMemConfig", "MemcpyKind", "StreamCaptureMode", "GraphInstantiateFlags",
         "TensorMapDataType", "TensorMapInterleave", "TensorMapSwizzle", "TensorMapL2Promotion", "TensorMapFloatOOBFill",
         "StreamFlags", "EventFlags", "MemAttachFlags")


# Runtime spellings that differ from our (driver-style) names by more than underscores, by the
# enum's class name: compact upper-case runtime name without its prefix -> number.
_RUNTIME_NAMES: dict[str, dict[str, int]] = {
    "DeviceAttribute": {
        "MAXTEXTURE1DWIDTH": 21, "MAXTEXTURE2DWIDTH": 22, "MAXTEXTURE2DHEIGHT": 23, "MAXTEXTURE3DWIDTH": 24,
        "MAXTEXTURE3DHEIGHT": 25, "MAXTEXTURE3DDEPTH": 26, "MAXTEXTURE2DLAYEREDWIDTH": 27,
        "MAXTEXTURE2DLAYEREDHEIGHT": 28, "MAXTEXTURE2DLAYEREDLAYERS": 29, "MAXTEXTURE1DLAYEREDWIDTH": 42,
        "MAXTEXTURE1DLAYEREDLAYERS": 43, "MAXTEXTURE2DGATHERWIDTH": 45, "MAXTEXTURE2DGATHERHEIGHT": 46,
        "MAXTEXTURE3DWIDTHALT": 47, "MAXTEXTURE3DHEIGHTALT": 48, "MAXTEXTURE3DDEPTHALT": 49,
        "MAXTEXTURECUBEMAPWIDTH": 52, "MAXTEXTURECUBEMAPLAYEREDWIDTH": 53,
        "MAXTEXTURECUBEMAPLAYEREDLAYERS": 54, "MAXSURFACE1DWIDTH": 55, "MAXSURFACE2DWIDTH": 56,
        "MAXSURFACE2DHEIGHT": 57, "MAXSURFACE3DWIDTH": 58, "MAXSURFACE3DHEIGHT": 59, "MAXSURFACE3DDEPTH": 60,
        "MAXSURFACE1DLAYEREDWIDTH": 61, "MAXSURFACE1DLAYEREDLAYERS": 62, "MAXSURFACE2DLAYEREDWIDTH": 63,
        "MAXSURFACE2DLAYEREDHEIGHT": 64, "MAXSURFACE2DLAYEREDLAYERS": 65, "MAXSURFACECUBEMAPWIDTH": 66,
        "MAXSURFACECUBEMAPLAYEREDWIDTH": 67, "MAXSURFACECUBEMAPLAYEREDLAYERS": 68,
        "MAXTEXTURE1DLINEARWIDTH": 69, "MAXTEXTURE2DLINEARWIDTH": 70, "MAXTEXTURE2DLINEARHEIGHT": 71,
        "MAXTEXTURE2DLINEARPITCH": 72, "MAXTEXTURE2DMIPMAPPEDWIDTH": 73, "MAXTEXTURE2DMIPMAPPEDHEIGHT": 74,
        "MAXTEXTURE1DMIPMAPPEDWIDTH": 77, "ISMULTIGPUBOARD": 84, "RESERVED92": 92, "RESERVED93": 93,
        "RESERVED94": 94, "RESERVED96": 96, "HOSTREGISTERREADONLYSUPPORTED": 113,
        "MAXTIMELINESEMAPHOREINTEROPSUPPORTED": 114, "MEMORYPOOLSUPPORTEDHANDLETYPES": 119, "RESERVED122": 122,
        "RESERVED123": 123, "RESERVED124": 124, "IPCEVENTSUPPORT": 125, "RESERVED127": 127, "RESERVED128": 128,
        "RESERVED129": 129, "RESERVED132": 132, "RESERVED141": 141, "RESERVED145": 145,
        "OVERSIZEDSHAREDMEMORYPERBLOCK": 150, "CIGSTREAMSSUPPORTED": 151,
    },
    "CudaFuncAttribute": {"MAXDYNAMICSHAREDMEMORYSIZE": 8, "CLUSTERDIMMUSTBESET": 10},
    "FuncAttribute": {"MAXDYNAMICSHAREDMEMORYSIZE": 8, "CLUSTERDIMMUSTBESET": 10},
    "SharedMemConfig": {"DEFAULTBANKSIZE": 0, "FOURBYTEBANKSIZE": 1, "EIGHTBYTEBANKSIZE": 2},
}

# Prefixes `enum_value` may strip, compared against the upper-cased text.
_PREFIXES = (
    "CU_DEVICE_ATTRIBUTE_", "CU_FUNC_ATTRIBUTE_", "CU_LAUNCH_ATTRIBUTE_", "CU_LIMIT_", "CU_FUNC_CACHE_",
    "CU_SHARED_MEM_CONFIG_", "CU_TENSOR_MAP_DATA_TYPE_", "CU_TENSOR_MAP_DATA_", "CU_TENSOR_MAP_", "CU_TENSOR_MAP_INTERLEAVE_", "CU_TENSOR_MAP_SWIZZLE_",
    "CU_TENSOR_MAP_L2_PROMOTION_", "CU_TENSOR_MAP_FLOAT_OOB_FILL_", "CUDA_ERROR_", "CUDA_",
    "CUDADEVATTR", "CUDAFUNCATTRIBUTE", "CUDALAUNCHATTRIBUTE", "CUDAERROR", "CUDALIMIT", "CUDAFUNCCACHE",
    "CUDASHAREDMEM", "CUDAMEMCPY", "CUDASTREAMCAPTUREMODE", "CUDAGRAPHINSTANTIATEFLAG", "CUDASTREAM",
    "CUDAEVENT", "CUDAMEMATTACH", "CUDA",
)


def enum_label(enum: type[IntEnum] | None, value: int) -> str:
    """`9 PREFERRED_SHARED_MEMORY_CARVEOUT`, or the bare number when the enum lacks it (looked up in the enum's own
    value table, as `enum(value)` does, without raising for a number it lacks: traces and checks label dozens)."""
    member = enum._value2member_map_.get(value) if enum is not None else None
    return f"{value} {member.name}" if member is not None else str(value)


def enum_value(enum: type[IntEnum], value: int | str) -> int:
    """Accept a number or a name (ours, or the driver's / runtime's with or without its C prefix).

    `enum_value(DeviceAttribute, "cudaDevAttrMaxSharedMemoryPerBlockOptin") == 97`,
    `enum_value(CudaError, "cudaErrorInvalidValue") == 1`, `enum_value(FuncAttribute, 8) == 8`.
    """
    if isinstance(value, int):
        return value
    text = value.strip().upper()
    if text.lstrip("-").isdigit():
        return int(text)
    members = enum.__members__
    compact = {name.replace("_", ""): member for name, member in members.items()}
    runtime = _RUNTIME_NAMES.get(enum.__name__, {})
    candidates = [text] + [text[len(prefix):] for prefix in _PREFIXES if text.startswith(prefix) and len(text) > len(prefix)]
    for candidate in candidates:
        if candidate in members:
            return int(members[candidate])
    for candidate in candidates:
        key = candidate.replace("_", "")
        if key in compact:
            return int(compact[key])
        if key in runtime:
            return runtime[key]
    raise ValueError(f"{value!r} is not a {enum.__name__} name or number")


def __getattr__(name: str):
    """`enums.CUresult` and the other enums of `_more`, made on first use (about 1 ms of a cold run spared)."""
    if name in _MORE:
        made = _more()
        globals().update(made)
        return made[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
