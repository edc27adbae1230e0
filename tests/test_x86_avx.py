"""AvxUnit against reference results recorded on a real AVX2 CPU (tests/data/avx/cases.json).

The snippets' bytes and the CPU's results were produced by tests/data/avx/make_cases.py
(the command is in the JSON); these tests need neither gcc nor AVX.
"""

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unicorn import UC_ARCH_X86, UC_MODE_64, Uc, UcError
from unicorn import x86_const as UX

from emu.arch.x86_avx import AvxUnit, MemoryFault, MisalignedAccess, UnsupportedInstruction

DATA = json.loads((Path(__file__).parent / "data" / "avx" / "cases.json").read_text())
NATIVE = {c["name"]: c for c in DATA["native"]}
ASM = {c["name"]: bytes.fromhex(c["code"]) for c in DATA["assembled"]}
PTRS = DATA["ptr_registers"]
CODE, MEM = 0x10000, 0x200000
GPR = {g: getattr(UX, f"UC_X86_REG_{g.upper()}") for g in NATIVE["vmovups_load"]["expected"]["gpr"]}
YMM = [getattr(UX, f"UC_X86_REG_YMM{i}") for i in range(16)]
ZMM = [getattr(UX, f"UC_X86_REG_ZMM{i}") for i in range(32)]


def le(hexstr: str) -> int:
    return int.from_bytes(bytes.fromhex(hexstr), "little")


def machine(code: bytes, mem: bytes = bytes(512)) -> Uc:
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(CODE, 0x1000)
    uc.mem_map(MEM, 0x1000)
    uc.mem_write(CODE, code)
    uc.mem_write(MEM, mem)
    uc.reg_write(UX.UC_X86_REG_RBX, MEM)
    return uc


def run(uc: Uc, code: bytes, sites: bool = True) -> AvxUnit:
    unit = AvxUnit()
    unit.install(uc, unit.scan(code, CODE) if sites else ())
    try:
        uc.emu_start(CODE, CODE + len(code))
    except UcError:
        raise unit.last_error or AssertionError("UcError without last_error")
    if unit.last_error:
        raise unit.last_error
    return unit


def run_native_case(case: dict, sites: bool) -> None:
    code, init, want = bytes.fromhex(case["code"]), case["init"], case["expected"]
    uc = machine(code, bytes.fromhex(init["mem"]))
    for i, value in enumerate(init["ymm"]):
        uc.reg_write(ZMM[i], le(value))
    for g, value in init["gpr"].items():
        if g != "rsp":
            uc.reg_write(GPR[g], MEM + value if g in PTRS else value)
    run(uc, code, sites)
    got_ymm = [uc.reg_read(YMM[i]).to_bytes(32, "little").hex() for i in range(16)]
    assert got_ymm == want["ymm"], case["asm"]
    got_gpr = {g: uc.reg_read(GPR[g]) - (MEM if g in PTRS else 0) for g in want["gpr"]}
    assert got_gpr == want["gpr"], case["asm"]
    assert bytes(uc.mem_read(MEM, 512)).hex() == want["mem"], case["asm"]
    for i in range(16):
        assert uc.reg_read(ZMM[i]) >> 256 == 0, f"zmm{i} upper bits"


@pytest.mark.parametrize("name", sorted(NATIVE))
def test_matches_cpu(name):
    run_native_case(NATIVE[name], sites=True)


@pytest.mark.parametrize("name", sorted(n for n, c in NATIVE.items() if not c["needs_sites"]))
def test_matches_cpu_through_invalid_hook_only(name):
    run_native_case(NATIVE[name], sites=False)


def test_unicorn_runs_vex128_wrongly_without_sites():
    """Canary for the Unicorn limitation that `scan` + sites works around."""
    case = NATIVE["xor_xmm_zeroes_ymm"]
    with pytest.raises(AssertionError):
        run_native_case(case, sites=False)


# ---------------------------------------------------------------- failures
def test_unsupported_instruction_is_named():
    uc = machine(ASM["unsupported_fma"])
    with pytest.raises(UnsupportedInstruction) as info:
        run(uc, ASM["unsupported_fma"])
    err = info.value
    assert (err.address, err.size, err.mnemonic) == (CODE, 5, "vfmadd231ps")
    assert str(err) == f"unsupported instruction 'vfmadd231ps ymm0, ymm1, ymm2' at {CODE:#x}"


def test_unsupported_through_invalid_hook_sets_last_error():
    code = ASM["loop_then_fma"]
    uc = machine(code)
    unit = AvxUnit()
    unit.install(uc)
    with pytest.raises(UcError) as info:
        uc.emu_start(CODE, CODE + len(code))
    assert info.value.errno == 10                       # UC_ERR_INSN_INVALID
    assert unit.last_error.mnemonic == "vfmadd231ps"
    assert unit.last_error.address == CODE + len(code) - 5
    assert uc.reg_read(UX.UC_X86_REG_RAX) == 96


@pytest.mark.parametrize("name, ea", [("misaligned_vmovaps_load", MEM + 8),
                                      ("misaligned_vmovapd_store", MEM + 16)])
def test_misaligned_aligned_move_faults(name, ea):
    uc = machine(ASM[name])
    with pytest.raises(MisalignedAccess) as info:
        run(uc, ASM[name])
    assert info.value.ea == ea and info.value.width == 32
    assert f"{ea:#x}" in str(info.value) and info.value.mnemonic in str(info.value)


def test_memory_fault_names_instruction_and_address():
    uc = machine(ASM["unmapped_load"])
    uc.reg_write(UX.UC_X86_REG_RAX, 0x900000)
    with pytest.raises(MemoryFault) as info:
        run(uc, ASM["unmapped_load"])
    assert "0x900000" in str(info.value) and "vmovups ymm0, ymmword ptr [rax]" in str(info.value)


@pytest.mark.parametrize("name", ["zmm_masked", "kmov"])
def test_masked_and_mask_register_forms_are_refused(name):
    with pytest.raises(UnsupportedInstruction):
        run(machine(ASM[name]), ASM[name])


def test_unsupported_site_stops_emulation():
    code = ASM["kmov"] + bytes.fromhex("4883c001")      # kmovw k1, eax; add rax, 1
    uc = machine(code)
    unit = AvxUnit()
    unit.install(uc, unit.scan(code, CODE))
    uc.emu_start(CODE, CODE + len(code))
    assert unit.last_error.mnemonic == "kmovw"
    assert uc.reg_read(UX.UC_X86_REG_RAX) == 0            # nothing after it ran
