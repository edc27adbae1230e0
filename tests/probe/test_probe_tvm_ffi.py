"""The probe's TVM-FFI harness: it loads the object's own GPU binary and replays the lazy load its entry makes, as
emu traced it.  The replay is checked against the native runs of the same objects (the real loader code and the
real cuda_dialect_init_library_once, tests/fixtures/tvm_ffi/native/traces), the harness text against the object,
and the source is compiled where CUDA's headers are (the probe's build machine)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from emu.cache.loaded import load_image
from emu.gpu_binary.fatbin import container_at
from emu.probe.command import export_target
from emu.api import trace
from emu.probe.tvm_ffi import TRACE_RUNTIME, traced_load, tvm_ffi_harness
from tests import oracles
from tests.probe.test_probe_harness import CUDA_INCLUDE, _assert_compiles

ROOT = Path(__file__).resolve().parents[2]
TVM = ROOT / "tests" / "fixtures" / "tvm_ffi"
NATIVE = TVM / "native" / "traces"
GEMM = TVM / "realworld" / "hopper_gemm.o"
SM100A = TVM / "realworld" / "quack_softmax.o"


def _native_object(trace: Path) -> Path:
    if trace.stem.startswith("quack_cache_"):
        [found] = (TVM / "quack_cache").glob(f"*/{trace.stem.removeprefix('quack_cache_')}*.o")
        return found
    return TVM / json.loads(trace.read_text())["object"]


OPT_IN = "opt-in shared memory - static shared memory"      # what the loader computes attribute 8 from


def _lazy_load(calls: list[dict]) -> tuple[list[tuple], bool]:
    """The device-0 part of a lazy load (calls before cuda_dialect_init_library_once) as the harness's replay writes it:
    each cudaLibraryGetKernel of load_to_device(0) and each attribute setting for device 0.  A value that is the device's
    opt-in shared memory less the kernel's static shared memory, as that run's own answers give them, is written as
    OPT_IN: the native runs answer from recording stubs, emu from its H200 model.  And whether one of them failed."""
    end = next(i for i, c in enumerate(calls) if c["symbol"] == "cuda_dialect_init_library_once")
    names, statics, steps, devices, optin, failed = {}, {}, [], 0, None, False
    for call in calls[:end]:
        args, outputs = call["args"], call["outputs"]
        if call["symbol"] == "_cudaDeviceGetAttribute" and args.get("attr") == 97:
            devices += 1                  # each load_to_device(d) starts by reading the opt-in shared memory
            optin = outputs["value"] if args["device"] == 0 else optin
        elif call["symbol"] == "_cuKernelGetAttribute" and args["attrib"] == 1 and args["dev"] == 0:
            statics[args["kernel"]] = outputs["pi"]
        elif call["symbol"] == "_cudaLibraryGetKernel":
            names[outputs.get("pKernel")] = args["name"]
            if devices == 1:
                steps.append(("get_kernel", args["name"]))
                failed |= call["ret"] != 0
        elif call["symbol"] == "_cudaKernelSetAttributeForDevice" and args["device"] == 0:
            value = OPT_IN if args["value"] == optin - statics.get(args["kernel"], 0) else args["value"]
            steps.append(("set", "cudaKernelSetAttributeForDevice", names[args["kernel"]], args["attr"], value, 0))
            failed |= call["ret"] != 0
    return steps, failed


def _native_lazy_load(trace: Path) -> list[tuple]:
    """What the real loader did for device 0 in the first (well-formed) native run."""
    run = json.loads(trace.read_text())["runs"][0]
    return _lazy_load([line for line in run["native"]["lines"] if line.get("kind") == "call"])[0]


def _replayed(path: Path) -> tuple[list[tuple], bool]:
    """The harness's replay, its attribute-8 values written as OPT_IN where emu's own answers give them so, and
    whether a replayed call failed in emu's run (the loader then stops, and so does the replay)."""
    run = trace(str(path), runtime=TRACE_RUNTIME)
    emu_load, failed = _lazy_load([call.model_dump(mode="json") for call in run.calls])
    replay = traced_load(path).replay
    assert [step[:4] for step in replay] == [step[:4] for step in emu_load]
    return [step if step[0] == "get_kernel" else (*step[:4], emu_load[i][4], step[5]) for i, step in enumerate(replay)], failed


TRACES = sorted(NATIVE.glob("*.json"))


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.parametrize("trace", TRACES, ids=lambda p: p.stem)
def test_the_replay_is_the_native_lazy_load_for_device_0(trace):
    native = _native_lazy_load(trace)
    assert native and native[0][0] == "get_kernel"
    replayed, failed = _replayed(_native_object(trace))
    assert replayed == native[:len(replayed)]
    assert len(replayed) == len(native) or failed      # the H200 model refuses a kernel the stubs hand out (sm_80)


def test_the_natives_cover_setters_and_a_refused_load():
    loads = {trace.stem: _native_lazy_load(trace) for trace in TRACES}
    assert len(loads) >= 15
    assert {step[3] for steps in loads.values() for step in steps if step[0] == "set"} == {8, 14}
    assert {step[4] for steps in loads.values() for step in steps if step[0] == "set" and step[3] == 8} == {OPT_IN}
    short = {trace.stem for trace in TRACES if len(_replayed(_native_object(trace))[0]) < len(loads[trace.stem])}
    assert short == {"elementwise_add", "quack_softmax"}      # sm_80 and sm_100a cubins: the H200 refuses the kernel


def test_the_harness_loads_the_objects_own_binary_and_replays_in_order():
    target = export_target(GEMM, sweep=False)
    source = target.source
    assert (target.label, target.name, target.object_path) == ("tests/fixtures/tvm_ffi/realworld/hopper_gemm.o",
                                                              "tvm_ffi.realworld.hopper_gemm", None)
    image, [export] = load_image(str(GEMM))
    fatbin = bytes(int(b) for b in re.search(r"FATBIN\[\] = \{([0-9,]*)\};", source).group(1).split(","))
    assert fatbin == container_at(image.read, export.binary) and fatbin[:4] == b"\x50\xed\x55\xba"
    [kernel] = export.kernels
    replay = [source.index(f'cudaLibraryGetKernel(&k[0], lib, "{kernel}")'),
              source.index("cudaKernelSetAttributeForDevice(k[0], (cudaFuncAttribute)8, 232448, 0)"),
              source.index("cudaKernelSetAttributeForDevice(k[0], (cudaFuncAttribute)14, 1, 0)")]
    assert replay == sorted(replay)
    assert "cudaLibraryLoadData(&lib, FATBIN, nullptr, nullptr, 0, nullptr, nullptr, 0)" in source
    assert f'probe_traced_launch(lib, "{kernel}", 2, 1, 128, 256, 1, 1, 197632ull, 1, 2, 1, 1);' in source
    assert "PROBE_EXPORT" not in source and "wrapper_return" not in source
    assert source.index("probe_library_attributes") < source.index("probe_traced_launch") < source.index("probe_library_rest")


def test_an_sm100a_objects_replay_stops_where_the_loader_did():
    load = traced_load(SM100A)
    assert load.replay == [("get_kernel", load.kernels[0])] and load.launches == []
    source = tvm_ffi_harness(load, "x.o", "00", sweep=True)
    assert "cudaKernelSetAttributeForDevice(k[" not in source and "probe_library_rest(kernels, true);" in source


def test_a_library_of_several_tvm_ffi_exports_is_bad_input(tmp_path, cli):
    several = cli("probe", str(ROOT / "tests/data/shared/x86_64/vec_scale.tvm_ffi.dyn.so"), "--out", str(tmp_path / "o"),
                  "--build-only", "--no-toys")
    assert several.code == 2 and "holds 2 TVM-FFI exports (vec_scale_sm_100a, vec_scale_sm_90a)" in several.err
    assert "Traceback" not in several.err
    missing = cli("probe", str(tmp_path / "gone.o"), "--out", str(tmp_path / "o"), "--build-only", "--no-toys")
    assert missing.code == 2 and "gone.o: no such file" in missing.err


@pytest.mark.skipif(CUDA_INCLUDE is None, reason="needs CUDA's headers (the probe's build machine)")
@pytest.mark.parametrize("path", [GEMM, SM100A, ROOT / "tests/data/shared/objects/x86_64/vec_scale_sm_90a.o"],
                         ids=lambda p: p.stem)
def test_the_tvm_ffi_harness_compiles(path, tmp_path):
    _assert_compiles(export_target(path, sweep=True).source, path, tmp_path)


TWINS = {"hopper_gemm": "hopper_gemm", "fa4_forward_sm90": "fa4_forward_sm90", "quack_cross_entropy": "quack_cross_entropy"}


@pytest.mark.oracle(oracles.H200)
@pytest.mark.parametrize("name", sorted(TWINS))
def test_the_oracle_answers_a_tvm_ffi_object_as_the_h200_answered_its_cute_abi_twin(name):
    """tests/oracles/h200_facts.py answers a TVM-FFI object's facts from its entry's lazy load (what the harness
    replays).  Until run 3 measures these objects, the H200's answers for the CuTe-ABI export of the same recipe
    (the same cubin, a loader that sets the same attributes) stand in: every attribute after load and every
    occupancy answer, asked of the TVM-FFI object, is the H200's."""
    from tests.oracles.h200_facts import compared_facts, measured_answer, model_answer
    twin = ROOT / "tests" / "data" / "facts" / "h200" / f"realworld.x86_64.{TWINS[name]}.jsonl.gz"
    facts = [f for f in compared_facts(twin) if f["kind"] in ("load", "kernel_attribute", "occupancy")]
    assert len(facts) > 200
    asked = [{**fact, "object": f"tests/fixtures/tvm_ffi/realworld/{name}.o"} for fact in facts]
    wrong = [(f["kind"], f.get("attribute"), f.get("block_size"), measured_answer(f), model_answer(a))
             for f, a in zip(facts, asked) if measured_answer(f) != model_answer(a)]
    assert wrong == []
