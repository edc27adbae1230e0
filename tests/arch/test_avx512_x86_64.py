"""The AVX unit's AVX-512 forms against an AVX-512 CPU (tests/data/avx512/cases.json).

The forms are those LLVM emitted in real exports built for Sapphire Rapids, Skylake-SP and Zen 4, and in
TVM-FFI objects built on an AVX-512 CPU (tests/data/avx512/README.md): compares into mask registers, mask
logic, the mask unpacks kunpckbw/wd/dq (flash-attn-4's forward kernel), kmov to a general
register, vpmovm2d/q, broadcast vpadd/vpsub, zmm moves, and the unsigned conversions.  Each case's
bytes and the state the CPU left were recorded by tests/data/avx512/make_cases.py (command in the
JSON) on a machine with AVX-512; these tests need neither.
"""
import json
from pathlib import Path

import pytest
from unicorn import UC_ARCH_X86, UC_HOOK_CODE, UC_HOOK_INSN_INVALID, UC_MODE_64, Uc, UcError
from unicorn import x86_const as UX

from emu.arch.x86_64.avx import AvxUnit, UnsupportedInstruction
from emu.arch.x86_64.avx.scan import Scanner

DATA = json.loads((Path(__file__).parent.parent / "data" / "avx512" / "cases.json").read_text())
CASES = {c["name"]: c for c in DATA["cases"]}
REFUSED = {c["name"]: c for c in DATA["refused"]}
CODE, MEM = 0x10000, 0x200000
ZMM = [getattr(UX, f"UC_X86_REG_ZMM{i}") for i in range(32)]


def gpr_id(name: str) -> int:
    return getattr(UX, f"UC_X86_REG_{name.upper()}")


def run_case(code: bytes, init: dict) -> tuple[Uc, AvxUnit]:
    """Run `code` from the initial state as emu's Machine does (sites from the scan, the invalid hook)."""
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(CODE, 0x1000)
    uc.mem_map(MEM, 0x1000)
    uc.mem_write(CODE, code)
    uc.mem_write(MEM, bytes.fromhex(init["mem"]))
    for i, value in enumerate(init["zmm"]):
        uc.reg_write(ZMM[i], int.from_bytes(bytes.fromhex(value), "little"))
    for name, value in init["gpr"].items():
        if name != "rsp":
            uc.reg_write(gpr_id(name), MEM + value if name == "rbx" else value)
    uc.reg_write(UX.UC_X86_REG_MXCSR, init["mxcsr"])
    unit = AvxUnit(uc)
    unit.vectors.masks[:] = init["k"]
    uc.hook_add(UC_HOOK_INSN_INVALID, lambda _uc, _data: unit.on_invalid_instruction())
    for site in Scanner().scan(code, CODE):
        uc.hook_add(UC_HOOK_CODE, lambda _uc, address, _size, _data: unit.on_site(address), begin=site, end=site)
    try:
        uc.emu_start(CODE, CODE + len(code))
    except UcError:
        raise unit.last_error or AssertionError("UcError without last_error")
    if unit.last_error:
        raise unit.last_error
    return uc, unit


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_avx512_cpu(name):
    case = CASES[name]
    want = case["expected"]
    uc, unit = run_case(bytes.fromhex(case["code"]), case["init"])
    assert [uc.reg_read(ZMM[i]).to_bytes(64, "little").hex() for i in range(32)] == want["zmm"], case["asm"]
    assert [hex(k) for k in unit.vectors.masks] == [hex(k) for k in want["k"]], case["asm"]
    got_gpr = {g: uc.reg_read(gpr_id(g)) - (MEM if g == "rbx" else 0) for g in want["gpr"]}
    assert {g: hex(v) for g, v in got_gpr.items()} == {g: hex(v) for g, v in want["gpr"].items()}, case["asm"]
    assert bytes(uc.mem_read(MEM, 512)).hex() == want["mem"], case["asm"]
    assert hex(uc.reg_read(UX.UC_X86_REG_MXCSR)) == hex(want["mxcsr"]), case["asm"]


def test_cases_were_measured_on_an_avx512_cpu():
    assert {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= set(DATA["cpu"]["avx512_flags"])
    assert all("expected" in case for case in DATA["cases"])


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_forms_no_export_uses_are_refused(name):
    case = REFUSED[name]
    code = bytes.fromhex(case["code"])
    init = CASES["compare_eq_gt"]["init"]
    with pytest.raises(UnsupportedInstruction) as info:
        run_case(code, init)
    assert info.value.address == CODE and info.value.mnemonic[0] in "vk"


def test_unsupported_mask_instruction_is_reported_as_unsupported_not_undefined():
    """kortestw is a real AVX-512 instruction: the fault must say emu lacks it, not that it is #UD."""
    code = bytes.fromhex(REFUSED["kortest"]["code"])
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(CODE, 0x1000)
    uc.mem_write(CODE, code)
    unit = AvxUnit(uc)
    with pytest.raises(UnsupportedInstruction) as info:
        unit.execute(CODE)
    unit.last_error = info.value                      # as on_invalid_instruction leaves it
    fault = unit.take_fault()
    assert fault.kind == "unsupported_instruction" and "kortestw" in fault.message, fault


def test_scan_finds_the_mask_instructions():
    code = bytes.fromhex(CASES["floor_division"]["code"])
    sites = set(Scanner().scan(code, CODE))
    kandw = code.index(bytes.fromhex("c5f441c8"))           # kandw k1, k1, k0: VEX-encoded, Unicorn would run it as cmovno
    assert CODE + kandw in sites
