"""Launch arguments: given by name (scenario, --arg, --args, <prefix>.args.json) or defaulted, written with
the header's layout or, without the header, with the layout args_spec and the given values imply.

`tests/data/export/launch/` holds real exports (built by its build.py with nvidia-cutlass-dsl 4.8.0): `add` launches
grid ((M // 128) // alpha, N, 1) from tensor `a`'s dynamic extents M, N and the scalar alpha, with three
differently laid-out tensor structs; `opt` has an Optional tensor compiled as None, an Int32 whose
Python default is 3, and launches grid (M // factor, 1, 1); `tiled` takes a cute.Shape of three Int32 and
launches grid (M // tile[0], tile[1], tile[2]).  The grids below are those formulas, the
kernel author's own, evaluated on the arguments given.
"""
import json
import shutil
from pathlib import Path

import pytest

from emu.dsl.entries import EntrySpec, loaders_for_devices
from emu.dsl.header.parse import parse_header
from emu.abi.ciface import pack_arguments
from emu.dsl.launch.arguments import default_extent, resolve
from emu.dsl.launch.signature import from_header
from emu.run.session import EntryNotRun, run_object

DATA = Path(__file__).parents[1] / "data" / "export"
ARCHS = ("x86_64", "aarch64")
RAW = {"a": {"dynamic_shapes": [1024, 96], "dynamic_strides": [96]},
       "b": {"dynamic_shapes": [1024], "dynamic_strides": [1024]},
       "c": {"dynamic_shapes": [1024, 96], "dynamic_strides": [96]}}


def export(arch: str, name: str) -> str:
    return str(DATA / "launch" / arch / f"{name}.o")


def alone(path: str, tmp_path: Path) -> str:
    """The object without its header beside it."""
    target = tmp_path / Path(path).name
    shutil.copyfile(path, target)
    return str(target)


def launch(path: str, args=None):
    run = run_object(path, entries=[*loaders_for_devices(1), EntrySpec(name="launch", args=args)])
    entry = run.entries[-1]
    configs = [c.args["config"] for c in run.calls if c.symbol == "_cudaLaunchKernelEx"]
    return entry, configs


def refused(path: str, args=None) -> EntryNotRun:
    """The launch could not be built: the error, which keeps the loaders' trace."""
    with pytest.raises(EntryNotRun) as info:
        run_object(path, entries=[*loaders_for_devices(1), EntrySpec(name="launch", args=args)])
    assert [e.entry for e in info.value.run.entries] == ["cuda_init", "cuda_load", "cuda_load_to_device"]
    assert all(e.returned == 0 for e in info.value.run.entries)
    return info.value


def grid(configs) -> list[list[int]]:
    return [c["gridDim"] for c in configs]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("given, expected", [
    (RAW, [8, 96, 1]),                                      # alpha defaults to 1
    ({**RAW, "alpha": 2}, [4, 96, 1]),
    ({**RAW, "a": {"dynamic_shapes": [4096, 8], "dynamic_strides": [8], "data": 0x10000}, "alpha": 4}, [8, 8, 1]),
])
def test_grid_follows_the_arguments_with_and_without_the_header(arch, given, expected, tmp_path):
    with_header, configs = launch(export(arch, "add"), given)
    assert with_header.fault is None and with_header.returned == 0
    assert grid(configs) == [expected]
    without, configs_alone = launch(alone(export(arch, "add"), tmp_path), given)
    assert without.fault is None and grid(configs_alone) == [expected]
    assert configs_alone == configs
    assert without.launch["args"] == with_header.launch["args"]
    assert without.launch["layouts"] == with_header.launch["layouts"] == {
        "a": "{void *data; int32_t dynamic_shapes[2]; int64_t dynamic_strides[1]}",
        "b": "{void *data; int32_t dynamic_shapes[1]; int32_t dynamic_strides[1]}",      # use_32bit_stride
        "c": "{void *data; int32_t dynamic_shapes[2]; int64_t dynamic_strides[1]}"}
    assert (with_header.launch["signature"], without.launch["signature"]) == ("header", "args_spec")


@pytest.mark.parametrize("arch", ARCHS)
def test_friendly_form_picks_the_dynamic_modes_with_or_without_the_header(arch, tmp_path):
    """Without the header the struct comes from the launch code's loads (emu.dsl.launch.discovery), so the
    friendly form's dynamic modes are picked the same way."""
    given = {**RAW, "a": {"shape": [4096, 8], "stride": [8, 1], "data": 0x10000}, "alpha": 4}
    for path in (export(arch, "add"), alone(export(arch, "add"), tmp_path)):
        entry, configs = launch(path, given)
        assert entry.fault is None and grid(configs) == [[8, 8, 1]]
        assert entry.launch["args"]["a"] == {"data": 0x10000, "dynamic_shapes": [4096, 8], "dynamic_strides": [8]}


@pytest.mark.parametrize("arch", ARCHS)
def test_optional_none_is_left_out_and_python_defaults_apply(arch, tmp_path):
    entry, configs = launch(export(arch, "opt"), {"bias": None})          # null: the argument is left out
    assert entry.fault is None and list(entry.launch["args"]) == ["x", "factor", "stream"]
    assert entry.launch["args"]["factor"] == 3 and grid(configs) == [[entry.launch["args"]["x"]["dynamic_shapes"][0] // 3, 1, 1]]
    without, configs_alone = launch(alone(export(arch, "opt"), tmp_path), {"x": {"dynamic_shapes": [600]}, "bias": None})
    assert without.fault is None and list(without.launch["args"]) == ["x", "factor", "stream"]
    assert grid(configs_alone) == [[200, 1, 1]]


def test_defaults_are_positive_and_honour_every_declared_divisibility():
    for name in ("cutlass_add_FakeTensorFloat32div16div8i64div81_FakeTensorFloat16div16641div16",
                 "x_FakeTensorFloat16_div1_div8_i64_div8_1_div256", "FakeTensorFloat32div3", ""):
        extent = default_extent(name)
        assert extent >= 128 and extent % 128 == 0
        assert all(extent % d == 0 for d in (16, 8) if f"div{d}" in name)
    assert default_extent("FakeTensorFloat32div16641div16") == 128            # 16641 is read as 16, then 64, 1
    assert default_extent("FakeTensor_div1024_") == 1024


@pytest.mark.parametrize("path", sorted(str(p) for p in (DATA / "launch").glob("*/*.o"))
                         + sorted(str(p) for p in Path(__file__).resolve().parents[1].glob("fixtures/cutlass-dsl-4.8.*/*/*.o")
                                  if "sm100a" not in p.name and "sm80" not in p.name))     # H200: sm_90a binaries only
def test_default_launch_runs_and_no_grid_dimension_is_zero(path):
    entry, configs = launch(path)
    assert entry.fault is None and entry.returned == 0 and configs
    assert all(all(d > 0 for d in c["gridDim"] + c["blockDim"]) for c in configs)
    for value in entry.launch["args"].values():
        if isinstance(value, dict):
            assert all(v > 0 for v in value.get("dynamic_shapes", []) + value.get("dynamic_strides", []))


def test_header_of_another_export_is_refused_but_the_loaders_still_run(tmp_path):
    target = tmp_path / "add.o"
    shutil.copyfile(export("x86_64", "add"), target)
    shutil.copyfile(DATA / "launch" / "x86_64" / "opt.h", tmp_path / "add.h")
    error = refused(str(target))
    assert "the header is not this object's" in error.message and error.exit_code == 2


@pytest.mark.parametrize("arch", ARCHS)
def test_without_header_or_arguments_the_structs_are_read_from_the_launch_code(arch, tmp_path, cli):
    """`b` is compiled with use_32bit_stride: its struct is `{data; int32 shapes[1]; int32 strides[1]}`,
    which the loads alone would read as two int32 extents; the mangled name's part decides."""
    with_header = json.loads(cli("trace", export(arch, "add"), "--json").out)[0]
    result = cli("trace", alone(export(arch, "add"), tmp_path), "--json")
    assert result.code == 0, result.err
    without = json.loads(result.out)[0]
    assert without["entries"][-1]["launch"]["signature"] == "args_spec+code"
    for key in ("layouts", "args"):
        assert without["entries"][-1]["launch"][key] == with_header["entries"][-1]["launch"][key]
    assert without["calls"][-1]["args"]["config"] == with_header["calls"][-1]["args"]["config"]
    assert "args (args_spec+code; ~ = default)" in cli("trace", alone(export(arch, "add"), tmp_path)).out


def test_cli_arg_args_file_and_args_json_beside_the_object(tmp_path, cli):
    obj = tmp_path / "add.o"
    shutil.copyfile(export("x86_64", "add"), obj)
    shutil.copyfile(DATA / "launch" / "x86_64" / "add.h", tmp_path / "add.h")
    (tmp_path / "add.args.json").write_text(json.dumps({"args": {**RAW, "alpha": 2}}))
    beside = json.loads(cli("trace", str(obj), "--json").out)[0]
    assert beside["entries"][-1]["launch"]["args_file"] == "add.args.json"
    assert beside["calls"][-1]["args"]["config"]["gridDim"] == [4, 96, 1]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"args": {"alpha": 8}}))
    result = cli("trace", str(obj), "--json", "--args", str(other), "--arg", "stream=4660")
    run = json.loads(result.out)[0]
    assert run["calls"][-1]["args"]["config"]["gridDim"] == [1, 96, 1]
    assert run["calls"][-1]["args"]["config"]["stream"] == 4660
    assert sorted(run["entries"][-1]["launch"]["given"]) == ["a", "alpha", "b", "c", "stream"]
    human = cli("trace", str(obj), "--arg", "alpha=8").out
    assert "args (header, add.args.json; ~ = default): a={data=0xd0000000 dynamic_shapes=[1024,96]" in human


@pytest.mark.parametrize("argv, message", [
    (["--arg", "nosuch=1"], "nosuch name no parameter of the wrapper (it takes a, b, c, alpha, stream)"),
    (["--arg", "alpha=1.5"], "alpha is int32_t: give an integer"),
    (["--arg", "alpha=4294967296"], "does not fit in 32 bits"),
    (["--arg", "a={\"dynamic_shapes\": [1]}"], "a.dynamic_shapes has 2 element(s) in this export"),
    (["--arg", "a={\"shape\": [1, 2, 3]}"], "which ones are dynamic is not recorded"),
    (["--arg", "alpha"], "expected NAME=VALUE"),
    (["--arg", "alpha=x"], "is not JSON"),
    (["--args", "/nonexistent.json"], "cannot read launch arguments"),
])
def test_bad_arguments_exit_2_naming_what_is_wrong(argv, message, cli):
    result = cli("trace", export("x86_64", "add"), *argv)
    assert result.code == 2 and message in result.err, result.err
    assert "Traceback" not in result.err


def test_scenario_launch_args(tmp_path, cli):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"objects: [{export('aarch64', 'add')}]\n"
        "entries:\n  - launch:\n      args:\n        alpha: 2\n"
        "        a: {dynamic_shapes: [2048, 3], dynamic_strides: [3]}\n"
        "expect:\n  calls_in_order:\n    - {symbol: _cudaLaunchKernelEx, args: {config: {gridDim: [8, 3, 1]}}}\n")
    result = cli("run", str(scenario))
    assert result.code == 0, result.out + result.err
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"objects: [{export('aarch64', 'add')}]\nentries:\n  - cuda_load: {{args: {{alpha: 2}}}}\n")
    result = cli("run", str(bad))
    assert result.code == 2 and "takes no args" in result.err


class _Host:
    """Records what pack_arguments writes, at made-up addresses."""

    def __init__(self):
        self.blocks, self.cursor = {}, 0x1000

    def alloc(self, data: bytes) -> int:
        address, self.cursor = self.cursor, self.cursor + (len(data) + 15) // 16 * 16 + 16
        self.blocks[address] = data
        return address


def test_every_parameter_kind_is_packed_as_the_header_passes_it():
    signature = from_header(parse_header((DATA / "rich.h").read_text(), "rich.h"), "rich.h")
    values = resolve(signature, {"shape": [5, 6], "alpha": 0.5, "h": 1.5, "bf": 2.0, "flag": 255, "n": -3}, 128)
    host = _Host()
    pointers = pack_arguments(signature, values, host, ret_slot=0xBEEF)
    assert len(pointers) == 16 and pointers[-1] == 0xBEEF
    xs = pointers[2]
    assert pointers[3:5] == [xs + 32, xs + 64]                 # &xs->elements[i]: 32-byte tensor structs
    assert int.from_bytes(host.blocks[xs][96:100], "little") == 3          # count after the elements
    assert host.blocks[pointers[11]] == (5).to_bytes(4, "little") + (6).to_bytes(4, "little")
    assert pointers[12] == pointers[11] + 4                    # &shape[1]
    a = host.blocks[pointers[0]]
    assert len(a) == 48 and int.from_bytes(a[8:16], "little") == 128     # int64_t extents
    assert host.blocks[pointers[7]][:2] == bytes.fromhex("003e")          # __half_raw 1.5
    assert host.blocks[pointers[8]][:2] == bytes.fromhex("0040")          # bfloat16 2.0
    assert host.blocks[pointers[6]][0] == 255 and host.blocks[pointers[10]][:8] == (-3).to_bytes(8, "little", signed=True)


@pytest.mark.parametrize("edit, message", [
    (("int32_t alpha", "float alpha"), "parameter alpha is float in add.h but args_spec annotates it cutlass.base_dsl.typing.Int32"),
    (("add_Tensor_b_t *b, add_Tensor_c_t *c", "add_Tensor_c_t *c, add_Tensor_b_t *b"), "passes its parameters in the order a, c, b"),
    (("int32_t alpha, ", "int32_t beta, "), "passes beta, which the object's args_spec does not declare"),
])
def test_a_header_that_disagrees_with_args_spec_is_refused(edit, message, tmp_path):
    shutil.copyfile(export("x86_64", "add"), tmp_path / "add.o")
    header = (DATA / "launch" / "x86_64" / "add.h").read_text()
    assert edit[0] in header
    header = header.replace(*edit)
    if edit[1].startswith("int32_t beta"):
        header = header.replace("&alpha", "&beta")
    (tmp_path / "add.h").write_text(header)
    assert message in refused(str(tmp_path / "add.o")).message


def test_a_fake_tensor_with_no_dynamic_mode_needs_no_arguments_without_the_header(tmp_path):
    """`FakeTensorFloat321281` (shape 128, stride 1) spells no `div`: the tensor is passed as `{void *data}`."""
    seed = Path(__file__).resolve().parents[1] / "fixtures" / "cutlass-dsl-4.8.0" / "x86_64" / "carveout_25.o"
    with_header, configs = launch(str(seed))
    without, configs_alone = launch(alone(str(seed), tmp_path))
    assert without.fault is None and configs_alone == configs
    assert without.launch["layouts"] == with_header.launch["layouts"] == {"x": "{void *data}"}


def test_optional_parameters_that_cannot_be_told_apart_without_the_header_are_named(tmp_path, cli):
    """Hopper FMHA has two optional Int32 parameters, one compiled as None, and a launch-function name cut
    before them: the launch code reads one int32 either way, so the launch is the same whichever it was,
    and the trace names the argument `window_size_left|window_size_right`; given by name, it is decided.
    quack's RMSNorm (six optional tensors, three None, name cut short) is told apart by the name's words and
    the slots the code reads."""
    from conftest import ROOT
    alone = tmp_path / "hopper_fmha.o"
    alone.write_bytes((ROOT / "tests/fixtures/realworld/x86_64/hopper_fmha.o").read_bytes())
    result = cli("trace", str(alone), "--json")
    assert result.code == 0, result.err
    args = json.loads(result.out)[0]["entries"][-1]["launch"]["args"]
    assert list(args)[-2:] == ["window_size_left|window_size_right", "stream"]
    decided = json.loads(cli("trace", str(alone), "--json", "--arg", "window_size_left=null").out)[0]
    assert list(decided["entries"][-1]["launch"]["args"])[-2:] == ["window_size_right", "stream"]
    given = json.loads(cli("trace", str(alone), "--json", "--arg", "window_size_left=3").out)[0]["entries"][-1]["launch"]
    assert list(given["args"])[-2:] == ["window_size_left", "stream"] and given["args"]["window_size_left"] == 3
    rmsnorm = tmp_path / "quack_rmsnorm.o"
    rmsnorm.write_bytes((ROOT / "tests/fixtures/realworld/x86_64/quack_rmsnorm.o").read_bytes())
    traced = cli("trace", str(rmsnorm), "--json")
    assert traced.code == 0, traced.err
    assert list(json.loads(traced.out)[0]["entries"][-1]["launch"]["args"]) == ["mX", "mW", "mO", "mRstd", "eps", "stream"]


@pytest.mark.parametrize("arch", ARCHS)
def test_a_shape_parameter_without_the_header_takes_the_slots_the_code_reads(arch, tmp_path):
    """`tiled` passes a cute.Shape of three Int32 as three args[] slots; args_spec only says `Shape`, so
    without the header the element count is the slots the launch code reads that the others do not."""
    given = {"x": {"dynamic_shapes": [4096]}, "tile": [4, 2, 3]}
    for path in (export(arch, "tiled"), alone(export(arch, "tiled"), tmp_path)):
        entry, configs = launch(path, given)
        assert entry.fault is None and grid(configs) == [[1024, 2, 3]]
        defaults, default_configs = launch(path)
        assert defaults.launch["args"]["tile"] == [128, 128, 128] and grid(default_configs) == [[1, 128, 128]]
    assert defaults.launch["signature"] == "args_spec+code"
