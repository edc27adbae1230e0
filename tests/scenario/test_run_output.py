"""`python -m emu run` takes folders as `check` does; its headers print descriptions whole; a stream prints one
way everywhere; the bundled scenarios cite only files that exist."""
from __future__ import annotations

import re

import pytest

import emu
from conftest import ROOT, fixture, run_cli
from emu.errors import ScenarioError

SEED = fixture("x86_64", "carveout_25")


def test_run_takes_a_folder_every_yaml_under_it_sorted(tmp_path):
    (tmp_path / "deep" / "er").mkdir(parents=True)
    for name in ("b.yaml", "a.yml", "deep/er/c.yaml"):
        (tmp_path / name).write_text(f"description: {name}\nobjects: [{SEED}]\n")
    (tmp_path / "notes.txt").write_text("not a scenario")
    result = run_cli("run", "--quiet", str(tmp_path))
    assert result.code == 0, result.err
    headers = [line for line in result.out.splitlines() if line.startswith("== ") and not line.startswith("== passed")]
    assert headers == [f"== {tmp_path / name}: {name}" for name in ("a.yml", "b.yaml", "deep/er/c.yaml")]
    assert [r.description for r in emu.run_scenarios(tmp_path)] == ["a.yml", "b.yaml", "deep/er/c.yaml"]


def test_a_folder_without_scenarios_is_bad_input(tmp_path):
    (tmp_path / "x.txt").write_text("")
    result = run_cli("run", str(tmp_path))
    assert result.code == 2 and result.out == ""
    assert result.err == f"emu: error: {tmp_path}: the directory holds no *.yaml or *.yml scenario files\n"
    with pytest.raises(ScenarioError, match="holds no"):
        emu.run_scenarios(tmp_path)


def test_a_header_prints_the_description_whole(tmp_path):
    description = ("The first sentence runs past the end of a line and goes on for quite a while, so that a header "
                   "cut at a fixed width would end mid-word. The second sentence is here too,\nand the third, after "
                   "a line break of the YAML block, ends the description.")
    path = tmp_path / "s.yaml"
    path.write_text("description: |\n" + "".join(f"  {line}\n" for line in description.splitlines()) + f"objects: [{SEED}]\n")
    out = run_cli("run", "--quiet", str(path)).out.splitlines()
    end = next(i for i, line in enumerate(out) if line.endswith("description."))
    header = out[:end + 1]
    assert header[0].startswith(f"== {path}: The first sentence") and all(line.startswith("   ") for line in header[1:])
    assert " ".join(line.strip() for line in header).endswith(" ".join(description.split()))
    assert all(len(line) <= max(110, len(f"== {path}: ") + 20) for line in header)


def test_a_stream_prints_one_way_in_the_launch_arguments_and_the_launch_call():
    out = run_cli("trace", SEED).out
    assert re.search(r"args \(header; ~ = default\): x~=\{data=0xd0000000\} stream~=0x5000$", out, re.M)
    assert "stream=0x5000 " in out and "20480" not in out


def test_the_bundled_scenarios_cite_files_that_exist():
    cited = {}
    for scenario in sorted((ROOT / "scenarios").glob("*.yaml")):
        for token in re.findall(r"[\w./-]*\w\.(?:c|txt|py|o|h|yaml|yml|json|md)\b", scenario.read_text()):
            if "/" in token:
                cited[(scenario.name, token)] = (scenario.parent / token).exists() or (ROOT / token).exists()
    assert ("seed_record_loader.yaml", "tests/data/seed/loader_calls.txt") in cited
    assert [where for where, exists in cited.items() if not exists] == []
