"""`python -m emu check`: loaders against kernel_info, the patched clean objects, directories, the versions table."""
from __future__ import annotations

import importlib.util

from conftest import DSL480, ROOT, fixture

from emu.loader_check import CheckResult

CARVEOUT = "9 PREFERRED_SHARED_MEMORY_CARVEOUT"
ROTATE = "kernel_cutlass_rotate_tensorptrf32gmemalign16o1281_0"
PATCHED = ROOT / "tests" / "data" / "check"


def _module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row_lines(out: str, *words: str) -> list[str]:
    return [line for line in out.splitlines() if all(w in line for w in words)]


def test_issue_3715_object_exits_1_naming_attribute_9_in_both_loaders(cli):
    result = cli("check", fixture("x86_64", "carveout_25"))
    assert result.code == 1, result.out + result.err
    assert len(_row_lines(result.out, ROTATE, CARVEOUT, " cuda_load ", "25", "missing", "-1", "MISSING")) == 1
    assert len(_row_lines(result.out, ROTATE, CARVEOUT, "cuda_load_to_device(device=0)", "missing", "MISSING")) == 1


def test_every_device_is_loaded_and_compared(cli):
    result = cli("check", "--devices", "3", "--json", fixture("aarch64", "carveout_75"))
    assert result.code == 1
    obj = CheckResult.model_validate(result.json()).objects[0]
    assert [(c.entry, c.device, c.expected, c.applied, c.state, c.status) for c in obj.checks] == [
        ("cuda_load", 0, 75, None, -1, "missing")] + [
        (f"cuda_load_to_device(device={d})", d, 75, None, -1, "missing") for d in range(3)]
    assert [[(s.attribute, s.value, s.device) for s in l.sets] for l in obj.loaders] == [
        [(8, 232448, d), (14, 1, d)] for d in (0, 0, 1, 2)]


def test_patched_objects_whose_loaders_apply_their_metadata_exit_0(cli):
    for name in ("applied_two_kernels_x86_64.o", "applied_carveout_25_aarch64.o"):
        result = cli("check", "--devices", "2", str(PATCHED / name))
        assert result.code == 0, result.out + result.err
        assert "MISSING" not in result.out and "DIFFERENT" not in result.out
    two = cli("check", "--json", str(PATCHED / "applied_two_kernels_x86_64.o")).json()["objects"][0]
    assert {(c["attribute"], c["expected"], c["status"]) for c in two["checks"]} == {(8, 232448, "ok"), (14, 1, "ok")}


def test_a_different_value_is_reported_as_different(cli, tmp_path):
    patch = _module(PATCHED / "make_patched.py", "make_patched")
    out = tmp_path / "asks_more.o"
    out.write_bytes(patch.patched_bytes(PATCHED.parents[2] / "tests/fixtures/cutlass-dsl-4.8.0/x86_64/carveout_25.o",
                                        {ROTATE: {"14": 2}}))
    obj = cli("check", "--json", str(out)).json()["objects"][0]
    assert [(c["expected"], c["applied"], c["status"]) for c in obj["checks"]] == [(2, 1, "different"), (2, 1, "different")]


def test_committed_patched_objects_are_what_make_patched_makes():
    patch = _module(PATCHED / "make_patched.py", "make_patched")
    for name, (source, kernel_info) in patch.PATCHES.items():
        assert patch.patched_bytes(patch.FIXTURES / source, kernel_info) == (PATCHED / name).read_bytes(), name


def test_directory_run_summarises_and_shows_progress(cli):
    result = cli("check", str(DSL480))
    assert result.code == 1
    objects = sorted(DSL480.rglob("*.o"))
    assert f"check: [{len(objects)}/{len(objects)}]" in result.err
    assert f"{len(objects)} objects, " in result.out
    assert _row_lines(result.out, "x86_64/carveout_25.o", "x86_64", "1", "2", "9 missing x2")
    assert _row_lines(result.out, "aarch64/mixed.o", "aarch64", "2", "4", "9 missing x4")
    assert _row_lines(result.out, "x86_64/plain.o", "x86_64", "1", "0")
    assert "MISSING" not in result.out           # the directory view is the summary table


def test_directory_json_is_the_full_result(cli):
    result = cli("check", "--json", str(DSL480))
    data = CheckResult.model_validate(result.json())
    assert data.exit_code == 1 and len(data.objects) == len(list(DSL480.rglob("*.o")))
    clean = {o.object.rsplit("/", 2)[-1] for o in data.objects if o.exit_code == 0}
    assert {"plain.o", "pdl.o", "cooperative.o", "two_kernels.o", "smem_4096.o"} <= clean
    assert all(c.attribute == 9 and c.status == "missing" for o in data.objects for c in o.checks)


def test_bad_input_exits_2(cli, tmp_path):
    garbage = tmp_path / "garbage.o"
    garbage.write_bytes(b"\x7fELF nonsense")
    result = cli("check", str(garbage), fixture("x86_64", "plain"))
    assert result.code == 2 and result.err.startswith(f"emu: error: {garbage}: ")
    assert cli("check", str(tmp_path / "absent.o")).code == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("check", str(empty)).code == 2


def test_versions_table_is_current():
    table = _module(ROOT / "tests" / "fixtures" / "version_table.py", "version_table")
    assert table.render() == (ROOT / "docs" / "versions.md").read_text(), \
        "docs/versions.md is stale: run python tests/fixtures/version_table.py"
