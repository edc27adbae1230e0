"""Real-world exports launched by default with nothing beside them: no header, no `<prefix>.args.json`.

args_spec does not say which dynamic extents and strides each tensor's struct carries, nor (when the
mangled launch-function name is cut at 180 characters) which optional parameters were compiled as None;
emu reads both from the launch code (emu.dsl.launch.discovery). The launch must then be the one the header
path gives: the same arguments, struct layouts, launch configurations and wrapper result, on x86-64,
AArch64 and host-CPU (AVX) builds. Where the object cannot tell which of several Optional parameters
was compiled as None and every choice writes the same args[] (the name is cut before them, and the code
reads them alike), the launch is the same and the trace names the argument by every candidate,
`window_size_left|window_size_right`: that joint name must hold the header's name.
"""
from __future__ import annotations

import shutil

import pytest

from tests.oracles.recorder_lines import OBJECTS, ROOT, recorder_config

IDS = [entry["path"].removeprefix("tests/fixtures/realworld/") for entry in OBJECTS]
ENTRIES = ["module_load", "launch"]
# What the object cannot say without the header, so emu refuses naming it: a tensor (or an unannotated
# parameter) the launch code never reads before its first CUDA call and the mangled name, cut at 180
# characters, does not spell; Optional scalars whose choices launch differently.
UNREADABLE = {"h2_unused_tail": "the launch code did not read tensor aux2",
              "h3_many_unannotated": "parameter u has no annotation in args_spec and the launch code never reads it",
              # two of the three Optional scalars given: which (an Int64 and a Float64 both read as 8 bytes) the
              # name spells only as empty words, which emu does not align; the choices launch differently
              "h3_optional_scalars": "cannot tell which of the optional parameters a, b, c"}


def _launch(path: str):
    from emu.dsl.entries import EntrySpec
    from emu.run.session import run_object
    run = run_object(path, config=recorder_config(path), entries=[EntrySpec.model_validate(e) for e in ENTRIES])
    launch = run.entries[-1]
    assert launch.entry == "launch"
    calls = [(c.symbol, c.args, c.ret) for c in run.calls[launch.first_call:launch.end_call]]
    return launch, calls


@pytest.mark.parametrize("entry", OBJECTS, ids=IDS)
def test_default_launch_without_header_equals_the_header_path(entry, tmp_path):
    source = ROOT / entry["path"]
    with_header, alone = tmp_path / "with_header", tmp_path / "alone"
    for folder in (with_header, alone):
        folder.mkdir()
        shutil.copyfile(source, folder / source.name)
    shutil.copyfile(ROOT / entry["header"], with_header / (source.stem + ".h"))
    expected, expected_calls = _launch(str(with_header / source.name))
    assert expected.launch["signature"] == "header"
    if entry["prefix"] in UNREADABLE:
        from emu.run.session import EntryNotRun
        with pytest.raises(EntryNotRun) as refused:
            _launch(str(alone / source.name))
        assert refused.value.exit_code == 2 and UNREADABLE[entry["prefix"]] in refused.value.message
        return
    launch, calls = _launch(str(alone / source.name))
    assert launch.launch["signature"] in ("args_spec", "args_spec+code")
    for key in ("args", "layouts"):
        _same_by_position(launch.launch[key], expected.launch[key], key)
    assert (launch.returned, launch.fault) == (expected.returned, expected.fault)
    assert calls == expected_calls


def _same_by_position(emu: dict, header: dict, what: str) -> None:
    """Equal values in the same order, each name the header's or a joint name holding it."""
    assert len(emu) == len(header), (what, list(emu), list(header))
    for (name, value), (header_name, header_value) in zip(emu.items(), header.items()):
        assert header_name in name.split("|"), (what, name, header_name)
        assert value == header_value, (what, name)
