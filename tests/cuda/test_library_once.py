"""cuda_dialect_init_library_once / cuda_dialect_unload_library_once in emu against the DSL's static runtime run natively.

tests/cuda/native_library_once/scenarios.c calls the two helpers as generated code does, with callbacks that print
what they get; natively it is linked with libcuda_dialect_runtime_static.a and a recording CUDA runtime
(standin.c), in emu its callbacks run in the emulator and the helpers are emu's behaviours
(emu/cuda/behaviours/helpers.py).  Both print the same lines: the callbacks' printf text, and each plain runtime
call the helper makes (in emu, the trace's records whose caller is the helper).  Compared with the committed native
output of each architecture (README.md), and with a live x86-64 native run where the DSL's archive and cc are
installed (CI).
"""
from __future__ import annotations

import re
import struct
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from emu.cuda.config import RuntimeConfig
from emu.run.trace import CallRecord
from tests import oracles
from tests.emulator.guest_run import COMPILERS, GuestRun, compile_c

HERE = Path(__file__).parent / "native_library_once"
HEADER = re.compile(r"scenario (\d+) (\w+): devices (\d+)")
HELPERS = ("cuda_dialect_init_library_once", "cuda_dialect_unload_library_once")


def scenarios(output: str) -> dict[int, tuple[str, int, list[str]]]:
    """The native output by scenario: (name, devices, lines)."""
    found: dict[int, tuple[str, int, list[str]]] = {}
    lines: list[str] = []
    for line in output.splitlines():
        header = HEADER.fullmatch(line)
        if header:
            lines = []
            found[int(header[1])] = (header[2], int(header[3]), lines)
        else:
            lines.append(line)
    return found


def as_native_lines(calls: list[CallRecord]) -> list[str]:
    """emu's trace in the lines the native program prints (standin.c's for the runtime calls)."""
    lines = []
    for call in calls:
        if call.symbol == "printf":
            lines.append(call.args["text"].rstrip("\n"))
        elif call.symbol == "cudaGetDeviceCount":
            lines.append(f"cudaGetDeviceCount -> {call.ret}, count {call.outputs.get('count', 0)}")
        elif call.symbol in ("cudaGetErrorName", "cudaGetErrorString"):
            lines.append(f"{call.symbol}({call.args['error']})")
        elif call.symbol == "cudaLibraryUnload":
            lines.append(f"cudaLibraryUnload({call.args['library']:#x}) -> {call.ret}")
        else:
            assert call.symbol in HELPERS, call.symbol
    return lines


def emu_lines(tmp_path: Path, arch: str, which: int, devices: int) -> list[str]:
    run = GuestRun(compile_c(HERE / "scenarios.c", tmp_path, arch, "scenarios"), RuntimeConfig(device_count=devices))
    outcome = run.call("scenario", which)
    assert outcome.fault is None and outcome.returned == 0
    return as_native_lines(run.calls)


COMMITTED = {arch: scenarios((HERE / f"native_output_{arch}.txt").read_text()) for arch in COMPILERS}
NAMES = {which: name for which, (name, _devices, _lines) in COMMITTED["x86_64"].items()}


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("arch", sorted(COMPILERS))
@pytest.mark.parametrize("which", sorted(NAMES), ids=[NAMES[w] for w in sorted(NAMES)])
def test_emu_prints_what_the_static_runtime_printed(tmp_path, arch, which):
    _name, devices, lines = COMMITTED[arch][which]
    assert emu_lines(tmp_path, arch, which, devices) == lines


def _dsl_libdir() -> Path | None:
    try:
        found = subprocess.run([sys.executable, "-m", "cutlass.cute.export.aot_config", "--libdir"],
                               capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    libdir = Path(found.stdout.strip()) if found.returncode == 0 else None
    return libdir if libdir is not None and (libdir / "libcuda_dialect_runtime_static.a").is_file() else None


@pytest.mark.oracle(oracles.NATIVE)
def test_the_committed_output_is_what_the_static_runtime_prints_now(tmp_path):
    libdir = _dsl_libdir()
    if libdir is None or shutil.which("cc") is None:
        pytest.skip("needs cc and nvidia-cutlass-dsl's libcuda_dialect_runtime_static.a (the dsl extra)")
    live = subprocess.run(["sh", str(HERE / "build.sh"), str(libdir), str(tmp_path)], capture_output=True, text=True, check=True)
    assert live.stdout == (HERE / "native_output_x86_64.txt").read_text()


# -- a real TVM-FFI export's entry -----------------------------------------------------------------------------
OBJECTS = Path(__file__).parent / "tvm_ffi_objects"      # built by its build.py with nvidia-cutlass-dsl 4.8.1


def _vec_scale(run: GuestRun, n: int = 1024, stream: int = 0x5000) -> int:
    """Call __tvm_ffi_vec_scale(self, args, 3, result) with TVMFFIAny arguments packed by hand: a DLTensor of n
    float32 on CUDA device 0 (type index 7), the scale as a float (3), the stream as an opaque pointer (4)."""
    host = run.machine.host
    shape, strides = host.alloc(struct.pack("<q", n)), host.alloc(struct.pack("<q", 1))
    # DLTensor: data, device (kDLCUDA = 2, 0), ndim, dtype (kDLFloat = 2, 32 bits, 1 lane), shape, strides, byte_offset
    tensor = host.alloc(struct.pack("<QiiiBBHQQQ", 0x7_0000_0000, 2, 0, 1, 2, 32, 1, shape, strides, 0))
    args = host.alloc(struct.pack("<iiQ", 7, 0, tensor) + struct.pack("<iid", 3, 0, 2.0) + struct.pack("<iiQ", 4, 0, stream))
    outcome = run.call("__tvm_ffi_vec_scale", 0, args, 3, host.alloc(bytes(16)))
    assert outcome.fault is None
    return outcome.returned


def _calls(run: GuestRun, first: int = 0) -> list[tuple[str, str]]:
    return [(call.symbol, call.caller.split("+")[0].replace("__cute_internal_vec_scale_", "")) for call in run.calls[first:]]


def test_a_tvm_ffi_entry_loads_its_library_once_through_its_own_callbacks():
    run = GuestRun(str(OBJECTS / "vec_scale_sm_90a.o"), RuntimeConfig(missing_symbols="return_zero", device_count=2))
    assert _vec_scale(run) == 0
    load_to_device = [("_cudaDeviceGetAttribute", "cuda_load_to_device"), ("_cudaLibraryGetKernel", "cuda_load_to_device"),
                      ("_cuKernelGetAttribute", "cuda_load_to_device"),
                      ("_cudaKernelSetAttributeForDevice", "cuda_load_to_device"),
                      ("_cudaKernelSetAttributeForDevice", "cuda_load_to_device")]
    assert _calls(run) == [("TVMFFIEnvGetStream", "__tvm_ffi_vec_scale"),           # no TVM-FFI stubs here: 0
                           ("_cudaLibraryLoadData", "cuda_init"),
                           ("cudaGetDeviceCount", "cuda_dialect_init_library_once"),
                           *load_to_device, *load_to_device,                           # devices 0 and 1
                           ("cuda_dialect_init_library_once", "__tvm_ffi_vec_scale"),
                           ("_cudaGetDevice", "__tvm_ffi_vec_scale"), ("_cudaLaunchKernelEx", "__tvm_ffi_vec_scale")]
    assert [call.args["device"] for call in run.calls if call.symbol == "_cudaKernelSetAttributeForDevice"] == [0, 0, 1, 1]
    launch = run.calls[-1].args["config"]
    assert launch["gridDim"] == [8, 1, 1] and launch["stream"] == 0x5000
    first = len(run.calls)
    assert _vec_scale(run, n=4096) == 0                 # the slot is filled: the helper returns at once
    assert _calls(run, first) == [("TVMFFIEnvGetStream", "__tvm_ffi_vec_scale"),
                                  ("cuda_dialect_init_library_once", "__tvm_ffi_vec_scale"),
                                  ("_cudaGetDevice", "__tvm_ffi_vec_scale"), ("_cudaLaunchKernelEx", "__tvm_ffi_vec_scale")]
    assert run.calls[-1].args["config"]["gridDim"] == [32, 1, 1]


def test_a_tvm_ffi_entry_whose_cubin_the_device_cannot_run_raises_and_tries_again():
    """An sm_100a export on the H200 profile: the kernel lookup in load_to_device answers 209, every device failed, so
    the helper raises RuntimeError with the runtime's texts and the entry returns -1; a second call loads again."""
    run = GuestRun(str(OBJECTS / "vec_scale_sm_100a.o"), RuntimeConfig(missing_symbols="return_zero", profile="h200"))
    for _ in range(2):
        first = len(run.calls)
        assert _vec_scale(run) == -1
        helper = run.calls[-1]
        assert (helper.symbol, helper.ret) == ("cuda_dialect_init_library_once", -1)
        assert helper.args["raised"] == ("RuntimeError: Got Cuda Runtime Error: cudaErrorNoKernelImageForDevice "
                                         "no kernel image is available for execution on the device")
        calls = _calls(run, first)
        assert calls[1] == ("_cudaLibraryLoadData", "cuda_init")
        assert calls[-4:] == [("cudaGetErrorString", "cuda_dialect_init_library_once"),
                              ("cudaGetErrorName", "cuda_dialect_init_library_once"),
                              ("TVMFFIErrorSetRaisedFromCStr", "cuda_dialect_init_library_once"),
                              ("cuda_dialect_init_library_once", "__tvm_ffi_vec_scale")]


# -- errors injected by a scenario (runtime.errors) ---------------------------------------------------------------
def _scenario_run(tmp_path: Path, errors: list[dict], which: int = 0) -> tuple[GuestRun, list[str]]:
    run = GuestRun(compile_c(HERE / "scenarios.c", tmp_path, "x86_64", "scenarios"), RuntimeConfig(device_count=2, errors=errors))
    assert run.call("scenario", which).fault is None
    return run, as_native_lines(run.calls)


def test_an_error_injected_into_the_inner_device_count_takes_the_helpers_error_path(tmp_path):
    run, lines = _scenario_run(tmp_path, [{"symbol": "cudaGetDeviceCount", "error": "INITIALIZATION_ERROR", "every": True}])
    assert lines[:8] == ["init(local, *library NULL) -> 0", "cudaGetDeviceCount -> 3, count 0", "cudaGetDeviceCount -> 3, count 0",
                         "cudaGetErrorString(3)", "cudaGetDeviceCount -> 3, count 0", "cudaGetErrorName(3)",
                         "set_error(RuntimeError, Got Cuda Runtime Error: cudaErrorInitializationError initialization error)",
                         "init_library_once -> -1, slot NULL"]
    assert [call.injected for call in run.calls if call.symbol == "cudaGetDeviceCount"] == [True] * 6    # 2 tries of 3


def test_an_error_injected_into_the_helper_answers_at_once_calling_nothing(tmp_path):
    run, lines = _scenario_run(tmp_path, [{"symbol": "cuda_dialect_init_library_once", "error": 999}])
    assert lines[0] == "init_library_once -> 999, slot NULL"                 # then the second call loads
    assert lines[1:3] == ["init(local, *library NULL) -> 0", "cudaGetDeviceCount -> 0, count 2"]
    assert run.calls[0].symbol == "cuda_dialect_init_library_once" and run.calls[0].injected
