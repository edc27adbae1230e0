"""`python -m emu inspect`: the static description of an export, and that args_spec is never unpickled."""
from __future__ import annotations

import base64
import json
import importlib.util
import inspect as pyinspect
import os
import pickle
import pickletools
import shutil
import subprocess
import tempfile
import sys
from pathlib import Path

import pytest
from conftest import ROOT, fixture

from emu.commands.inspect import InspectResult

ROTATE = "kernel_cutlass_rotate_tensorptrf32gmemalign16o1281_0"


def make_patched():
    """tests/data/check/make_patched.py as a module (it patches symbol bytes of a fixture copy)."""
    spec = importlib.util.spec_from_file_location("make_patched", ROOT / "tests" / "data" / "check" / "make_patched.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_text_names_everything_the_export_holds(cli):
    result = cli("inspect", fixture("x86_64", "mixed"))
    assert result.code == 0, result.err
    out = result.out
    assert "(x86_64, prefix mixed)" in out and "version: 1.1" in out
    assert "mixed_cuda_load_to_device" in out and "_mlir_mixed__mlir_ciface_cutlass_launch_" in out
    assert f"{ROTATE}: 9 PREFERRED_SHARED_MEMORY_CARVEOUT=40" in out
    assert "x: cutlass.cute.typing.Tensor [POSITIONAL_OR_KEYWORD]" in out
    assert "stream: cuda.bindings.driver.CUstream" in out
    assert "GPU binary: kernels_binary" in out and "elf sm_90a" in out
    assert "_cudaFuncSetAttribute" in out and "cudaFuncSetAttribute(const void *func" in out


def test_json_shape(cli):
    result = cli("inspect", "--json", fixture("aarch64", "two_kernels_carveout_50"))
    assert result.code == 0, result.err
    data = InspectResult.model_validate(result.json())
    assert data.arch == "aarch64" and data.prefix == "two_kernels_carveout_50"
    assert all(p.present for p in data.entry_points)
    assert [k.kernel.split("_")[2] for k in data.kernels] == ["rotate", "negate"]
    assert all([(a.attribute, a.name, a.value) for a in k.attributes] == [(9, "PREFERRED_SHARED_MEMORY_CARVEOUT", 50)]
               for k in data.kernels)
    assert [p.name for p in data.signature.parameters] == ["x", "stream"]
    assert data.binary.fatbin.entries[0].sm_arch == "sm_90a" and 0 < data.binary.fatbin.size <= data.binary.size
    undefined = {u.symbol: u.handled_by for u in data.undefined}
    assert undefined["_cudaLibraryLoadData"] == "stub" and undefined["_cudaKernelSetAttributeForDevice"] == "stub"
    assert "none" not in undefined.values()


def test_version_453_and_sm100a(cli):
    old = cli("inspect", "--json", fixture("native", "plain", "4.5.3")).json()
    assert old["kernels"] == [{"kernel": ROTATE, "in_kernel_info": True, "attributes": []}]
    assert {u["symbol"]: u["handled_by"] for u in old["undefined"]}["_GLOBAL_OFFSET_TABLE_"] == "emu"
    new = cli("inspect", "--json", fixture("x86_64", "sm100a_carveout_25")).json()
    assert new["binary"]["fatbin"]["entries"][0]["sm_arch"] == "sm_100a"


def test_bad_input_exits_2(cli, tmp_path):
    garbage = tmp_path / "garbage.o"
    garbage.write_bytes(b"not an object")
    for path in (str(garbage), str(tmp_path / "absent.o"), str(ROOT / "tests" / "data" / "aarch64" / "range.o")):
        result = cli("inspect", path)
        assert result.code == 2 and result.err.startswith("emu: error: ") and "Traceback" not in result.err, path


class _Touch:
    """Unpickling this runs `open(path, "w")`: the file appearing means code ran."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _hostile_copy(tmp_path: Path, payload: object, name: str) -> Path:
    source = Path(fixture("x86_64", "carveout_25"))
    size = 393   # carveout_25_args_spec
    text = base64.b64encode(pickletools.optimize(pickle.dumps(payload, protocol=2)))
    assert len(text) < size, len(text)
    out = tmp_path / f"{name}.o"
    out.write_bytes(make_patched().replace_symbol(source, "carveout_25_args_spec", text.ljust(size, b"\0")))
    return out


@pytest.fixture
def marker():
    """A short path (the payload must fit in the 393-byte args_spec) whose existence means code ran."""
    folder = tempfile.mkdtemp(prefix="emu")
    yield Path(folder) / "ran"
    shutil.rmtree(folder)


def test_a_pickle_that_runs_code_is_never_run(cli, tmp_path, marker):
    hostile = _hostile_copy(tmp_path, _Touch(str(marker)), "hostile")
    live = subprocess.run([sys.executable, "-c", "import base64, pickle, sys; pickle.loads(base64.b64decode(sys.argv[1]))",
                           base64.b64encode(pickle.dumps(_Touch(str(marker) + ".live"), protocol=2)).decode()])
    assert live.returncode == 0 and os.path.exists(str(marker) + ".live")   # the payload is real
    result = cli("inspect", "--json", str(hostile))
    assert result.code == 0, result.err
    assert not marker.exists()
    data = result.json()
    assert data["signature"] is None and "not an inspect.Signature" in data["args_spec_error"]
    assert not marker.exists()


def test_a_signature_with_a_hostile_default_is_rendered_not_run(cli, tmp_path, marker):
    signature = pyinspect.Signature([pyinspect.Parameter("x", pyinspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                         default=_Touch(str(marker)))])
    hostile = _hostile_copy(tmp_path, signature, "hostile_default")
    result = cli("inspect", str(hostile))
    assert result.code == 0, result.err
    assert "x: - [POSITIONAL_OR_KEYWORD] = io.open(" in result.out or "x: - [POSITIONAL_OR_KEYWORD] = builtins.open(" in result.out
    assert not marker.exists()


NEGATE = "kernel_cutlass_negate_tensorptrf32gmemalign16o1281_1"


def test_kernel_info_is_offered_parsed_beside_the_bytes_it_holds(cli, tmp_path):
    """API users get kernel_info as a dict (kernel_info_parsed); `inspect --json` keeps its documented kernel_info,
    the string verbatim (what the object holds, for a bug report), and gains the parsed field beside it."""
    import emu
    path = fixture("x86_64", "two_kernels_carveout_50")
    inspection = emu.inspect(path)
    assert inspection.kernel_info_parsed == {ROTATE: {"9": 50}, NEGATE: {"9": 50}}
    assert isinstance(inspection.kernel_info, str) and json.loads(inspection.kernel_info) == inspection.kernel_info_parsed
    printed = cli("inspect", "--json", path).json()
    assert printed["kernel_info"] == inspection.kernel_info and printed["kernel_info_parsed"] == inspection.kernel_info_parsed
    for version, host, case in (("4.8.1", "aarch64", "carveout_75"), ("4.4.2", "native", "plain")):
        other = emu.inspect(fixture(host, case, version))
        assert other.kernel_info_parsed == json.loads(other.kernel_info) and other.kernel_info_error is None
    old = emu.inspect(fixture("native", "plain", "4.3.5"))          # 4.3 exports have no kernel_info
    assert old.kernel_info is None and old.kernel_info_parsed is None
    # kernel_info that is not a JSON object: the bytes are still shown, parsed is null, and the error says why
    source = Path(fixture("x86_64", "carveout_25"))
    size = len(emu.inspect(source).kernel_info) + 1          # with its NUL
    for text, error in (('["not", "an object"]', "not a JSON object"), ('{"kernel_cutlass_rotate": {"9": 2', "Expecting")):
        bad = tmp_path / "carveout_25.o"
        bad.write_bytes(make_patched().replace_symbol(source, "carveout_25_kernel_info", text.ljust(size - 1).encode() + b"\0"))
        broken = emu.inspect(bad)
        assert broken.kernel_info == text.ljust(size - 1) and broken.kernel_info_parsed is None
        assert error in broken.kernel_info_error, broken.kernel_info_error
