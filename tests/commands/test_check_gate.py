"""`check` as a CI gate (issue 31): the profile per export, CUDA errors by name, metadata it cannot check, and
what a `check` user can do about a missing stub."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, fixture

from emu.cache.loaded import load_image
from emu.commands.check import AttributeCheck, LoaderEntry, SetCall, _check, pick_profile
from emu.commands.check_text import _shown
from tests.fuzz import elf

MULTI = ROOT / "tests" / "data" / "multi_export"
NO_KERNEL_IMAGE = "209 NO_KERNEL_IMAGE_FOR_DEVICE"


# -- 1. the profile whose device runs the export's GPU binary -------------------------------------------------
@pytest.mark.parametrize("name, profile", [("carveout_25", "h200"), ("sm80_carveout_25", "a100"),
                                           ("sm100a_carveout_25", "b200"), ("sm100a_cluster_2x1x1", "b200")])
def test_each_object_runs_on_the_profile_whose_device_runs_its_binary(cli, name, profile):
    result = cli("check", "--json", fixture("x86_64", name))
    obj = result.json()["objects"][0]
    measured = profile == "h200"                                       # a100 and b200: published figures
    assert (obj["profile"], obj["profile_source"], obj["profile_measured"]) == (profile, "chosen", measured)
    assert [l["returned"] for l in obj["loaders"]] == [0, 0]           # no 209: the device runs it
    assert result.code == (1 if "carveout" in name else 0)
    text = cli("check", fixture("x86_64", name)).out
    shown = "" if measured else ", published figures, not measured"
    assert f"profile {profile} (chosen: its device runs the GPU binary{shown})" in text.splitlines()[0]


def test_a_given_profile_is_used_and_the_209_it_causes_is_named(cli):
    path = fixture("aarch64", "sm100a_cluster_2x1x1")
    result = cli("check", "--profile", "h200", path)
    assert result.code == 1
    assert "profile h200 (given)" in result.out.splitlines()[0]
    assert f"  cuda_load returned {NO_KERNEL_IMAGE}" in result.out.splitlines()
    assert f"cuda_load_to_device(device=0) returned {NO_KERNEL_IMAGE} on profile h200" in result.out
    obj = cli("check", "--profile", "h200", "--json", path).json()["objects"][0]
    assert obj["profile_source"] == "given"
    assert [(l["returned"], l["returned_name"]) for l in obj["loaders"]] == [(209, "NO_KERNEL_IMAGE_FOR_DEVICE")] * 2
    assert [f["kind"] for f in obj["findings"]] == ["loader", "loader"]
    summary = cli("check", "--profile", "h200", str(Path(path).parent)).out
    assert f"cuda_load returned {NO_KERNEL_IMAGE}, cuda_load_to_device(device=0) returned {NO_KERNEL_IMAGE}" in summary


def test_each_export_of_an_object_gets_its_own_profile(cli):
    data = cli("check", "--json", str(MULTI / "x86_64" / "three_exports.o")).json()
    assert [(o["prefix"], o["profile"], o["profile_source"]) for o in data["objects"]] == [
        ("carveout_25", "h200", "chosen"), ("sm100a_carveout_25", "b200", "chosen"), ("two_kernels", "h200", "chosen")]
    assert all(l["returned"] == 0 for o in data["objects"] for l in o["loaders"])
    assert data["device_count"] is None and data["exit_code"] == 1


def test_the_real_world_exports_fail_only_on_a_profile_that_cannot_run_them(cli):
    """Issue 31: every real-world export (54 of them) flagged on the default h200 profile was a 209, none a loader
    problem; each on the profile that runs it is clean."""
    folder = str(FIXTURES / "realworld")
    chosen = cli("check", "--json", folder).json()
    assert chosen["exit_code"] == 0 and all(o["findings"] == [] and o["profile_source"] == "chosen" for o in chosen["objects"])
    assert {o["profile"] for o in chosen["objects"]} == {"h200", "a100", "b200"}
    forced = cli("check", "--json", "--profile", "h200", folder).json()
    flagged = [o for o in forced["objects"] if o["findings"]]
    assert flagged and {o["profile"] for o in chosen["objects"] if o["key"] in {f["key"] for f in flagged}} == {"a100", "b200"}
    assert {(f["kind"], f["description"].split(" returned ")[1]) for o in flagged for f in o["findings"]} == {
        ("loader", f"{NO_KERNEL_IMAGE} on profile h200")}


def test_an_export_without_a_binary_a_profile_runs_gets_the_default():
    image, (export,) = load_image(fixture("x86_64", "carveout_25"))
    assert pick_profile(image, export, None) == ("h200", "chosen")
    assert pick_profile(image, export, "b200") == ("b200", "given")
    assert pick_profile(image, dataclasses.replace(export, binary=None), None) == ("h200", "default")


# -- 2. CUDA errors by name ----------------------------------------------------------------------------------
def test_a_failed_setter_is_named_in_the_row_and_the_json():
    failed = SetCall(kernel="k", attribute=9, attribute_name="PREFERRED_SHARED_MEMORY_CARVEOUT", value=25, device=0,
                     ret=1, ret_name="INVALID_VALUE", call=3)
    loader = LoaderEntry(entry="cuda_load", device=0, returned=1, returned_name="INVALID_VALUE", sets=[failed])
    row = _check("k", 9, 25, loader, None)
    assert isinstance(row, AttributeCheck) and (row.error, row.error_name, row.status) == (1, "INVALID_VALUE", "missing")
    assert _shown(row.applied, row.error) == "missing (error 1 INVALID_VALUE)"


# -- 4. metadata check cannot check against -------------------------------------------------------------------
def _renamed(tmp_path: Path, renames: dict[str, str], name: str = "carveout_25.o") -> str:
    raw = elf.fixture_bytes(elf.SEED_X86)
    for old, new in renames.items():
        elf.rename_symbol(raw, old, new)
    path = tmp_path / name
    path.write_bytes(bytes(raw))
    return str(path)


ROTATE_SLOT = "kernels_kernel_cutlass_rotate_tensorptrf32gmemalign16o1281_0"


def test_a_44_export_without_kernel_info_is_never_clean(cli, tmp_path):
    path = _renamed(tmp_path, {"carveout_25_kernel_info": "carveout_25_kernel_inf0"})
    result = cli("check", path)
    assert result.code == 1 and "clean" not in result.out and result.err == ""
    assert "  not checked: no carveout_25_kernel_info in the object, although its format" in result.out
    obj = cli("check", "--json", path).json()["objects"][0]
    assert obj["metadata"] == "missing" and obj["checks"] == [] and obj["discrepancies"] == 0
    assert [f["kind"] for f in obj["findings"]] == ["unchecked"] and obj["exit_code"] == 1
    summary = cli("check", str(tmp_path))
    assert summary.code == 1 and "NOT CHECKED: no kernel_info" in summary.out
    assert "1 objects, 1 with new findings or errors" in summary.out


def test_an_export_of_unknown_format_is_a_finding_and_its_loaders_are_not_run(cli, tmp_path):
    path = _renamed(tmp_path, {"carveout_25_kernel_info": "carveout_25_kernel_inf0", "carveout_25_version": "carveout_25_versio0",
                               "carveout_25_args_spec": "carveout_25_args_spe0", ROTATE_SLOT: "x" + ROTATE_SLOT[1:]})
    result = cli("check", path)
    assert result.code == 1 and "clean" not in result.out and result.err == ""
    assert "  not checked: the export's format is unknown, so its loaders were not run: cannot tell how" in result.out
    obj = cli("check", "--json", path).json()["objects"][0]
    assert (obj["metadata"], obj["loaders"], obj["checks"]) == ("unknown format", [], [])
    assert obj["findings"][0]["kind"] == "unchecked"


def test_an_unknown_version_is_a_finding_beside_the_rows(cli, tmp_path):
    patch = _module_make_patched()
    path = tmp_path / "carveout_25.o"
    path.write_bytes(patch.replace_symbol(elf.SEED_X86, "carveout_25_version", b"9.9\0"))
    obj = cli("check", "--json", str(path)).json()["objects"][0]
    assert obj["metadata"] == "unknown version" and "'9.9', not one emu knows" in obj["unchecked"]
    assert [f["kind"] for f in obj["findings"]] == ["unchecked", "attribute", "attribute"]
    assert len(obj["checks"]) == 2


def test_a_43_export_says_it_carries_no_kernel_info_and_passes(cli):
    path = str(FIXTURES / "cutlass-dsl-4.3.5" / "native" / "two_kernels.o")
    result = cli("check", path)
    assert result.code == 0, result.out + result.err
    first = result.out.splitlines()[0]
    assert "clean" not in result.out and first.endswith("loaders ok; attributes not checked (a 4.3 export carries no kernel_info)")
    assert "not checked: no two_kernels_kernel_info in the object (4.3-format exports" in result.out
    obj = cli("check", "--json", path).json()["objects"][0]
    assert (obj["metadata"], obj["findings"], obj["exit_code"]) == ("none by design (4.3)", [], 0)
    summary = cli("check", str(Path(path).parent))
    assert summary.code == 0 and "clean" not in summary.out
    assert summary.out.count("attributes not checked: a 4.3 export has no kernel_info") == len(list(Path(path).parent.glob("*.o")))


def test_every_metadata_state_has_its_words_in_the_summary():
    from typing import get_args
    from emu.commands.check_findings import Metadata
    from emu.commands.check_text import UNCHECKED
    assert set(UNCHECKED) == set(get_args(Metadata)) - {"checked"}


def _module_make_patched():
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_patched", ROOT / "tests" / "data" / "check" / "make_patched.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- 5. a missing stub under check ------------------------------------------------------------------------------
def test_a_missing_stub_says_what_a_check_user_can_do(cli, tmp_path):
    path = _renamed(tmp_path, {"_cudaGetDevice": "_cudaGetDevicf"})
    result = cli("check", path)
    assert result.code == 3, result.out + result.err
    assert "scenario" not in result.out and "runtime.missing_symbols" not in result.out
    assert "calls _cudaGetDevicf, an undefined symbol emu has no stub for; under check: `--missing-symbols return_zero`" in result.out
    assert "  cuda_load stopped: missing_stub: carveout_25_cuda_load+0x38 calls _cudaGetDevicf" in result.out
    obj = cli("check", "--json", path).json()["objects"][0]
    assert f"python -m emu inspect {path}` lists" in obj["loaders"][0]["fault"] and "scenario" not in obj["loaders"][0]["fault"]
    fault = next(f for f in obj["findings"] if f["kind"] == "fault")          # what it is, without a path of this machine
    assert fault["description"] == ("carveout_25.o (carveout_25): cuda_load stopped: missing_stub: carveout_25_cuda_load+0x38 "
                                    "calls _cudaGetDevicf, an undefined symbol emu has no stub for")
    assert obj["loaders"][0]["fault_kind"] == "missing_stub" and obj["loaders"][0]["fault_location"] == "_cudaGetDevicf (stub)"
    zero = cli("check", "--missing-symbols", "return_zero", "--json", path).json()
    assert zero["exit_code"] == 1 and [l["returned"] for l in zero["objects"][0]["loaders"]] == [0, 0]
    assert {f["kind"] for f in zero["objects"][0]["findings"]} == {"attribute"}
