"""Fault reports: loaders patched to fault end their run with the right Fault, located and explained.

Each object is a real fixture with a few instruction bytes written over the start of
`<prefix>_cuda_load_to_device` (tests/fuzz/elf.py), so `cuda_init` and `cuda_load` run
normally first and their calls must be in the trace before the fault.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from emu.commands.cli import main
from emu.cuda.config import RuntimeConfig
from emu.cuda.behaviours import BEHAVIOURS
from emu.dsl.entries import EntrySpec
from emu.errors import EXIT_FAULT, EXIT_OK
from emu.cache.loaded import load_image
from emu.binary.memory_map import CODE_SLOTS_BASE, RODATA_PER_CODE, RODATA_SLOTS_BASE
from emu.run.session import run_object
from tests.fuzz import elf

PATCHED = "carveout_25_cuda_load_to_device"
ENTRIES = [EntrySpec(name="cuda_init"), EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device", device=0)]
X86_CALLS_BEFORE = ["_cudaLibraryLoadData", "_cudaGetDevice", "_cudaDeviceGetAttribute", "_cudaLibraryGetKernel",
                    "_cuKernelGetAttribute", "_cudaFuncSetAttribute", "_cudaFuncSetAttribute"]
UNMAPPED = 0xDEAD0000


def _movabs_rax(value: int) -> bytes:
    return b"\x48\xb8" + struct.pack("<Q", value)


def _readonly_write(seed: Path) -> bytes:
    """Code that writes to kernels_binary (.lrodata: mapped read-only), wherever the patched object's slots put it.

    The read-only data sits in the slot paired with the code's (emu.binary.memory_map), and the slot
    comes from the code's bytes: an address written into the code would move the slots.
    So the code computes it from its own address instead, with bytes that do not depend on it.
    """
    assert RODATA_PER_CODE == 16 and (RODATA_SLOTS_BASE - 16 * CODE_SLOTS_BASE) == -0x3000_0000
    image, _ = load_image(str(seed))
    code = next(s for s in image.segments if s.perms == 5)
    rodata = next(s for s in image.segments if s.perms == 1)
    in_code = image.functions[PATCHED] - code.address
    in_rodata = image.data_symbols["kernels_binary"] - rodata.address
    return (b"\x48\x8d\x05\x00\x00\x00\x00"                                  # lea rax, [rip]: the function + 7
            + b"\x48\x2d" + struct.pack("<i", in_code + 7)                     # sub rax: the code slot
            + b"\x48\xc1\xe0\x04"                                             # shl rax, 4
            + b"\x48\x2d" + struct.pack("<i", 0x3000_0000 - in_rodata)         # sub rax: kernels_binary in its rodata slot
            + b"\x48\x89\x00")                     # mov [rax], rax (bytes 23-25: the function's relocations start at 28)


def x86_cases(seed: Path) -> dict:
    """name -> (code, kind, address, offset of the faulting instruction, its disassembly prefix)."""
    return {
        "null_read": (bytes.fromhex("488b042500000000"), "unmapped_read", 0, 0, "mov rax, qword ptr [0]"),
        "ud2": (b"\x0f\x0b", "invalid_instruction", None, 0, "ud2"),
        "readonly_write": (_readonly_write(seed), "protected_write", "kernels_binary", 23, "mov qword ptr [rax], rax"),
        "jump_unmapped": (_movabs_rax(UNMAPPED) + b"\xff\xe0", "unmapped_fetch", UNMAPPED, None, None),
        "call_unmapped": (_movabs_rax(UNMAPPED) + b"\xff\xd0", "unmapped_fetch", UNMAPPED, None, None),
        "write_code": (b"\x48\x8d\x05\xf9\xff\xff\xff\x88\x00", "protected_write", "pc-start", 7, "mov byte ptr [rax], al"),
    }


def patched(tmp_path: Path, seed: Path, code: bytes, name: str) -> Path:
    raw = elf.fixture_bytes(seed)
    elf.patch_function(raw, PATCHED, code)
    path = tmp_path / f"{name}.o"
    path.write_bytes(raw)
    return path


def check_fault(run, kind: str, address, offset, instruction, calls_before: list[str], arch="x86_64"):
    fault = run.fault
    assert fault is not None and fault.kind == kind, fault
    assert [e.entry for e in run.entries] == ["cuda_init", "cuda_load", "cuda_load_to_device"]
    assert run.entries[-1].fault == fault and run.entries[-1].returned is None
    assert all(e.fault is None and e.returned == 0 for e in run.entries[:-1])
    assert [c.symbol for c in run.calls] == calls_before
    image, _ = load_image(run.object)
    start = image.functions[PATCHED]
    if address == "pc-start":
        address = start
    elif address == "kernels_binary":                       # in the patched object's own read-only slot
        address = image.data_symbols[address]
        assert any(s.perms == 1 and s.address <= address < s.address + len(s.data) for s in image.segments)
    assert fault.address == address
    pc_name = "rip" if arch == "x86_64" else "pc"
    assert fault.registers[pc_name] == fault.pc
    assert set(fault.registers) >= ({"rax", "rsp", "rdi", "r15", "eflags"} if arch == "x86_64" else {"x0", "x30", "sp", "nzcv"})
    if offset is None:                                     # the pc is the bad target itself
        assert fault.pc == address and fault.location == f"{address:#x}"
    else:
        assert fault.pc == start + offset
        assert fault.location == f"{PATCHED}+{offset:#x}"
        assert fault.location in fault.message
        assert fault.instruction.startswith(instruction), fault.instruction
    return fault


@pytest.mark.parametrize("name", ["null_read", "ud2", "readonly_write", "jump_unmapped", "call_unmapped", "write_code"])
def test_x86_fault(tmp_path, name):
    code, kind, address, offset, instruction = x86_cases(elf.SEED_X86)[name]
    run = run_object(str(patched(tmp_path, elf.SEED_X86, code, name)), entries=ENTRIES)
    fault = check_fault(run, kind, address, offset, instruction, X86_CALLS_BEFORE)
    if name == "readonly_write":
        assert fault.registers["rax"] == fault.address
    if name == "call_unmapped":                            # a call leaves its return address: rsp points at it
        assert fault.registers["rsp"] % 16 == 0


def test_x86_infinite_loop_hits_the_budget(tmp_path):
    run = run_object(str(patched(tmp_path, elf.SEED_X86, b"\xeb\xfe", "loop")), entries=ENTRIES, budget=50_000)
    fault = check_fault(run, "instruction_budget", None, 0, "jmp", X86_CALLS_BEFORE)
    assert "50000 instructions" in fault.message


def test_x86_infinite_loop_hits_the_timeout(tmp_path):
    run = run_object(str(patched(tmp_path, elf.SEED_X86, b"\xeb\xfe", "loop")), entries=ENTRIES, budget=10 ** 12, timeout_s=0.3)
    fault = check_fault(run, "timeout", None, 0, "jmp", X86_CALLS_BEFORE)
    assert "0.3 s" in fault.message


def test_garbage_bytes_are_invalid(tmp_path):
    run = run_object(str(patched(tmp_path, elf.SEED_X86, b"\x06\x06", "garbage")), entries=ENTRIES)   # push es: #UD in 64-bit mode
    assert run.fault.kind == "invalid_instruction" and run.fault.location == f"{PATCHED}+0x0"


def test_fault_through_the_cli_text_and_json(tmp_path, capsys):
    path = patched(tmp_path, elf.SEED_X86, bytes.fromhex("488b042500000000"), "null_read")
    assert main(["trace", str(path)]) == EXIT_FAULT
    out, err = capsys.readouterr()
    assert "unmapped_read" in out and f"{PATCHED}+0x0" in out and "mov rax, qword ptr [0]" in out and err == ""
    assert main(["trace", "--json", str(path)]) == EXIT_FAULT
    runs = json.loads(capsys.readouterr().out)
    entry = runs[0]["entries"][-1]
    assert entry["entry"] == "cuda_load_to_device" and entry["returned"] is None
    fault = entry["fault"]
    assert fault["kind"] == "unmapped_read" and fault["address"] == 0 and fault["location"] == f"{PATCHED}+0x0"
    assert fault["instruction"] == "mov rax, qword ptr [0]" and fault["registers"]["rip"] == fault["pc"]
    assert [c["symbol"] for c in runs[0]["calls"]] == X86_CALLS_BEFORE
    assert len(runs[0]["entries"]) == 3                   # the run stops at the fault: no launch


def test_scenario_expecting_the_fault_passes(tmp_path, capsys):
    path = patched(tmp_path, elf.SEED_X86, b"\x0f\x0b", "ud2")
    text = f"objects: [{path}]\nexpect:\n  fault: invalid_instruction\n  returns: {{cuda_load: 0}}\n"
    (tmp_path / "s.yaml").write_text(text)
    assert main(["run", str(tmp_path / "s.yaml")]) == EXIT_OK
    assert "passed" in capsys.readouterr().out
    (tmp_path / "t.yaml").write_text(f"objects: [{path}]\n")
    assert main(["run", "--json", str(tmp_path / "t.yaml")]) == EXIT_FAULT
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] is False and result["scenarios"][0]["faulted"] is True
    assert result["scenarios"][0]["runs"][0]["entries"][-1]["fault"]["kind"] == "invalid_instruction"


# -- a call to an undefined symbol emu has no stub for --------------------------------------------------
def renamed(tmp_path: Path, seed: Path = elf.SEED_X86) -> Path:
    raw = elf.fixture_bytes(seed)
    elf.rename_symbol(raw, "_cudaGetDevice", "_cudaGetDevicf")
    path = tmp_path / "renamed.o"
    path.write_bytes(raw)
    return path


def test_missing_stub(tmp_path):
    run = run_object(str(renamed(tmp_path)), entries=ENTRIES)
    fault = run.fault
    assert fault.kind == "missing_stub"
    assert "_cudaGetDevicf" in fault.message and "carveout_25_cuda_load+0x38" in fault.message
    assert "missing_symbols: return_zero" in fault.message
    assert fault.location == "_cudaGetDevicf (stub)"
    assert [e.entry for e in run.entries] == ["cuda_init", "cuda_load"]
    assert [c.symbol for c in run.calls] == ["_cudaLibraryLoadData"]


def test_missing_stub_cli_and_return_zero_scenario(tmp_path, capsys):
    path = renamed(tmp_path)
    assert main(["trace", "--json", str(path)]) == EXIT_FAULT
    runs = json.loads(capsys.readouterr().out)
    assert runs[0]["entries"][-1]["fault"]["kind"] == "missing_stub"
    scenario = tmp_path / "zero.yaml"
    scenario.write_text(f"objects: [{path}]\nruntime: {{missing_symbols: return_zero}}\n"
                        "expect:\n  returns: {cuda_load: 0, cuda_load_to_device: 0}\n"
                        "  calls_in_order:\n    - {symbol: _cudaGetDevicf, entry: cuda_load}\n"
                        "    - {symbol: _cudaFuncSetAttribute, entry: cuda_load}\n")
    assert main(["run", "--json", str(scenario)]) == EXIT_OK
    result = json.loads(capsys.readouterr().out)
    calls = result["scenarios"][0]["runs"][0]["calls"]
    missing = [c for c in calls if c["symbol"] == "_cudaGetDevicf"]
    assert len(missing) == 1 and missing[0]["ret"] == 0 and missing[0]["caller"] == "carveout_25_cuda_load+0x38"
    assert run_object(str(path), RuntimeConfig(missing_symbols="return_zero"), ENTRIES).fault is None


# -- AArch64 ----------------------------------------------------------------------------------------------
ARM_CALLS_BEFORE = X86_CALLS_BEFORE
ARM_CASES = {
    "null_read": (bytes.fromhex("000080d2000040f9"), "unmapped_read", 0, 4, "ldr x0, [x0]"),
    "udf": (bytes(4), "invalid_instruction", None, 0, "udf #0"),
    # movz x0, #0xdead, lsl #16; br x0
    "jump_unmapped": (struct.pack("<II", 0xD2A00000 | (0xDEAD << 5), 0xD61F0000), "unmapped_fetch", UNMAPPED, None, None),
    # adr x0, . ; str x0, [x0]
    "write_code": (struct.pack("<II", 0x10000000, 0xF9000000), "protected_write", "pc-start", 4, "str x0, [x0]"),
}


@pytest.mark.parametrize("name", list(ARM_CASES))
def test_aarch64_fault(tmp_path, name):
    code, kind, address, offset, instruction = ARM_CASES[name]
    run = run_object(str(patched(tmp_path, elf.SEED_ARM, code, name)), entries=ENTRIES)
    check_fault(run, kind, address, offset, instruction, ARM_CALLS_BEFORE, arch="aarch64")


def test_aarch64_infinite_loop(tmp_path):
    run = run_object(str(patched(tmp_path, elf.SEED_ARM, struct.pack("<I", 0x14000000), "loop")), entries=ENTRIES, budget=50_000)
    check_fault(run, "instruction_budget", None, 0, "b ", ARM_CALLS_BEFORE, arch="aarch64")


def test_aarch64_missing_stub(tmp_path):
    run = run_object(str(renamed(tmp_path, elf.SEED_ARM)), entries=ENTRIES)
    assert run.fault.kind == "missing_stub" and "_cudaGetDevicf" in run.fault.message
    assert "carveout_25_cuda_load+0x" in run.fault.message


# -- exceptions inside hooks ----------------------------------------------------------
# The stub window and vector sites are hooked through raw ctypes callbacks, where an
# exception would be printed and dropped; the Machine must turn them into faults or
# re-raise them after emu_start.
SEED_X86 = elf.SEED_X86
SEED_NATIVE = elf.X86.parent / "native" / "carveout_25.o"


def test_a_failing_behaviour_is_a_stub_error_fault(monkeypatch):
    def broken(runtime, call):
        raise ValueError("behaviour bug")
    monkeypatch.setitem(BEHAVIOURS, "_cudaFuncSetAttribute", broken)
    run = run_object(str(SEED_X86), entries=ENTRIES)
    assert run.fault.kind == "stub_error"
    assert "_cudaFuncSetAttribute" in run.fault.message and "ValueError: behaviour bug" in run.fault.message
    monkeypatch.undo()
    assert run_object(str(SEED_X86), entries=ENTRIES).fault is None     # the next run is clean


def test_keyboard_interrupt_in_a_stub_propagates(monkeypatch):
    def interrupted(runtime, call):
        raise KeyboardInterrupt
    monkeypatch.setitem(BEHAVIOURS, "_cudaGetDevice", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_object(str(SEED_X86), entries=ENTRIES)
    monkeypatch.undo()
    assert run_object(str(SEED_X86), entries=ENTRIES).fault is None


def test_an_error_in_a_vector_site_propagates(monkeypatch):
    from emu.arch.x86_64.avx import AvxUnit

    def broken(self, address):
        raise RuntimeError("site bug")
    run_object(str(SEED_NATIVE), entries=ENTRIES)                       # sites hooked, unit created
    monkeypatch.setattr(AvxUnit, "on_site", broken)
    with pytest.raises(RuntimeError, match="site bug"):
        run_object(str(SEED_NATIVE), entries=ENTRIES)
    monkeypatch.undo()
    assert run_object(str(SEED_NATIVE), entries=ENTRIES).fault is None


# -- a jump into emu's stub window, not through a stub's call -------------------------------------------
STRAY_SLOT = 0x0010_0000 + 16 * 4000           # a slot no object here imports: it holds the window's fill
MID_SLOT = {"x86_64": 0x0010_0000 + 16 + 6, "aarch64": 0x0010_0000 + 16 + 4}   # slot 1's second instruction


def _x86_jump(target: int) -> bytes:
    return _movabs_rax(target) + b"\xff\xe0"                                            # jmp rax


def _arm_jump(target: int) -> bytes:
    return struct.pack("<III", 0xD2800000 | (target & 0xFFFF) << 5,                     # movz x0, #low
                       0xF2A00000 | (target >> 16) << 5, 0xD61F0000)                     # movk x0, #high, lsl 16; br x0


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_a_jump_to_a_stub_slot_without_code_is_reported_where_it_landed(tmp_path, arch):
    seed, jump = (elf.SEED_X86, _x86_jump) if arch == "x86_64" else (elf.SEED_ARM, _arm_jump)
    run = run_object(str(patched(tmp_path, seed, jump(STRAY_SLOT), "stray")), entries=ENTRIES)
    assert run.fault.kind == "unmapped_fetch" and run.fault.pc == STRAY_SLOT
    assert f"execution reached {STRAY_SLOT:#x}, inside emu's stub window but not at a stub" in run.fault.message
    assert [c.symbol for c in run.calls] == X86_CALLS_BEFORE          # no stub answered the stray jump


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_a_jump_into_the_middle_of_a_slot_is_not_answered_as_any_stub(tmp_path, arch):
    """Past a slot's first instruction its address is not loaded: the entry path finds no slot it knows."""
    seed, jump = (elf.SEED_X86, _x86_jump) if arch == "x86_64" else (elf.SEED_ARM, _arm_jump)
    run = run_object(str(patched(tmp_path, seed, jump(MID_SLOT[arch]), "mid")), entries=ENTRIES)
    assert run.fault.kind == "unmapped_fetch" and "not from a stub slot of the loaded object" in run.fault.message
    assert [c.symbol for c in run.calls] == X86_CALLS_BEFORE
