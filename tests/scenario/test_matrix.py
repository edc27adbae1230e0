"""The feature matrix: exports built on the fly with the installed CuTe DSL, traced and checked.

The committed fixtures pin a few versions; this covers the launch options one by one with
whatever DSL is installed (CI installs nvidia-cutlass-dsl), on both host targets: carveouts,
min_blocks_per_mp, cluster shapes, dynamic shared memory, PDL, cooperative, two kernels in one
launch function, and sm_80 / sm_90a / sm_100a.  45 builds, content-cached (tests/fixtures/dsl_cache.py),
so a second run builds nothing; safe under pytest-xdist.

Each case has two tests.  `test_trace` checks the calls structurally: per kernel and loader,
attribute 8 = optin - static and 14 = 1 and nothing else, and the launch configuration the case
asks for.  `test_check` runs `emu check`'s comparison with kernel_info; cases whose metadata asks
for attribute 9 are strict expected failures (NVIDIA/cutlass#3715), so a fixed DSL shows as XPASS,
but only when the check fails exactly as the bug says (`check_or_3715`): every loader returned 0 and
the one discrepancy is attribute 9 missing, for every kernel and loader entry.  Anything else (a fault,
an error, another attribute) raises AssertionError, which the xfail marker does not accept.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from emu.commands.check import check_object, kernel_handles
from emu.cuda.config import RuntimeConfig
from emu.cuda.object_profile import profile_for_object
from emu.cuda.profile import load_profile
from emu.dsl.entries import EntrySpec
from emu.cache.loaded import load_image
from emu.scenario.pytest_plugin import UpstreamBugReproduced
from emu.run.session import run_object
from fixtures.dsl_cache import cached_build, dsl_available
from fixtures.kernels import KernelCase

needs_dsl = pytest.mark.skipif(not dsl_available(), reason="nvidia-cutlass-dsl is not installed")

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
    marks = [pytest.mark.xfail(strict=True, raises=UpstreamBugReproduced, reason=BUG)] if xfail_carveout and case.carveout is not None else []
    return pytest.param(case, id=f"{case.host}-{case.name}", marks=[needs_dsl, *marks])


def build(case: KernelCase) -> str:
    return str(cached_build(case, prefix=case.name))


def expected_kernels(case: KernelCase) -> list[str]:
    return ["rotate", "negate"] if case.two_kernels else ["rotate"]


def _short(name: str) -> str:
    return next(k for k in ALLOCATOR_SMEM if f"_{k}_" in name)


@pytest.mark.parametrize("case", [_param(c, False) for c in CASES])
def test_trace(case: KernelCase):
    path = build(case)
    _image, (export,) = load_image(path)
    assert [_short(k) for k in export.kernel_info] == expected_kernels(case)
    asks = {} if case.carveout is None else {9: case.carveout}
    assert export.kernel_info == {k: asks for k in export.kernel_info}
    config = RuntimeConfig(device_count=DEVICES, kernel_attributes={"*": {"SHARED_SIZE_BYTES": STATIC}},
                           profile=profile_for_object(path))
    entries = [EntrySpec(name="cuda_init"), EntrySpec(name="cuda_load")]
    entries += [EntrySpec(name="cuda_load_to_device", device=d) for d in range(DEVICES)] + [EntrySpec(name="launch")]
    run = run_object(path, config, entries)
    optin = load_profile(config.profile).device_attributes[97]     # the profile that runs the cubin
    assert [(e.entry, e.returned, e.fault) for e in run.entries] == [(e.name, 0, None) for e in entries]
    names = kernel_handles(run.calls)
    for entry in run.entries[1:-1]:
        device = entry.args.get("device")
        calls = run.calls[entry.first_call:entry.end_call]
        setters = [(c.symbol, names[c.args.get("func", c.args.get("kernel"))], c.args["attr"], c.args["value"],
                    c.args.get("device")) for c in calls if "SetAttribute" in c.symbol]
        symbol = "_cudaFuncSetAttribute" if device is None else "_cudaKernelSetAttributeForDevice"
        assert setters == [(symbol, k, attr, value, device) for k in export.kernel_info
                           for attr, value in ((8, optin - STATIC), (14, 1))], entry.entry
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
    path = build(case)
    check_or_3715(case, check_object(path, device_count=DEVICES, profile=profile_for_object(path)))


def check_or_3715(case: KernelCase, result) -> None:
    """Pass when the check is clean; raise UpstreamBugReproduced when it fails exactly as #3715 says
    (the carveout the case asks for is missing in every loader entry, nothing else differs); else fail."""
    assert result.error is None and [(l.entry, l.returned) for l in result.loaders] == [(l.entry, 0) for l in result.loaders]
    asked = 0 if case.carveout is None else len(expected_kernels(case))
    assert len(result.checks) == asked * (1 + DEVICES)
    wrong = [(c.kernel, c.attribute, c.entry, c.expected, c.applied, c.status) for c in result.checks if c.status != "ok"]
    if case.carveout is not None and wrong and wrong == [(c.kernel, 9, c.entry, case.carveout, None, "missing")
                                                         for c in result.checks]:
        assert result.exit_code == 1 and result.discrepancies == len(wrong)
        raise UpstreamBugReproduced([f"{result.object}: attribute 9 missing in {len(wrong)} loader entries"])
    assert wrong == []
    assert result.exit_code == 0


def test_check_or_3715_accepts_only_the_bug(tmp_path):
    """The committed carveout_25 export reproduces #3715 exactly; the same export whose cuda_load starts
    with ud2 (the attribute is missing there too) fails with AssertionError, which the xfail does not accept."""
    from conftest import fixture
    from tests.fuzz import elf
    case = KernelCase("carveout_25", carveout=25).with_host("x86_64")
    with pytest.raises(UpstreamBugReproduced):
        check_or_3715(case, check_object(fixture("x86_64", "carveout_25"), device_count=DEVICES))
    raw = elf.fixture_bytes(Path(fixture("x86_64", "carveout_25")))
    elf.patch_function(raw, "carveout_25_cuda_load", b"\x0f\x0b")
    (tmp_path / "carveout_25.o").write_bytes(bytes(raw))
    faulting = check_object(str(tmp_path / "carveout_25.o"), device_count=DEVICES)
    assert faulting.exit_code == 3
    with pytest.raises(AssertionError):
        check_or_3715(case, faulting)
