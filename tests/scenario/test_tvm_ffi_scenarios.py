"""Scenarios, `trace --args FILE` and `check DIR` on TVM-FFI objects: the argument form of emu.dsl.tvm_ffi.arguments
everywhere, `returns: {tvm_ffi: N}` and `raises:` expectations, several calls in one process."""
from __future__ import annotations

import json
import shutil

import emu
from conftest import ROOT, fixture, run_cli

DATA = ROOT / "tests" / "data" / "tvm_ffi"
WRONG_TYPE = ("Mismatched type on argument #0 when calling: `vec_scale(x: Tensor([n0], float32), s: float32, "
              "stream: Stream)`, expected Tensor")


def test_the_committed_scenario_passes_with_the_objects_own_error():
    result = run_cli("run", str(DATA / "vec_scale_errors.yaml"))
    assert result.code == 0, result.out
    assert f"raised TypeError: {WRONG_TYPE}" in result.out and "PASS raises" in result.out


def test_raises_fails_with_what_was_raised_and_a_substring_form_holds(tmp_path):
    base = (f"objects: [{DATA / 'vec_scale.o'}]\nentries:\n  - tvm_ffi: {{export: vec_scale, args: [{{int: 3}}, "
            "{float: 2.0}, {stream: 0x5000}]}\n")
    (tmp_path / "contains.yaml").write_text(base + "expect:\n  raises: {kind: TypeError, message_contains: expected Tensor}\n")
    (tmp_path / "wrong.yaml").write_text(base + "expect:\n  raises: {kind: ValueError, message: nope}\n")
    (tmp_path / "nothing.yaml").write_text(base + "expect:\n  raises: nothing\n  returns: {tvm_ffi: 0}\n")
    assert run_cli("run", str(tmp_path / "contains.yaml")).code == 0
    wrong = run_cli("run", str(tmp_path / "wrong.yaml"))
    assert wrong.code == 1 and f"- tvm_ffi -> ValueError: nope, got TypeError: {WRONG_TYPE}" in wrong.out
    nothing = run_cli("run", str(tmp_path / "nothing.yaml"))
    assert nothing.code == 1 and "-> 0, got -1" in nothing.out and "got TypeError" in nothing.out


def test_a_tvm_ffi_entry_on_a_cute_abi_export_is_refused_with_its_line(tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"objects: [{fixture('x86_64', 'carveout_25')}]\nentries: [tvm_ffi]\n")
    result = run_cli("run", str(scenario))
    assert result.code == 2 and "has no __tvm_ffi_<name> entry" in result.err and "line 2" in result.err


def test_trace_args_file_yaml_or_json_and_its_json_record(tmp_path):
    listed = [{"tensor": {"dtype": "float32", "shape": [256], "strides": [1], "data": 0x7F00_0000_0000}},
              {"float": 0.5}, {"stream": 0x5000}]
    (tmp_path / "args.json").write_text(json.dumps({"args": listed}))
    (tmp_path / "args.yaml").write_text("- {tensor: {dtype: float32, shape: [256], strides: [1], data: 0x7f0000000000}}\n"
                                        "- {float: 0.5}\n- {stream: 0x5000}\n")
    runs = [run_cli("trace", "--json", str(DATA / "vec_scale.o"), "--args", str(tmp_path / name)).json()[0]
            for name in ("args.json", "args.yaml")]
    assert runs[0]["entries"] == runs[1]["entries"]
    entry, end = runs[0]["entries"]
    assert (entry["entry"], entry["returned"], entry["raised"], end["entry"]) == ("tvm_ffi", 0, None, "process_exit")
    assert entry["launch"]["args"][0]["tensor"]["shape"] == [256] and entry["launch"]["given"] is True
    launch = next(c for c in runs[0]["calls"] if c["symbol"] == "_cudaLaunchKernelEx")
    assert launch["args"]["config"]["gridDim"] == [2, 1, 1]          # (256 + 127) // 128 blocks
    (tmp_path / "bad.yaml").write_text("- {tensor: {dtype: float32}}\n")
    bad = run_cli("trace", str(DATA / "vec_scale.o"), "--args", str(tmp_path / "bad.yaml"))
    assert bad.code == 2 and "TVM-FFI argument #0" in bad.err and "shape" in bad.err and "Traceback" not in bad.err


def test_check_a_cache_folder_of_tvm_ffi_objects(tmp_path):
    """A quack-style cache: one TVM-FFI object per compiled configuration, in nested folders."""
    for name in ("vec_scale", "pair_add"):
        (tmp_path / name).mkdir()
        shutil.copy(DATA / f"{name}.o", tmp_path / name / "sm90_abc123.o")
    result = run_cli("check", "--json", str(tmp_path))
    assert result.code == 0, result.out
    checked = result.json()["objects"]
    assert [c["metadata"] for c in checked] == ["none by design (TVM-FFI)"] * 2
    assert [(c["loaders"][0]["entry"], c["loaders"][0]["returned"], c["loaders"][0]["raised"]) for c in checked] == \
        [("tvm_ffi", 0, None)] * 2 and all(c["findings"] == [] for c in checked)
    text = run_cli("check", str(tmp_path)).out
    assert "attributes not checked: a TVM-FFI export has no kernel_info" in text and "4.3" not in text


def test_the_api_runs_the_default_call_and_given_ones():
    run = emu.trace(DATA / "vec_scale.o")
    assert [e.entry for e in run.entries] == ["tvm_ffi", "process_exit"] and run.entries[0].returned == 0
    assert run.format_warning is None and [c.symbol for c in run.calls[-2:]] == ["cudaLibraryUnload", "cuda_dialect_unload_library_once"]
    given = emu.trace(DATA / "vec_scale.o", launch_args=[{"int": 1}, {"float": 1.0}, None])
    assert given.entries[0].raised["kind"] == "TypeError"


def test_arguments_by_name_for_a_tvm_ffi_export_are_bad_input_not_a_crash():
    result = run_cli("trace", str(DATA / "vec_scale.o"), "--arg", "x=1")
    assert result.code == 2 and "a TVM-FFI export takes its arguments as one positional list" in result.err
    assert "internal error" not in result.err


def _scenario(tmp_path, runtime: str, expect: str = "") -> object:
    path = tmp_path / "s.yaml"
    path.write_text(f"objects: [{DATA / 'vec_scale.o'}]\nentries: [tvm_ffi, process_exit]\n"
                    f"runtime:\n  errors: [{runtime}]\n" + (f"expect:\n{expect}" if expect else ""))
    return run_cli("run", str(path))


def test_the_runtime_calls_the_helpers_make_can_fail_by_injection(tmp_path):
    """cuda_dialect_init_library_once's cudaGetDeviceCount and unload_library_once's cudaLibraryUnload honour an
    injected error: the first raises the helper's RuntimeError, the second is dropped (its result is ignored)."""
    count = _scenario(tmp_path, "{symbol: cudaGetDeviceCount, error: NO_DEVICE, every: true}",
                      "  raises: {kind: RuntimeError, message: 'Got Cuda Runtime Error: cudaErrorNoDevice no CUDA-capable "
                      "device is detected'}\n  calls_in_order: [{symbol: cudaGetErrorString, args: {error: NO_DEVICE}}]\n")
    assert count.code == 0, count.out + count.err
    unload = _scenario(tmp_path, "{symbol: cudaLibraryUnload, error: INVALID_RESOURCE_HANDLE}",
                       "  calls_in_order: [{symbol: cudaLibraryUnload, ret: INVALID_RESOURCE_HANDLE}]\n")
    assert unload.code == 0, unload.out + unload.err


def test_the_error_text_functions_cannot_be_injected_and_say_why(tmp_path):
    for symbol in ("cudaGetErrorName", "cudaGetErrorString"):
        result = _scenario(tmp_path, f"{{symbol: {symbol}, error: INVALID_VALUE}}")
        assert result.code == 2 and result.out == "", result.out
        assert f"{symbol} returns a `const char *`" in result.err and "not a cudaError_t" in result.err
        assert "line 4" in result.err and "runtime.errors.0.symbol" in result.err


def test_inner_calls_are_unknown_to_an_object_without_the_helper(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(f"objects: [{fixture('x86_64', 'carveout_25')}]\nentries: [cuda_init]\n"
                    "expect:\n  no_calls: [{symbol: cudaLibraryUnload}]\n")
    result = run_cli("run", str(path))
    assert result.code == 2 and "unknown symbol 'cudaLibraryUnload'" in result.err
    assert "called inside cuda_dialect_unload_library_once, which" in result.err
    path.write_text(f"objects: [{fixture('x86_64', 'carveout_25')}]\nentries: [module_load]\n"
                    "runtime:\n  errors: [{symbol: cudaGetDeviceCount, error: NO_DEVICE}]\n")
    header = run_cli("run", str(path))
    assert header.code == 2 and "module_load's header code" in header.err and "runtime.device_count" in header.err


def test_raises_can_expect_call_by_call(tmp_path):
    """Two calls, the first with an int where the tensor goes (TypeError), the second with defaults (works)."""
    base = (f"objects: [{DATA / 'vec_scale.o'}]\nentries:\n  - tvm_ffi: {{args: [{{int: 3}}, {{float: 2.0}}, "
            "{stream: 0x5000}]}\n  - tvm_ffi\n")
    path = tmp_path / "s.yaml"
    path.write_text(base + "expect:\n  raises: [{kind: TypeError, message_contains: expected Tensor}, nothing]\n")
    held = run_cli("run", str(path))
    assert held.code == 0 and "tvm_ffi calls: TypeError: ...expected Tensor...; nothing raised" in held.out, held.out
    path.write_text(base + "expect:\n  raises: [nothing, null]\n")
    first = run_cli("run", str(path))
    assert first.code == 1 and f"- tvm_ffi call 1 -> nothing raised, got TypeError: {WRONG_TYPE}" in first.out
    path.write_text(base + "expect:\n  raises: {kind: TypeError, message_contains: expected Tensor}\n")
    every = run_cli("run", str(path))           # one expectation: every call, so the second call fails it
    assert every.code == 1 and "- tvm_ffi -> TypeError: ...expected Tensor..., got nothing raised" in every.out
    path.write_text(base + "expect:\n  returns: {tvm_ffi: [-1, 0]}\n")
    assert run_cli("run", str(path)).code == 0
    path.write_text(base + "expect:\n  returns: {tvm_ffi: [null, -1]}\n")
    returned = run_cli("run", str(path))
    assert returned.code == 1 and "- tvm_ffi call 2 -> -1, got 0" in returned.out, returned.out
    path.write_text(base + "expect:\n  returns: {tvm_ffi: [0]}\n")
    assert run_cli("run", str(path)).code == 2
    path.write_text(base + "expect:\n  raises: [nothing]\n")
    counted = run_cli("run", str(path))
    assert counted.code == 2 and "line 6" in counted.err and "a list of 1 expectation(s), one per tvm_ffi call, but the " \
        "scenario makes 2 tvm_ffi call(s)" in counted.err
