"""What `trace` and `check` print for TVM-FFI objects, read as a first-time user reads them: the calls the DSL
runtime's helpers make inside themselves by their models (pointers in hex, the error text returned), a calling-back
helper before the calls made inside it, the destructor as the void function it is, and per object what `check`
could check (the call, its loads, each profile's answer to its launch) and what it could not (no kernel_info)."""
from __future__ import annotations

import re

from conftest import ROOT, run_cli

TVM = ROOT / "tests" / "fixtures" / "tvm_ffi"
VEC_SCALE = TVM / "own" / "vec_scale.o"
SM100A = TVM / "realworld" / "quack_softmax.o"          # sm_100a: on the h200 profile its kernel lookup answers 209


def test_a_helpers_inner_calls_are_shown_inside_it_and_the_json_keeps_the_native_order():
    text = run_cli("trace", str(VEC_SCALE)).out.splitlines()
    outer = next(i for i, line in enumerate(text) if "cuda_dialect_init_library_once(" in line)
    assert text[outer].startswith("    cuda_dialect_init_library_once(library=0x") and text[outer].endswith("-> 0  [__tvm_ffi_vec_scale+0x157]")
    inner = text[outer + 1:outer + 8]
    assert all(line.startswith("      _cuda") or line.startswith("      _cu") or line.startswith("      cudaGetDeviceCount")
               for line in inner), inner
    assert "      cudaGetDeviceCount() -> 0 SUCCESS  => *count=1  [cuda_dialect_init_library_once]" in inner
    assert text[outer + 8].startswith("    _cudaGetDevice()")           # back at the entry's own depth
    run = run_cli("trace", "--json", str(VEC_SCALE)).json()[0]
    symbols = [c["symbol"] for c in run["calls"]]
    helper = symbols.index("cuda_dialect_init_library_once")
    assert run["calls"][helper]["inner_calls"] == 7 and symbols[helper - 7] == "_cudaLibraryLoadData"   # recorded at return
    assert all(c["inner_calls"] == 0 for c in run["calls"] if not c["symbol"].startswith("cuda_dialect_"))


def test_inner_runtime_calls_show_pointers_in_hex_and_the_error_text_returned():
    out = run_cli("trace", "--profile", "h200", str(SM100A)).out
    assert not re.search(r"\(count=\d|library=\d{3,}|-> \d{6,}", out), out
    assert "cudaGetErrorString(error=209 NO_KERNEL_IMAGE_FOR_DEVICE) -> 'no kernel image is available for execution " \
           "on the device'  [cuda_dialect_init_library_once]" in out
    assert "cudaGetErrorName(error=209 NO_KERNEL_IMAGE_FOR_DEVICE) -> 'cudaErrorNoKernelImageForDevice'" in out
    assert "  tvm_ffi __tvm_ffi_quack_softmax -> -1\n" in out and "cuda_dialect_init_library_once(library=0x" in out
    assert re.search(r"set_error=0x[0-9a-f]+, raised='RuntimeError: Got Cuda Runtime Error: [^']*'\) -> -1  \[", out)


def test_the_destructor_is_shown_as_a_void_function():
    out = run_cli("trace", str(VEC_SCALE)).out
    assert ("  process_exit __cute_internal_vec_scale___dtor_cuda_dialect_unload_library_once -> returned (void)\n"
            "    cuda_dialect_unload_library_once(library=0x3000008)  [entry (tail call)]\n"
            "      cudaLibraryUnload(library=0x10010) -> 0 SUCCESS  [cuda_dialect_unload_library_once]") in out
    assert "process_exit -> 0 SUCCESS" not in out


def test_check_of_a_quack_cache_folder_says_per_object_what_it_checked_and_what_not():
    folder = TVM / "quack_cache"
    result = run_cli("check", str(folder))
    assert result.code == 0, result.err
    rows = [line for line in result.out.splitlines() if "/quack_cache/" in line]
    assert len(rows) == 3
    for row in rows:
        assert row.endswith("tvm_ffi returned 0; launch: h200 ok, a100 209, b200 209; attributes not checked: a TVM-FFI "
                            "export has no kernel_info"), row
    assert "check runs a CuTe-ABI export's loaders" not in result.out      # the launch is in the rows
    checked = run_cli("check", "--json", str(folder)).json()
    for obj in checked["objects"]:
        (call,) = obj["loaders"]
        assert (call["entry"], call["returned"], call["raised"]) == ("tvm_ffi", 0, None) and call["sets"]
        (launch,) = obj["tvm_ffi_launches"]
        assert [(v["profile"], v["accepted"], v["error"]) for v in launch["profiles"]] == \
            [("h200", True, 0), ("a100", False, 209), ("b200", False, 209)]
        assert obj["metadata"] == "none by design (TVM-FFI)" and "kernel_info" in obj["unchecked"]


def test_check_of_one_object_lists_the_call_its_loads_its_launch_and_what_is_not_checked():
    out = run_cli("check", "--profile", "h200", str(SM100A)).out.splitlines()
    assert out[1] == ("  checked: the tvm_ffi call with default arguments on h200: returned -1, raised RuntimeError: Got "
                      "Cuda Runtime Error: cudaErrorNoKernelImageForDevice no kernel image is available for execution on "
                      "the device; no kernel attribute set")
    assert out[2] == "  not checked: its launch on each device profile: the call made no launch (it failed before)"
    assert out[3].startswith("  not checked: a TVM-FFI export carries no __cute_internal_quack_softmax_kernel_info")
    good = run_cli("check", str(VEC_SCALE)).out
    assert ("  checked: its launch (call 10, _cudaLaunchKernelEx) on each device profile: h200 accepted; a100 "
            "cudaErrorNoKernelImageForDevice (209) (published figures); b200 cudaErrorNoKernelImageForDevice (209) "
            "(published figures)") in good
    assert "2 of 2 kernel attribute set(s) applied" in good


def test_a_load_failure_says_which_profile_would_run_the_binary(tmp_path):
    out = run_cli("trace", str(SM100A)).out
    assert ("    on profile h200: the GPU binary holds sm_100a (cubin), which the NVIDIA H200 of profile h200 (sm_90) cannot "
            "run: the driver answers cudaErrorNoKernelImageForDevice (209); profile b200 would run it") in out
    (tmp_path / "args.yaml").write_text("- {int: 1}\n- {int: 1}\n- {stream: 0x5000}\n")
    wrong_type = run_cli("trace", str(SM100A), "--args", str(tmp_path / "args.yaml")).out
    assert "raised TypeError: Mismatched type on argument #0" in wrong_type and "on profile" not in wrong_type


def test_a_cache_folder_given_to_trace_or_inspect_points_at_check():
    folder = str(TVM / "quack_cache")
    for command in ("trace", "inspect"):
        result = run_cli(command, folder)
        assert result.code == 2 and result.out == ""
        assert result.err == (f"emu: error: {folder}: is a folder: `{command}` reads object files and shared libraries "
                              f"(`python -m emu check {folder}` checks every object under a folder, a kernel cache's too)\n")


def test_inspect_says_where_the_launch_stream_comes_from_as_the_objects_own_code_chooses_it():
    """The entry's import of TVMFFIEnvGetStream does not say the launch uses it: vec_scale asks it and launches on its
    Stream parameter; add_shared (make_fake_stream(use_tvm_ffi_env_stream=True)) and strided_copy (no stream) both
    ask it and have no Stream parameter, one launching on the framework's stream, the other on the default one."""
    import emu
    launched = {}
    for name in ("vec_scale", "add_shared", "strided_copy"):
        run = emu.trace(str(TVM / "own" / f"{name}.o"), entries=[{"tvm_ffi": {"env_stream": {0: 0x7777}}}])
        launched[name] = [c.args["config"]["stream"] for c in run.calls if c.symbol == "_cudaLaunchKernelEx"]
        assert "TVMFFIEnvGetStream" in [c.symbol for c in run.calls]
    assert launched == {"vec_scale": [0x5000], "add_shared": [0x7777], "strided_copy": [0]}
    stream = lambda name: next(line for line in run_cli("inspect", str(TVM / "own" / f"{name}.o")).out.splitlines()  # noqa: E731
                               if line.startswith("  stream: "))
    assert stream("vec_scale") == ("  stream: the Stream parameter (the entry also asks TVMFFIEnvGetStream, whose answer "
                                   "does not choose the launch's stream)")
    assert stream("add_shared") == stream("strided_copy")
    assert "make_fake_stream(use_tvm_ffi_env_stream=True), else the default stream" in stream("add_shared")


def test_arguments_too_large_for_the_argument_area_are_bad_input_not_an_internal_error(tmp_path):
    """A shape of 70,000 extents fits the 1 MiB limit on an arguments file but not the guest memory emu lays the
    arguments out in: exit 2 with what ran out, never emu's 'internal error' (a MemoryError before)."""
    import json

    args = [{"tensor": {"dtype": "float32", "shape": [1] * 70_000}}, {"float": 1.0}, {"stream": 0}]
    (tmp_path / "args.json").write_text(json.dumps(args, separators=(",", ":")))
    result = run_cli("trace", str(VEC_SCALE), "--args", str(tmp_path / "args.json"))
    assert result.code == 2 and "internal error" not in result.err
    assert "entry tvm_ffi was not run: the entry's arguments need more than the 1024 KiB of guest memory" in result.err
