"""Launch feasibility per device profile (emu.cuda.feasibility): each launch the wrapper made, judged on every
profile by the one launch validation, on the committed CuTe DSL exports and the real-world kernels."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import emu
from emu.commands.render import show_run
from emu.cuda.config import RuntimeConfig
from emu.cuda.feasibility import launch_feasibility
from emu.cuda.launch_checks import LaunchRequest, check_launch, explain_launch
from emu.cuda.loading import library_image
from emu.cuda.profile import PROFILES, load_profile
from emu.cuda.runtime import CudaRuntime
from emu.cache.loaded import load_image
from emu.dsl.exports import choose
from stub_models.enums import CudaError as E, LaunchAttributeID as L

ROOT = Path(__file__).resolve().parents[2]
DSL = ROOT / "tests/fixtures/cutlass-dsl-4.8.0/x86_64"
REALWORLD = ROOT / "tests/fixtures/realworld"
LAUNCHING = sorted(p.name for p in DSL.glob("*.o"))
REAL = sorted(str(p.relative_to(REALWORLD)) for p in REALWORLD.glob("*/*.o") if p.with_suffix(".args.json").exists())


def _verdicts(run, call: int) -> dict[str, dict]:
    judged = next(j for j in run.launch_feasibility if j.call == call)
    return {v.profile: v for v in judged.profiles}


def _agrees_with_the_runtime(run) -> int:
    """Every launch call of the run has one verdict per profile; the run's profile's is the runtime's own answer."""
    launches = [c for c in run.calls if c.symbol in ("_cudaLaunchKernelEx", "_cudaLaunchKernel")]
    assert [j.call for j in run.launch_feasibility] == [c.index for c in launches]
    for call in launches:
        verdicts = _verdicts(run, call.index)
        assert list(verdicts) == list(PROFILES)
        own = verdicts[run.state.profile]
        if run.state.load_error is None:
            assert own.error == call.ret and own.accepted == (call.ret == 0)
        for verdict in verdicts.values():
            assert verdict.measured == load_profile(verdict.profile).measured
            assert (verdict.reason is None) == verdict.accepted
    return len(launches)


@pytest.mark.parametrize("name", LAUNCHING)
def test_the_run_profile_verdict_is_the_launch_the_runtime_judged(name):
    _agrees_with_the_runtime(emu.trace(DSL / name))


@pytest.mark.parametrize("name", REAL)
def test_real_kernels_verdicts_agree_with_the_runtime_on_the_profile_that_runs_them(name):
    path = REALWORLD / name
    image, exports = load_image(str(path))
    binary = library_image(image, choose(exports, None, str(path)).binary)
    from emu.cuda.loading import profiles_running
    profile = (profiles_running(binary) or ["h200"])[0]
    run = emu.trace(path, runtime={"profile": profile})
    assert _agrees_with_the_runtime(run) >= 1
    for judged in run.launch_feasibility:
        assert all(v.caveat is None for v in judged.profiles)


def test_an_sm100a_export_is_refused_with_209_on_h200_and_a100_and_judged_on_b200():
    run = emu.trace(DSL / "sm100a_carveout_25.o")
    verdicts = _verdicts(run, run.launch_feasibility[0].call)
    for name in ("h200", "a100"):
        assert verdicts[name].error == 209 and verdicts[name].error_name == "cudaErrorNoKernelImageForDevice"
        assert "sm_100a" in verdicts[name].reason
    assert verdicts["b200"].error != 209 and verdicts["b200"].caveat      # h200 did not load it: the sets are unknown
    on_b200 = emu.trace(DSL / "sm100a_carveout_25.o", runtime={"profile": "b200"})
    _agrees_with_the_runtime(on_b200)
    b200 = _verdicts(on_b200, on_b200.launch_feasibility[0].call)["b200"]
    assert b200.accepted and b200.caveat is None and not b200.measured


def test_a_cluster_launch_on_a100_says_why():
    run = emu.trace(DSL / "cluster_2x1x1.o")
    verdicts = _verdicts(run, run.launch_feasibility[0].call)
    assert verdicts["h200"].accepted
    assert verdicts["a100"].error == 209 and "sm_80" in verdicts["a100"].reason
    # an sm_80 kernel the A100 loads, launched with a cluster: the A100 has no clusters
    path = str(DSL / "sm80_carveout_25.o")
    image, exports = load_image(path)
    export = choose(exports, None, path)
    runtime = CudaRuntime(RuntimeConfig(profile="a100"), export.kernels, library_image(image, export.binary))
    kernel = runtime.kernel(runtime.config.first_kernel_handle)
    request = LaunchRequest((2, 1, 1), (128, 1, 1), 0, {L.CLUSTER_DIMENSION: (2, 1, 1)})
    error, reason = explain_launch(request, kernel.attributes[0], runtime.profile, runtime.device_attributes, kernel.limits)
    assert error is E.INVALID_CLUSTER_SIZE and "no clusters" in reason
    config = {"gridDim": [2, 1, 1], "blockDim": [128, 1, 1], "dynamicSmemBytes": 0,
              "attrs": [{"id": int(L.CLUSTER_DIMENSION), "value": {"x": 2, "y": 1, "z": 1}}]}
    verdicts = {v["profile"]: v for v in launch_feasibility(runtime, "_cudaLaunchKernelEx",
                                                            {"config": config, "func": kernel.handle})}
    assert verdicts["a100"]["error_name"] == "cudaErrorInvalidClusterSize" and "no clusters" in verdicts["a100"]["reason"]
    assert not verdicts["a100"]["measured"]


@pytest.mark.parametrize("block, smem, attrs, expected, words", [
    ((64, 32, 1), 0, {}, E.INVALID_VALUE, "threads over the device's"),
    ((128, 1, 1), 300000, {}, E.INVALID_VALUE, "attribute 8"),
    ((128, 1, 1), 0, {L.CLUSTER_DIMENSION: (3, 1, 1)}, E.INVALID_CLUSTER_SIZE, "does not divide"),
    ((128, 1, 1), 0, {L.COOPERATIVE: 1}, E.COOPERATIVE_LAUNCH_TOO_LARGE, "cooperative grid"),
])
def test_explain_launch_gives_check_launch_s_code_and_why(block, smem, attrs, expected, words):
    profile = load_profile("h200")
    kernel = {a: v for a, v in CudaRuntime(RuntimeConfig(), ["k"]).kernel(0x2000).attributes[0].items()}
    request = LaunchRequest((1000000, 1, 1) if L.COOPERATIVE in attrs else (4, 1, 1), block, smem, attrs)
    error, reason = explain_launch(request, kernel, profile, profile.device_attributes)
    assert error is expected is check_launch(request, kernel, profile, profile.device_attributes)
    assert words in reason


def test_the_text_trace_shows_the_block_after_the_launch_and_json_carries_it():
    run = emu.trace(DSL / "cluster_2x1x1.o")
    text = "\n".join(show_run(run))
    assert "launch feasibility of call" in text and "h200 (NVIDIA H200): accepted" in text
    assert "[published figures, not measured]" in text
    dumped = json.loads(run.model_dump_json())
    assert dumped["launch_feasibility"][0]["profiles"][0]["profile"] == "h200"


def test_runs_without_a_launch_have_no_feasibility():
    run = emu.trace(DSL / "plain.o", entries=["cuda_init", "cuda_load"])
    assert run.launch_feasibility == []


def test_check_runs_no_launch_and_says_where_launch_feasibility_is():
    from emu.commands.check_text import LAUNCH_NOTE, show_check
    result = emu.check([str(DSL / "cluster_2x1x1.o")])
    assert "`python -m emu trace OBJECT`" in LAUNCH_NOTE and show_check(result, False)[-1] == LAUNCH_NOTE
    assert "launch_feasibility" not in result.model_dump_json()


def test_a_verdict_on_a_kernel_without_a_cubin_says_what_it_rests_on():
    """PTX the driver compiles (the probe's compute_90 toy fatbin): registers, sizes and the compile-time cluster
    are the profile's defaults, so every verdict that reads them carries a caveat naming them; a cubin's carries
    none."""
    from emu.cuda.loading import decode_library
    toys = ROOT / "tests/data/facts/h200/toys"
    verdicts = {}
    for target in ("compute_90", "sm_90a"):
        runtime = CudaRuntime(RuntimeConfig(), ["toy_small"], decode_library((toys / f"sweep_kernels.{target}.fatbin").read_bytes()))
        kernel = runtime.kernel_in(runtime.config.library_handle, "toy_small")
        config = {"gridDim": [1, 1, 1], "blockDim": [128, 1, 1], "dynamicSmemBytes": 0, "attrs": []}
        verdicts[target] = {v["profile"]: v for v in launch_feasibility(runtime, "_cudaLaunchKernelEx",
                                                                        {"func": kernel.handle, "config": config})}
    ptx = verdicts["compute_90"]["h200"]
    assert ptx["accepted"] and "NUM_REGS" in ptx["caveat"] and "REQUIRED_CLUSTER_WIDTH" in ptx["caveat"]
    assert verdicts["sm_90a"]["h200"]["accepted"] and verdicts["sm_90a"]["h200"]["caveat"] is None
