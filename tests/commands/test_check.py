"""`python -m emu check`: loaders against kernel_info, the patched clean objects, directories, the versions table."""
from __future__ import annotations

import importlib.util

import pytest

from conftest import DSL480, ROOT, fixture

from emu.commands.check import CheckResult

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


def _summary_rows(out: str) -> dict[str, list[str]]:
    """The directory table: object path (from the fixture version on) -> [arch, profile, kernels, discrepancies, details...]."""
    rows = {}
    for line in out.splitlines():
        cells = line.split()
        if cells and cells[0].endswith(".o"):
            rows[cells[0][cells[0].index("cutlass-dsl-"):]] = cells[1:]
    return rows


def test_directory_run_summarises_and_shows_progress(cli):
    result = cli("check", str(DSL480))
    assert result.code == 1
    objects = sorted(DSL480.rglob("*.o"))
    assert f"check: [{len(objects)}/{len(objects)}]" in result.err
    # carveouts are never applied (#3715); sm_80 and sm_100a exports run on the a100 and b200 profiles
    with_findings = sum(1 for o in objects if "carveout" in o.stem or o.stem == "mixed")
    assert f"{len(objects)} objects, {with_findings} with new findings or errors" in result.out
    rows = _summary_rows(result.out)
    assert len(rows) == len(objects)
    assert rows["cutlass-dsl-4.8.0/x86_64/carveout_25.o"] == ["x86_64", "h200", "1", "2", "9", "missing", "x2"]
    assert rows["cutlass-dsl-4.8.0/aarch64/mixed.o"] == ["aarch64", "h200", "2", "4", "9", "missing", "x4"]
    assert rows["cutlass-dsl-4.8.0/x86_64/plain.o"] == ["x86_64", "h200", "1", "0"]
    assert rows["cutlass-dsl-4.8.0/x86_64/sm100a_cluster_2x1x1.o"] == ["x86_64", "b200", "1", "0"]
    assert rows["cutlass-dsl-4.8.0/aarch64/sm80_carveout_25.o"] == ["aarch64", "a100", "1", "2", "9", "missing", "x2"]
    assert "MISSING" not in result.out           # the directory view is the summary table, then the findings
    assert "finding attribute-" in result.out and "209" not in result.out


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


@pytest.mark.parametrize("text, why", [
    (b'{"kernel_cutlass_rotate_tensorptrf32gmemalign16o1281_0": {"9": 25', "Expecting ',' delimiter"),
    (b"[9, 25]", "not a JSON object"),
    (b'{"kernel_cutlass_rotate": {"nine": 25}}', "invalid literal for int()"),
    (b'{"kernel_cutlass_rotate_tensorptrf32gmemalign16o1281_0": [9, 25]}', "has no attribute 'items'"),
    (b'{"kernel_cutlass_rotate": {"9": "25"}}', 'attribute value "25" is not an integer'),
    (b'{"kernel_cutlass_rotate": {"9": 1e400}}', "attribute value Infinity is not an integer"),   # was exit 4
    (b"\xff\xfe", "Expecting value"),
])
def test_malformed_kernel_info_is_an_unchecked_finding_naming_the_symbol(cli, tmp_path, text, why):
    """kernel_info that is not {kernel: {attribute: integer}} is never clean: exit 1 with a finding that says what
    could not be checked (the symbol and the reason), no attribute rows, and no loader discrepancy."""
    patch = _module(PATCHED / "make_patched.py", "make_patched")
    source = PATCHED.parents[2] / "tests/fixtures/cutlass-dsl-4.8.0/x86_64/carveout_25.o"
    size = len('{"kernel_cutlass_rotate_tensorptrf32gmemalign16o1281_0": {"9": 25}}') + 1
    bad = tmp_path / "bad_kernel_info.o"
    bad.write_bytes(patch.replace_symbol(source, "carveout_25_kernel_info", text.ljust(size - 1) + b"\0"))
    result = cli("check", str(bad))
    assert result.code == 1, result.out + result.err
    assert result.err == "" and "clean" not in result.out and "MISSING" not in result.out
    assert "1 finding(s)" in result.out.splitlines()[0]
    assert "  not checked: carveout_25_kernel_info is not the expected JSON" in result.out and why in result.out
    data = cli("check", "--json", str(bad)).json()["objects"][0]
    assert data["exit_code"] == 1 and data["checks"] == [] and data["discrepancies"] == 0
    assert data["metadata"] == "unreadable" and why in data["unchecked"]
    (finding,) = data["findings"]
    assert finding["kind"] == "unchecked" and why in finding["description"]
