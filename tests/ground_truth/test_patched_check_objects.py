"""The patched `tests/data/check/applied_*.o` against their native run, not against emu's own parser.

`make_patched.py` rewrote each object's kernel_info (PATCHES gives what it wrote) so that `emu check`
has objects it must call clean.  Here each one is linked with recorder.py's stubs (x86-64 with cc,
AArch64 with aarch64-linux-gnu-gcc under qemu-aarch64) and run on a real CPU: in every loader entry,
each kernel must get exactly the attribute values PATCHES asks for.  Then emu's trace must equal that
native run, and `emu check` must report each of those attributes applied with the native value.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from emu.commands.check import check_object
from tests.oracles.recorder_lines import first_difference, recorder_py_emu_lines as emu_lines, run_recorder
from tests.oracles.native_harness import toolchain

ROOT = Path(__file__).resolve().parents[2]
PATCHED = ROOT / "tests" / "data" / "check"
_spec = importlib.util.spec_from_file_location("make_patched", PATCHED / "make_patched.py")
make_patched = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_patched)
LOADERS = {"cuda_load": ("cudaFuncSetAttribute", None), "cuda_load_to_device": ("cudaKernelSetAttributeForDevice", 0),
           "mlir_cuda_load_to_device": ("cudaKernelSetAttributeForDevice", None)}


def _setters_by_entry(lines: list[dict]) -> list[tuple[str, dict]]:
    """(entry, {(kernel, attribute, device): value}) for each loader entry run, in order."""
    out, entry = [], None
    for line in lines:
        if "entry" in line:
            entry = line["entry"]
            if entry in LOADERS:
                out.append((entry, {}))
        elif entry in LOADERS and line.get("call") == LOADERS[entry][0]:
            out[-1][1][(line["kernel"], line["attribute"], line.get("device"))] = line["value"]
    return out


@pytest.mark.oracle("native run")
@pytest.mark.parametrize("name", sorted(make_patched.PATCHES))
def test_patched_object_applies_its_metadata_natively_and_emu_agrees(name, tmp_path):
    source, kernel_info = make_patched.PATCHES[name]
    arch = "aarch64" if "aarch64" in source else "x86_64"
    tools = toolchain(arch)
    if tools is None:
        pytest.skip(f"no toolchain to link and run {arch} objects here")
    source_path = make_patched.FIXTURES / source
    native = run_recorder(PATCHED / name, source_path.with_suffix(".h"), source_path.stem, list(kernel_info), tools, tmp_path)

    loaders = _setters_by_entry(native)
    assert [entry for entry, _ in loaders] == ["cuda_load", "cuda_load_to_device", "mlir_cuda_load_to_device",
                                               "mlir_cuda_load_to_device"]
    for index, (entry, setters) in enumerate(loaders):
        device = [None, 0, 0, 1][index]
        for kernel, asks in kernel_info.items():
            for attribute, value in asks.items():
                assert setters.get((kernel, int(attribute), device)) == value, (name, entry, kernel, attribute, setters)

    difference = first_difference(emu_lines(PATCHED / name), native)
    assert difference is None, f"{name}: emu differs from its native run\n{difference}"

    result = check_object(str(PATCHED / name), device_count=2)
    applied = {(c.kernel, c.attribute, c.entry): (c.applied, c.status) for c in result.checks}
    assert result.exit_code == 0 and applied == {
        (kernel, int(attribute), entry): (value, "ok") for kernel, asks in kernel_info.items() for attribute, value in asks.items()
        for entry in ("cuda_load", "cuda_load_to_device(device=0)", "cuda_load_to_device(device=1)")}
