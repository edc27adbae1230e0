"""The feature matrix: exports built on the fly with the installed CuTe DSL, traced and checked.

The committed fixtures pin a few versions; this covers the launch options one by one with
whatever DSL is installed (CI installs nvidia-cutlass-dsl), on both host targets: carveouts,
min_blocks_per_mp, cluster shapes, dynamic shared memory, PDL, cooperative, two kernels in one
launch function, and sm_80 / sm_90a / sm_100a.  45 builds, content-cached (tests/fixtures/dsl_cache.py),
so a second run builds nothing; safe under pytest-xdist.

Each case has two tests.  `test_trace` checks the calls structurally: per kernel and loader,
attribute 8 = optin - static and 14 = 1 and nothing else, and the launch configuration the case
asks for.  `test_check` runs `emu check`'s comparison with kernel_info; cases whose metadata asks
for attribute 9 are strict expected failures (NVIDIA/cutlass#3715), so a fixed DSL shows as XPASS.
"""
from __future__ import annotations

import pytest

from emu.loader_check import check_object, kernel_handles
from emu.cuda.config import RuntimeConfig
from emu.entries import EntrySpec
from emu.images import load_image
from emu.run import run_object
from fixtures.dsl_cache import cached_build, dsl_available
from fixtures.kernels import KernelCase

pytestmark = pytest.mark.skipif(not dsl_available(), reason="nvidia-cutlass-dsl is not installed")

OPTIN = 232448          # the H200 profile's MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
STATIC = 1024           # static shared memory the runtime model reports, so attribute 8 shows the subtraction
DEVICES = 2
ALLOCATOR_SMEM = {"rotate": 512, "negate": 0}   # the launch's dynamic smem without smem=
BUG = "NVIDIA/cutlass#3715: the loaders never set attribute 9 (PREFERRED_SHARED_MEMORY_CARVEOUT) that kernel_info asks for"

FEATURES = [
    *(KernelCase(f"carveout_{'m1' if c < 0 else c}", carveout=c) for c in (-1, 0, 25, 50, 75, 100)),
    KernelCase("plain"),
    KernelCase("min_blocks_1", min_blocks_per_mp=1),
    KernelCase("min_blocks_4_carveout_30", min_blocks_per_mp=4, carveout=30),
    KernelCase("cluster_2x1x1", cluster=(2, 1, 1)),
    KernelCase("cluster_1x2x1", cluster=(1, 2, 1)),
    KernelCase("cluster_2x2x1", cluster=(2, 2, 1)),
    KernelCase("smem_4096", smem=4096),
    KernelCase("smem_65536", smem=65536),
    KernelCase("pdl", use_pdl=True),
    KernelCase("cooperative", cooperative=True),
    KernelCase("two_kernels", two_kernels=True),
    KernelCase("two_kernels_carveout_50", two_kernels=True, carveout=50),
    KernelCase("mixed", carveout=40, min_blocks_per_mp=2, cluster=(2, 1, 1), smem=8192, use_pdl=True, two_kernels=True),
]
ARCHS = [
    KernelCase("sm80_plain", gpu_arch="sm_80"),
    KernelCase("sm80_carveout_25", gpu_arch="sm_80", carveout=25),
    KernelCase("sm100a_plain", gpu_arch="sm_100a"),
    KernelCase("sm100a_carveout_25", gpu_arch="sm_100a", carveout=25),
    KernelCase("sm100a_cluster_2x1x1", gpu_arch="sm_100a", cluster=(2, 1, 1)),
]
CASES = ([case.with_host(host) for host in ("x86_64", "aarch64") for case in FEATURES]
         + ARCHS + [ARCHS[0].with_host("aarch64"), ARCHS[4].with_host("aarch64")])


def _param(case: KernelCase, xfail_carveout: bool):
    marks = [pytest.mark.xfail(strict=True, reason=BUG)] if xfail_carveout and case.carveout is not None else []
    return pytest.param(case, id=f"{case.host}-{case.name}", marks=marks)


def build(case: KernelCase) -> str:
    return str(cached_build(case, prefix=case.name))


def expected_kernels(case: KernelCase) -> list[str]:
    return ["rotate", "negate"] if case.two_kernels else ["rotate"]


def _short(name: str) -> str:
    return next(k for k in ALLOCATOR_SMEM if f"_{k}_" in name)


@pytest.mark.parametrize("case", [_param(c, False) for c in CASES])
def test_trace(case: KernelCase):
    path = build(case)
    _image, export = load_image(path)
    assert [_short(k) for k in export.kernel_info] == expected_kernels(case)
    asks = {} if case.carveout is None else {9: case.carveout}
    assert export.kernel_info == {k: asks for k in export.kernel_info}
    config = RuntimeConfig(device_count=DEVICES, kernel_attributes={"*": {"SHARED_SIZE_BYTES": STATIC}})
    entries = [EntrySpec(name="cuda_init"), EntrySpec(name="cuda_load")]
    entries += [EntrySpec(name="cuda_load_to_device", device=d) for d in range(DEVICES)] + [EntrySpec(name="launch")]
    run = run_object(path, config, entries)
    assert [(e.entry, e.returned, e.fault) for e in run.entries] == [(e.name, 0, None) for e in entries]
    names = kernel_handles(run.calls)
    for entry in run.entries[1:-1]:
        device = entry.args.get("device")
        calls = run.calls[entry.first_call:entry.end_call]
        setters = [(c.symbol, names[c.args.get("func", c.args.get("kernel"))], c.args["attr"], c.args["value"],
                    c.args.get("device")) for c in calls if "SetAttribute" in c.symbol]
        symbol = "_cudaFuncSetAttribute" if device is None else "_cudaKernelSetAttributeForDevice"
        assert setters == [(symbol, k, attr, value, device) for k in export.kernel_info
                           for attr, value in ((8, OPTIN - STATIC), (14, 1))], entry.entry
    check_launches(case, [c for c in run.calls if c.symbol == "_cudaLaunchKernelEx"], names)


def check_launches(case: KernelCase, launches, names: dict[int, str]) -> None:
    assert [_short(names[c.args["func"]]) for c in launches] == expected_kernels(case)
    for call in launches:
        config = call.args["config"]
        kernel = _short(names[call.args["func"]])
        assert config["gridDim"] == list(case.cluster or (1, 1, 1))
        assert config["blockDim"] == [128, 1, 1]
        assert config["dynamicSmemBytes"] == (case.smem if case.smem is not None else ALLOCATOR_SMEM[kernel])
        attrs = {a["id"]: a["value"] for a in config["attrs"]}
        expected = {6: {"programmaticStreamSerializationAllowed": int(case.use_pdl)},
                    2: {"cooperative": int(case.cooperative)}}
        if case.cluster:
            expected[4] = dict(zip("xyz", case.cluster))
        assert attrs == expected      # never 14 (the carveout launch attribute) either


@pytest.mark.parametrize("case", [_param(c, True) for c in CASES])
def test_check(case: KernelCase):
    result = check_object(build(case), device_count=DEVICES)
    assert result.error is None and all(l.returned == 0 for l in result.loaders)
    asked = 0 if case.carveout is None else len(expected_kernels(case))
    assert len(result.checks) == asked * (1 + DEVICES)
    assert [(c.kernel, c.attribute, c.entry, c.status) for c in result.checks if c.status != "ok"] == []
    assert result.exit_code == 0
