"""`check`'s stable finding ids and the baseline a project commits (issue 31): acknowledged findings pass, a new
one fails, one that no longer appears fails until the baseline is written again, a bad file is exit 2."""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

import emu
from conftest import DSL480, ROOT, fixture

from emu.commands.check_findings import object_keys
from emu.errors import BadInput

ROTATE = "kernel_cutlass_rotate_tensorptrf32gmemalign16o1281_0"
OBJECTS = ("x86_64/carveout_25.o", "aarch64/carveout_25.o", "x86_64/plain.o", "x86_64/sm80_carveout_25.o")


def _exports(folder: Path, names=OBJECTS) -> Path:
    """A project's folder of exports: copies of committed fixtures."""
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DSL480 / name, folder / name)
    return folder


def _ids(cli, *args) -> list[str]:
    return [f["id"] for o in cli("check", "--json", *args).json()["objects"] for f in o["findings"]]


# -- 3. stable ids --------------------------------------------------------------------------------------------
def test_ids_are_the_same_in_a_later_run_in_a_moved_folder_and_in_any_order(cli, tmp_path):
    first = _exports(tmp_path / "a" / "exports")
    ids = _ids(cli, str(first))
    assert len(ids) == len(set(ids)) == 6 and ids == _ids(cli, str(first))
    moved = tmp_path / "elsewhere" / "deeper" / "exports"
    shutil.copytree(first, moved)
    assert _ids(cli, str(moved)) == ids
    files = sorted(str(p) for p in first.rglob("*.o"))
    assert sorted(_ids(cli, *reversed(files))) == sorted(ids)              # the files given one by one, in another order
    # the same export for another host, or under another name, is another finding
    data = cli("check", "--json", str(first)).json()["objects"]
    by_key = {o["key"]: [f["id"] for f in o["findings"]] for o in data}
    assert set(by_key["x86_64/carveout_25.o"]).isdisjoint(by_key["aarch64/carveout_25.o"])
    assert all(f["object"] == o["key"] and f["export"] == o["prefix"] for o in data for f in o["findings"])


def test_object_keys_are_paths_under_the_folder_given():
    folder = str(DSL480)
    objects = [str(DSL480 / "x86_64" / "plain.o"), str(DSL480 / "aarch64" / "plain.o")]
    assert object_keys([folder], objects) == ["x86_64/plain.o", "aarch64/plain.o"]
    assert object_keys(objects, objects) == ["x86_64/plain.o", "aarch64/plain.o"]      # files: under their common folder
    assert object_keys(objects[:1], objects[:1]) == ["plain.o"]


# -- 3. the baseline --------------------------------------------------------------------------------------------
def test_write_then_check_against_the_baseline_passes_showing_what_it_acknowledges(cli, tmp_path):
    exports = _exports(tmp_path / "exports")
    baseline = tmp_path / "emu-baseline.json"
    written = cli("check", str(exports), "--write-baseline", str(baseline))
    assert written.code == 0 and f"emu: wrote 6 finding(s) to the baseline {baseline}" in written.err
    data = json.loads(baseline.read_text())
    assert (data["baseline"], data["version"], len(data["findings"])) == ("emu check", 1, 6)
    entry = data["findings"][0]
    assert set(entry) == {"id", "description", "object", "export"} and entry["object"] == "aarch64/carveout_25.o"
    assert entry["description"].startswith("aarch64/carveout_25.o (carveout_25): cuda_load does not apply 9 "
                                           "PREFERRED_SHARED_MEMORY_CARVEOUT=25")
    checked = cli("check", str(exports), "--baseline", str(baseline))
    assert checked.code == 0, checked.out + checked.err
    assert f"baseline {baseline}: 6 acknowledged finding(s), 0 new, 0 stale" in checked.out
    assert checked.out.count("  acknowledged ") == 6 and "NEW" not in checked.out
    result = cli("check", "--json", str(exports), "--baseline", str(baseline)).json()
    assert result["exit_code"] == 0 and result["baseline"]["stale"] == []
    assert all(f["acknowledged"] for o in result["objects"] for f in o["findings"])
    assert all(o["exit_code"] == 0 for o in result["objects"])
    moved = tmp_path / "moved" / "exports"                # the project's folder elsewhere: the same baseline holds
    shutil.copytree(exports, moved)
    assert cli("check", str(moved), "--baseline", str(baseline)).code == 0


def test_a_new_finding_fails_beside_the_acknowledged_ones(cli, tmp_path):
    exports = _exports(tmp_path / "exports")
    baseline = tmp_path / "baseline.json"
    cli("check", str(exports), "--write-baseline", str(baseline))
    _exports(exports, ["x86_64/carveout_75.o"])
    result = cli("check", str(exports), "--baseline", str(baseline))
    assert result.code == 1
    new = [line for line in result.out.splitlines() if line.startswith("  NEW ")]
    assert len(new) == 2 and all("x86_64/carveout_75.o (carveout_75)" in line for line in new)
    assert f"baseline {baseline}: 6 acknowledged finding(s), 2 new, 0 stale" in result.out


def test_an_acknowledged_finding_that_no_longer_appears_fails_until_the_baseline_is_written_again(cli, tmp_path):
    exports = _exports(tmp_path / "exports")
    baseline = tmp_path / "baseline.json"
    cli("check", str(exports), "--write-baseline", str(baseline))
    # the upstream fix landed: the same export, now asking for nothing its loaders skip
    spec = importlib.util.spec_from_file_location("make_patched", ROOT / "tests" / "data" / "check" / "make_patched.py")
    patch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(patch)
    (exports / "x86_64" / "carveout_25.o").write_bytes(patch.patched_bytes(DSL480 / "x86_64" / "carveout_25.o", {ROTATE: {}}))
    result = cli("check", str(exports), "--baseline", str(baseline))
    assert result.code == 1, result.out + result.err
    assert "2 acknowledged finding(s) no longer appear (the upstream fix landed" in result.out
    assert "this check fails until the baseline is written again (python -m emu check PATH... --write-baseline FILE" in result.out
    stale = [line for line in result.out.splitlines() if line.startswith("  STALE ")]
    assert len(stale) == 2 and all("x86_64/carveout_25.o (carveout_25)" in line for line in stale)
    data = cli("check", "--json", str(exports), "--baseline", str(baseline)).json()
    assert data["exit_code"] == 1 and len(data["baseline"]["stale"]) == 2 and data["baseline"]["new"] == 0
    assert cli("check", str(exports), "--write-baseline", str(baseline)).code == 0
    assert cli("check", str(exports), "--baseline", str(baseline)).code == 0


def test_writing_again_keeps_the_projects_notes(cli, tmp_path):
    exports = _exports(tmp_path / "exports", OBJECTS[:1])
    baseline = tmp_path / "baseline.json"
    cli("check", str(exports), "--write-baseline", str(baseline))
    data = json.loads(baseline.read_text())
    data["findings"][0]["note"] = "NVIDIA/cutlass#3715"
    baseline.write_text(json.dumps(data))
    assert cli("check", str(exports), "--baseline", str(baseline)).code == 0
    _exports(exports, ["x86_64/carveout_75.o"])
    assert cli("check", str(exports), "--write-baseline", str(baseline)).code == 0
    notes = {e["id"]: e.get("note") for e in json.loads(baseline.read_text())["findings"]}
    assert len(notes) == 4 and notes[data["findings"][0]["id"]] == "NVIDIA/cutlass#3715"


def test_faults_and_unchecked_metadata_can_be_acknowledged_too(cli, tmp_path):
    from tests.fuzz import elf
    raw = elf.fixture_bytes(elf.SEED_X86)
    elf.rename_symbol(raw, "_cudaGetDevice", "_cudaGetDevicf")
    elf.rename_symbol(raw, "carveout_25_kernel_info", "carveout_25_kernel_inf0")
    (tmp_path / "carveout_25.o").write_bytes(bytes(raw))
    baseline = tmp_path / "baseline.json"
    assert cli("check", str(tmp_path / "carveout_25.o")).code == 3
    assert cli("check", str(tmp_path / "carveout_25.o"), "--write-baseline", str(baseline)).code == 0
    kinds = [e["id"].split("-")[0] for e in json.loads(baseline.read_text())["findings"]]
    assert kinds == ["unchecked", "fault"]
    assert cli("check", str(tmp_path / "carveout_25.o"), "--baseline", str(baseline)).code == 0


@pytest.mark.parametrize("content, says", [
    (None, "cannot read the baseline file: No such file or directory"),
    ("{not json", "the baseline file is not JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
    ('{"baseline": "emu check", "version": 1, "findings": [{"description": "x"}]}', "field findings.0.id: Field required"),
    ('{"baseline": "emu check", "version": 2, "findings": []}', "field version: Input should be 1"),
    ('{"baseline": "emu check", "version": 1, "findings": [], "extra": 1}', "field extra: Extra inputs are not permitted"),
    ('[]', "field (top level): Input should be a valid dictionary"),
    ('{"baseline": "emu check", "version": 1, "findings": [{"id": "a", "description": "x"}, {"id": "a", "description": "y"}]}',
     "the baseline lists a more than once"),
])
def test_an_unreadable_or_malformed_baseline_is_exit_2_naming_the_file(cli, tmp_path, content, says):
    baseline = tmp_path / "baseline.json"
    if content is not None:
        baseline.write_text(content)
    result = cli("check", fixture("x86_64", "plain"), "--baseline", str(baseline))
    assert result.code == 2 and result.out == ""
    assert result.err.startswith(f"emu: error: {baseline}: ") and says in result.err, result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    with pytest.raises(BadInput, match="baseline"):
        emu.check(fixture("x86_64", "plain"), baseline=baseline)


def test_write_baseline_refuses_a_run_with_an_unreadable_object(cli, tmp_path):
    garbage = tmp_path / "garbage.o"
    garbage.write_bytes(b"\x7fELF nonsense")
    baseline = tmp_path / "baseline.json"
    result = cli("check", str(garbage), fixture("x86_64", "carveout_25"), "--write-baseline", str(baseline))
    assert result.code == 2 and not baseline.exists()
    assert f"emu: error: {baseline}: baseline not written: 1 object(s) could not be checked ({garbage})" in result.err
    both = cli("check", fixture("x86_64", "plain"), "--baseline", str(baseline), "--write-baseline", str(baseline))
    assert both.code == 2 and "not allowed with argument" in both.err


def test_the_api_takes_the_same_options(tmp_path):
    exports = _exports(tmp_path / "exports")
    baseline = tmp_path / "baseline.json"
    written = emu.check(exports, write_baseline=baseline)
    assert written.exit_code == 1 and len(json.loads(baseline.read_text())["findings"]) == 6
    again = emu.check([exports], baseline=baseline)
    assert again.exit_code == 0 and again.baseline.acknowledged == 6
    given = emu.check(exports / "x86_64" / "sm80_carveout_25.o", profile="h200")
    assert [l.returned_name for l in given.objects[0].loaders] == ["NO_KERNEL_IMAGE_FOR_DEVICE"] * 2
    with pytest.raises(BadInput, match="profile: 'h100' is not one of h200, a100, b200"):
        emu.check(exports, profile="h100")
    with pytest.raises(BadInput, match="give one"):
        emu.check(exports, baseline=baseline, write_baseline=baseline)
