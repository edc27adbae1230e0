"""A scenario's `matrix:` expands into one variant per combination; `${axis}` takes each value."""
from __future__ import annotations

import textwrap

import pytest

from conftest import ROOT, run_cli
from emu.errors import ScenarioError
from emu.scenario.load import load_scenario, load_scenarios
from emu.scenario.runner import run_scenario

X86 = ROOT / "tests/fixtures/cutlass-dsl-4.8.0/x86_64"


def write(tmp_path, text: str) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)


MATRIX = f"""\
    matrix:
      devices: [1, 3]
      kernel: [{{file: carveout_25.o, carveout: 25}}, {{file: carveout_75.o, carveout: 75}}]
    objects: ["{X86}/${{kernel.file}}"]
    runtime: {{device_count: "${{devices}}"}}
    entries: [module_load]
    expect:
      calls_any_order:
        - {{symbol: _cudaKernelSetAttributeForDevice, args: {{attr: 14, value: 1, device: 0}}}}
      no_calls:
        - {{symbol: _cudaKernelSetAttributeForDevice, args: {{device: "${{devices}}"}}}}
      returns: {{mlir_cuda_init: 0, mlir_cuda_load_to_device: 0}}
"""


def test_axes_expand_into_every_combination_with_readable_ids(tmp_path):
    variants = load_scenarios(write(tmp_path, MATRIX))
    assert [v.variant.id for v in variants] == [
        "devices=1-kernel=carveout_25.o-25", "devices=1-kernel=carveout_75.o-75",
        "devices=3-kernel=carveout_25.o-25", "devices=3-kernel=carveout_75.o-75"]
    # a whole-string reference keeps the value's type; a reference inside a string becomes text
    assert [v.scenario.runtime.device_count for v in variants] == [1, 1, 3, 3]
    assert [v.object_paths[0].rsplit("/", 1)[1] for v in variants] == ["carveout_25.o", "carveout_75.o"] * 2
    assert variants[2].scenario.expect.no_calls[0].args == {"device": 3}


def test_each_variant_runs_with_its_own_values(tmp_path):
    results = [run_scenario(loaded) for loaded in load_scenarios(write(tmp_path, MATRIX))]
    assert all(result.passed for result in results), [r.results for r in results if not r.passed]
    loads = [sum(1 for e in result.runs[0].entries if e.entry == "mlir_cuda_load_to_device") for result in results]
    assert loads == [1, 1, 3, 3]
    assert [result.variant for result in results][0] == "devices=1-kernel=carveout_25.o-25"


def test_cli_runs_every_variant(tmp_path):
    result = run_cli("run", "--json", write(tmp_path, MATRIX))
    assert result.code == 0, result.err
    assert [s["variant"] for s in result.json()["scenarios"]][-1] == "devices=3-kernel=carveout_75.o-75"


def test_an_expectation_failing_in_one_variant_fails_only_that_variant(tmp_path):
    text = MATRIX.replace("args: {attr: 14, value: 1, device: 0}", "args: {attr: 14, value: 1, device: 2}")
    results = [run_scenario(loaded) for loaded in load_scenarios(write(tmp_path, text))]
    assert [r.passed for r in results] == [False, False, True, True]


@pytest.mark.parametrize("text, expected", [
    ("matrix: {a: [1]}\nobjects: [x.o]\nruntime: {device_count: '${b}'}\n",
     "line 3: field runtime.device_count: ${b} names no matrix axis (axes: a)"),
    ("matrix: {a: []}\nobjects: [x.o]\n", "line 1: field matrix.a: an axis is a non-empty list of values"),
    ("matrix: [1, 2]\nobjects: [x.o]\n", "line 1: field matrix: a matrix is a mapping from axis name to a list of values"),
    ("matrix: {a: [{x: 1}]}\nobjects: ['${a.y}.o']\n", "field objects.0: ${a.y}: the value of axis a has no key 'y'"),
    ("objects: ['${a}.o']\n", "${a} names no matrix axis (axes: none: the scenario has no matrix)"),
])
def test_bad_matrices_and_references_name_the_line_and_field(tmp_path, text, expected):
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as error:
        load_scenarios(path)
    assert str(error.value).startswith(path) and expected in str(error.value)


def test_a_variant_error_names_the_variant(tmp_path):
    path = write(tmp_path, f"matrix: {{n: [1, -1]}}\nobjects: ['{X86}/carveout_25.o']\nruntime: {{device_count: '${{n}}'}}\n")
    with pytest.raises(ScenarioError) as error:
        load_scenarios(path)
    assert str(error.value).startswith(f"{path}[n=-1]: line 3: field runtime.device_count")


def test_load_scenario_refuses_a_matrix_of_several_variants(tmp_path):
    with pytest.raises(ScenarioError, match="makes 4 variants"):
        load_scenario(write(tmp_path, MATRIX))


pytest_plugins = ["pytester"]


def test_pytest_collects_one_item_per_variant_and_object(pytester):
    scenarios = pytester.mkdir("scenarios")
    (scenarios / "m.yaml").write_text(textwrap.dedent(MATRIX))
    result = pytester.runpytest_inprocess("--collect-only", "-q", "-p", "no:cacheprovider", str(scenarios))
    ids = [line for line in result.outlines if "::" in line]
    assert ids == [f"scenarios/m.yaml::x86_64/{name}[devices={n}-kernel={name}-{c}]"
                   for n in (1, 3) for name, c in (("carveout_25.o", 25), ("carveout_75.o", 75))]
