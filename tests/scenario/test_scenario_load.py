"""Scenario files: validation errors name the file, the line and the field."""
from __future__ import annotations

import textwrap

import pytest

from emu.errors import ScenarioError
from emu.scenario.load import load_scenario

OBJECT = "../../tests/fixtures/cutlass-dsl-4.8.0/x86_64/carveout_25.o"


def write(tmp_path, text: str) -> str:
    folder = tmp_path / "a" / "b"
    folder.mkdir(parents=True, exist_ok=True)
    (tmp_path / "tests").symlink_to(__import__("conftest").ROOT / "tests")
    path = folder / "s.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)


def error_of(tmp_path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    message = str(error.value)
    assert message.startswith(path)
    return message


def test_a_valid_scenario_loads(tmp_path):
    loaded = load_scenario(write(tmp_path, f"objects: [{OBJECT}]\n"))
    assert loaded.object_paths[0].endswith("carveout_25.o")
    assert [e.name for e in loaded.scenario.entries] == ["cuda_init", "cuda_load", "cuda_load_to_device"]


def test_unknown_key_names_line_and_field(tmp_path):
    message = error_of(tmp_path, f"""\
        objects: [{OBJECT}]
        runtime:
          device_count: 2
          devcie: 1
        """)
    assert "line 4" in message and "runtime.devcie" in message and "Extra inputs are not permitted" in message


def test_bad_enum_name_in_runtime(tmp_path):
    message = error_of(tmp_path, f"""\
        objects: [{OBJECT}]
        runtime:
          device_attributes: {{NOT_AN_ATTRIBUTE: 3}}
        """)
    assert "line 3" in message and "device_attributes" in message and "NOT_AN_ATTRIBUTE" in message


def test_unknown_argument_name_in_a_call_pattern(tmp_path):
    message = error_of(tmp_path, f"""\
        objects: [{OBJECT}]
        expect:
          calls_in_order:
            - symbol: _cudaFuncSetAttribute
              args: {{attribute: 9}}
        """)
    assert "line 5" in message and "has no parameter 'attribute'" in message and "func, attr, value" in message


def test_missing_object(tmp_path):
    message = error_of(tmp_path, "objects: [nowhere.o]\n")
    assert "line 1" in message and "nowhere.o not found" in message


def test_not_yaml_and_not_a_mapping(tmp_path):
    assert "not valid YAML (line 2, column 1)" in error_of(tmp_path, "objects: [unclosed\n")
    assert "must be a YAML mapping" in error_of(tmp_path / "x", "- just\n- a list\n")


def test_device_argument_only_where_taken(tmp_path):
    message = error_of(tmp_path, f"""\
        objects: [{OBJECT}]
        entries:
          - cuda_load: {{device: 1}}
        """)
    assert "line 3" in message and "takes no device argument" in message
