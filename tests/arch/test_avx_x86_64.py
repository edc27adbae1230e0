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
from unicorn import UC_ARCH_X86, UC_HOOK_CODE, UC_HOOK_INSN_INVALID, UC_MODE_64, Uc, UcError
from unicorn import x86_const as UX

from capstone import CS_ARCH_X86, CS_MODE_64, Cs

from emu.arch.x86_64.avx import AvxUnit, MemoryFault, MisalignedAccess, UnsupportedInstruction
from emu.arch.x86_64.avx.scan import Scanner, is_vector_vex, is_xmm_store
from tests import oracles

DATA = json.loads((Path(__file__).parent.parent / "data" / "avx" / "cases.json").read_text())
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


def install(uc: Uc, sites=()) -> AvxUnit:
    """Hook the unit into a bare emulator as emu's Machine does: invalid instructions, then each site."""
    unit = AvxUnit(uc)
    uc.hook_add(UC_HOOK_INSN_INVALID, lambda _uc, _data: unit.on_invalid_instruction())
    for address in sites:
        uc.hook_add(UC_HOOK_CODE, lambda _uc, site, _size, _data: unit.on_site(site), begin=address, end=address)
    return unit


def run(uc: Uc, code: bytes, sites: bool = True) -> AvxUnit:
    unit = install(uc, Scanner().scan(code, CODE) if sites else ())
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
    if "mxcsr" in init:
        uc.reg_write(UX.UC_X86_REG_MXCSR, init["mxcsr"])
    run(uc, code, sites)
    got_ymm = [uc.reg_read(YMM[i]).to_bytes(32, "little").hex() for i in range(16)]
    assert got_ymm == want["ymm"], case["asm"]
    got_gpr = {g: uc.reg_read(GPR[g]) - (MEM if g in PTRS else 0) for g in want["gpr"]}
    assert got_gpr == want["gpr"], case["asm"]
    assert bytes(uc.mem_read(MEM, 512)).hex() == want["mem"], case["asm"]
    for i in range(16):
        assert uc.reg_read(ZMM[i]) >> 256 == 0, f"zmm{i} upper bits"
    if "mxcsr" in want:      # control bits always; the exception flags where no SSE twin runs (Unicorn sets none)
        checked = 0xFFFF if case["flags"] else 0xFFC0
        assert hex(uc.reg_read(UX.UC_X86_REG_MXCSR) & checked) == hex(want["mxcsr"] & checked), case["asm"]


@pytest.mark.oracle(oracles.CPU)
@pytest.mark.parametrize("name", sorted(NATIVE))
def test_matches_cpu(name):
    run_native_case(NATIVE[name], sites=True)


@pytest.mark.oracle(oracles.CPU)
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
    uc = machine(ASM["unsupported_rcpss"])
    with pytest.raises(UnsupportedInstruction) as info:
        run(uc, ASM["unsupported_rcpss"])
    err = info.value
    assert (err.address, err.size, err.mnemonic) == (CODE, 4, "vrcpss")
    assert str(err).startswith(f"unsupported instruction 'vrcpss xmm0, xmm1, xmm2' at {CODE:#x}: ")
    assert "depend on the CPU model" in str(err)


@pytest.mark.parametrize("name, mnemonic", [("unsupported_rcpps", "vrcpps"), ("unsupported_rsqrtps_ymm", "vrsqrtps"),
                                            ("unsupported_rsqrtss", "vrsqrtss")])
def test_approximations_are_refused_saying_why(name, mnemonic):
    with pytest.raises(UnsupportedInstruction) as info:
        run(machine(ASM[name]), ASM[name])
    assert info.value.mnemonic == mnemonic and "approximation whose bits depend on the CPU model" in str(info.value)


@pytest.mark.parametrize("name", sorted(n for n in ASM if n.startswith("evex_")))
def test_evex_forms_of_carried_out_instructions_are_refused(name):
    """VEX forms of these run (FMA, arithmetic, compares, permutes, F16C); their EVEX (AVX-512) forms stop."""
    with pytest.raises(UnsupportedInstruction) as info:
        run(machine(ASM[name], MEMBYTES), ASM[name])
    if name != "evex_blend_masked":                     # vblendmps has no VEX form at all
        assert "EVEX" in str(info.value) or "operand kind not supported" in str(info.value), str(info.value)


def test_unsupported_through_invalid_hook_sets_last_error():
    code = ASM["loop_then_rcpps_ymm"]
    uc = machine(code)
    unit = install(uc)
    with pytest.raises(UcError) as info:
        uc.emu_start(CODE, CODE + len(code))
    assert info.value.errno == 10                       # UC_ERR_INSN_INVALID
    assert unit.last_error.mnemonic == "vrcpps"
    assert unit.last_error.address == CODE + len(code) - 4
    assert uc.reg_read(UX.UC_X86_REG_RAX) == 96


def test_unit_starts_the_guest_with_the_process_mxcsr():
    uc = machine(b"")
    assert uc.reg_read(UX.UC_X86_REG_MXCSR) == 0            # Unicorn's own: every exception unmasked
    AvxUnit(uc)
    assert uc.reg_read(UX.UC_X86_REG_MXCSR) == 0x1F80


@pytest.mark.parametrize("mxcsr, refused", [(0x1F80, False), (0x1F80 & ~0x1000, True), (0x1F80 & ~0x0400, False)])
def test_an_exception_mxcsr_unmasks_stops_the_run(mxcsr, refused):
    """1/3 + 0 is inexact: with the precision exception unmasked the CPU traps (#XM); emu stops, writing nothing."""
    code = bytes.fromhex("c4e271b9c2")                      # vfmadd231ss xmm0, xmm1, xmm2
    uc = machine(code)
    uc.reg_write(UX.UC_X86_REG_MXCSR, mxcsr)
    uc.reg_write(UX.UC_X86_REG_XMM0, 0)
    uc.reg_write(UX.UC_X86_REG_XMM1, struct.unpack("<I", struct.pack("<f", 1 / 3))[0])
    uc.reg_write(UX.UC_X86_REG_XMM2, struct.unpack("<I", struct.pack("<f", 3.0))[0])
    if refused:
        with pytest.raises(UnsupportedInstruction) as info:
            run(uc, code)
        assert "#XM" in str(info.value) and "inexact" in str(info.value)
        assert uc.reg_read(UX.UC_X86_REG_XMM0) == 0 and uc.reg_read(UX.UC_X86_REG_MXCSR) == mxcsr
    else:
        run(uc, code)
        assert uc.reg_read(UX.UC_X86_REG_XMM0) == 0x3F800000           # 1/3 rounds up in binary32: 3*x is 1 + 2**-25
        assert uc.reg_read(UX.UC_X86_REG_MXCSR) == mxcsr | 0x20      # the inexact flag


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
    unit = install(uc, Scanner().scan(code, CODE))
    uc.emu_start(CODE, CODE + len(code))
    assert unit.last_error.mnemonic == "kmovw"
    assert uc.reg_read(UX.UC_X86_REG_RAX) == 0            # nothing after it ran


# ---------------------------------------------------------------- AVX-512 (no CPU reference here)
MEMBYTES = bytes((i * 37 + 11) % 256 for i in range(512))
ZINIT = [int.from_bytes(bytes((i * 13 + k * 7 + 1) % 256 for k in range(64)), "little") for i in range(32)]
M = lambda off, n: int.from_bytes(MEMBYTES[off:off + n], "little")        # noqa: E731
LOW = lambda value, n: value & ((1 << (8 * n)) - 1)                        # noqa: E731
REP = lambda value, esize, n: int.from_bytes(LOW(value, esize).to_bytes(esize, "little") * (n // esize), "little")  # noqa: E731

EVEX_EXPECT = {   # name -> ({zmm index: value}, {memory offset: bytes})
    "zmm_load": ({0: M(8, 64)}, {}),
    "zmm_store": ({}, {64: ZINIT[1].to_bytes(64, "little")}),
    "zmm_aligned_load": ({2: M(64, 64)}, {}),
    "zmm_dqu64_high": ({17: M(4, 64)}, {128: MEMBYTES[4:68]}),
    "zmm_dqu8_16": ({4: M(1, 64)}, {200: MEMBYTES[1:65]}),
    "zmm_xor_zero": ({5: 0, 20: ZINIT[21] ^ ZINIT[22]}, {}),
    "zmm_ternlog_ones": ({6: (1 << 512) - 1}, {}),
    "zmm_broadcast": ({7: REP(M(4, 4), 4, 64), 8: REP(ZINIT[9], 8, 64), 10: REP(M(32, 32), 32, 64)}, {}),
    "zmm_insert_extract": ({11: LOW(ZINIT[12], 32) | LOW(ZINIT[13], 32) << 256, 14: ZINIT[15] >> 256},
                           {16: (ZINIT[16] >> 384).to_bytes(16, "little")}),
    "ymm_evex_high": ({18: M(32, 32), 19: 0}, {}),
}


@pytest.mark.parametrize("name", sorted(EVEX_EXPECT))
def test_evex_forms(name):
    code = ASM[name]
    uc = machine(code, MEMBYTES)
    for i, value in enumerate(ZINIT):
        uc.reg_write(ZMM[i], value)
    run(uc, code)
    regs, mem = EVEX_EXPECT[name]
    for i, value in enumerate(ZINIT):
        assert uc.reg_read(ZMM[i]) == regs.get(i, value), f"zmm{i}"
    expected = bytearray(MEMBYTES)
    for off, data in mem.items():
        expected[off:off + len(data)] = data
    assert bytes(uc.mem_read(MEM, 512)) == bytes(expected)


def test_evex_misaligned_vmovdqa64_faults():
    with pytest.raises(MisalignedAccess) as info:
        run(machine(ASM["zmm_dqa64_misaligned"]), ASM["zmm_dqa64_misaligned"])
    assert (info.value.ea, info.value.width) == (MEM + 32, 64)


# ---------------------------------------------------------------- properties
MOVES_XOR = NATIVE["xor_general"]["code"]                  # vxorps ymm1,ymm2,ymm3; vxorpd ymm4,ymm5,[rbx+32]; vpxor ymm13,ymm14,ymm15
U256 = st.integers(0, (1 << 256) - 1)


@settings(max_examples=60, deadline=None)
@given(regs=st.lists(U256, min_size=16, max_size=16), mem=st.binary(min_size=512, max_size=512))
def test_property_xor(regs, mem):
    code = bytes.fromhex(MOVES_XOR)
    uc = machine(code, mem)
    for i, value in enumerate(regs):
        uc.reg_write(ZMM[i], value)
    run(uc, code)
    want = dict(enumerate(regs))
    want.update({1: regs[2] ^ regs[3], 4: regs[5] ^ int.from_bytes(mem[32:64], "little"), 13: regs[14] ^ regs[15]})
    assert [uc.reg_read(ZMM[i]) for i in range(16)] == [want[i] for i in range(16)]


@settings(max_examples=60, deadline=None)
@given(src=U256, mem=st.binary(min_size=512, max_size=512), load=st.integers(0, 448), store=st.integers(0, 480))
def test_property_unaligned_moves(src, mem, load, store):
    # vmovups ymm0, [rbx+rcx]; vmovdqu [rbx+rdx], ymm1
    code = bytes.fromhex("c5fc10040b" "c5fe7f0c13")
    uc = machine(code, mem)
    uc.reg_write(UX.UC_X86_REG_ZMM0, (1 << 512) - 1)
    uc.reg_write(UX.UC_X86_REG_YMM1, src)
    uc.reg_write(UX.UC_X86_REG_RCX, load)
    uc.reg_write(UX.UC_X86_REG_RDX, store)
    run(uc, code)
    assert uc.reg_read(UX.UC_X86_REG_ZMM0) == int.from_bytes(mem[load:load + 32], "little")
    expected = bytearray(mem)
    expected[store:store + 32] = src.to_bytes(32, "little")
    assert bytes(uc.mem_read(MEM, 512)) == bytes(expected)


# ---------------------------------------------------------------- the real host-native export
# .ltext 0xd1-0x107 of a host-native (AVX2 machine) export of seed/repro.py (nvidia-cutlass-dsl 4.8.0):
# mov rax,rsp; lea rdx,[rax-0x40]; mov rsp,rdx; movabs rcx,<GOTOFF64>; vmovaps ymm0,[r13+rcx];
# movabs rcx,<GOTOFF64>; vmovaps xmm1,[r13+rcx]; vmovups [rax-0x40],ymm0; vmovups [rax-0x20],xmm1
EXPORT_EXCERPT = bytes.fromhex(
    "4889e0488d50c04889d448b90000000000000000c4c17c28440d00"
    "48b90000000000000000c4c178284c0d00c5fc1140c0c5f81148e0")
# Every distinct VEX encoding in that export's .ltext (objdump -d -M intel -j .ltext).
EXPORT_VEX = ["c4c17c28440d00", "c4c178284c0d00", "c5fc1140c0", "c5f81148e0",
              "c5f8280401", "c5f8280430", "c5f8294424 10".replace(" ", ""), "c5f877"]


def relocated_excerpt(off0: int, off1: int) -> bytes:
    code = bytearray(EXPORT_EXCERPT)
    code[12:20] = off0.to_bytes(8, "little")
    code[29:37] = off1.to_bytes(8, "little")
    return bytes(code)


@pytest.mark.parametrize("sites", [True, False])
def test_export_copy_sequence(sites):
    code = relocated_excerpt(64, 96)
    uc = machine(code, MEMBYTES)
    uc.reg_write(UX.UC_X86_REG_R13, MEM)
    uc.reg_write(UX.UC_X86_REG_RSP, MEM + 0x400)
    run(uc, code, sites)
    assert uc.reg_read(UX.UC_X86_REG_RSP) == MEM + 0x3C0
    assert bytes(uc.mem_read(MEM + 0x3C0, 48)) == MEMBYTES[64:112]


def test_export_copy_sequence_misaligned_source_faults():
    code = relocated_excerpt(72, 96)
    uc = machine(code, MEMBYTES)
    uc.reg_write(UX.UC_X86_REG_R13, MEM)
    uc.reg_write(UX.UC_X86_REG_RSP, MEM + 0x400)
    with pytest.raises(MisalignedAccess):
        run(uc, code)


@pytest.mark.parametrize("hexcode", EXPORT_VEX)
def test_every_export_vex_instruction_is_supported(hexcode):
    code = bytes.fromhex(hexcode)
    uc = machine(code)
    unit = AvxUnit(uc)
    decoded = unit.decode(CODE)
    assert decoded.size == len(code)
    # xmm stores are left to Unicorn (it carries them out correctly); everything else is hooked
    xmm_store = decoded.mnemonic.startswith("vmov") and decoded.op_str.startswith("xmmword ptr")
    assert Scanner().scan(code, CODE) == ([] if xmm_store else [CODE])


def elf_section(path: Path, wanted: str) -> bytes:
    data = path.read_bytes()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    for h in headers:
        if data[names + h[0]:data.index(b"\0", names + h[0])].decode() == wanted:
            return data[h[4]:h[4] + h[5]]
    raise KeyError(wanted)


def test_host_native_objects_in_fixtures_are_supported():
    """Every vector instruction in a committed x86-64 object's .ltext is a site and decodes fully.

    scan may also name bytes inside other instructions (a code hook there never fires);
    a linear sweep of the code tells which sites are real instruction starts.
    """
    objects = [p for p in (Path(__file__).parent.parent / "fixtures").rglob("*.o")
               if p.read_bytes()[:4] == b"\x7fELF" and p.read_bytes()[18] == 62]
    scanner, sweeper = Scanner(), Cs(CS_ARCH_X86, CS_MODE_64)
    checked = 0
    for path in objects:
        try:
            code = elf_section(path, ".ltext")
        except KeyError:
            continue
        uc = Uc(UC_ARCH_X86, UC_MODE_64)
        uc.mem_map(CODE, (len(code) + 0xFFF) & ~0xFFF)
        uc.mem_write(CODE, code)
        unit = AvxUnit(uc)
        starts = {a: (size, mnemonic, op_str) for a, size, mnemonic, op_str in sweeper.disasm_lite(code, CODE)}
        vector = {a for a, (size, mnemonic, op_str) in starts.items()
                  if is_vector_vex(code[a - CODE:a - CODE + size], mnemonic) and not is_xmm_store(mnemonic, op_str)}
        sites = set(scanner.scan(code, CODE))
        assert vector <= sites, f"{path}: scan missed {sorted(map(hex, vector - sites))}"
        for address in sites & set(starts):
            unit.decode(address)                            # raises UnsupportedInstruction
        checked += len(vector)
    assert checked > 0


def test_scan_verdicts_kept_per_form_change_no_site(monkeypatch):
    """The scan keeps capstone's verdict per instruction form: scanning every x86-64 fixture with
    the verdicts of all the others must name exactly the sites a scan from nothing names."""
    from emu.arch.x86_64.avx import scan
    objects = [p for p in (Path(__file__).parent.parent / "fixtures").rglob("*.o")
               if p.read_bytes()[:4] == b"\x7fELF" and p.read_bytes()[18] == 62]
    codes = []
    for path in objects:
        try:
            codes.append(elf_section(path, ".ltext"))
        except KeyError:
            continue
    unit = Scanner()
    fresh = []
    for code in codes:
        monkeypatch.setattr(scan, "FORMS", {})
        fresh.append(unit.scan(code, CODE))
    monkeypatch.setattr(scan, "FORMS", {})
    shared = [unit.scan(code, CODE) for code in codes] + [unit.scan(code, CODE) for code in codes]
    assert shared == fresh + fresh
    assert any(fresh) and len(scan.FORMS) < sum(len(code) for code in codes)
    # one prefix and opcode, two ModRM bytes: an xmm store (no site) and a register move (a site)
    store, move = bytes.fromhex("c5f81100"), bytes.fromhex("c5f811c1")     # vmovups [rax], xmm0; vmovups xmm1, xmm0
    for first, second in ((store, move), (move, store)):
        monkeypatch.setattr(scan, "FORMS", {})
        sites = unit.scan(first + second + b"\xc3", CODE)
        assert sites == [CODE + (len(first) if second == move else 0)]


def test_scan_finds_a_prefixed_vector_instruction_inside_noise():
    """A site after a segment prefix starts at the prefix; C4 bytes naming no VEX map are skipped."""
    noise = bytes.fromhex("48b8c41059c41805c548")          # movabs rax, imm64 full of C4/C5 bytes
    prefixed = bytes.fromhex("64c5fc1000")                  # vmovups ymm0, ymmword ptr fs:[rax]
    code = noise + prefixed + bytes.fromhex("c3")
    sites = Scanner().scan(code, CODE)
    assert CODE + len(noise) in sites
    assert all(CODE + offset not in sites for offset in (2, 5))


# ---------------------------------------------------------------- decode cache
def test_decode_cache_reuses_and_notices_new_bytes():
    code = bytes.fromhex(NATIVE["copy_loop"]["code"])
    uc = machine(code)
    uc.reg_write(UX.UC_X86_REG_RSI, MEM + 256)
    unit = run(uc, code, sites=False)
    assert len(unit._cache) == 2                         # the two ymm moves; vzeroupper does not trap
    first = unit.decode(CODE + 2)
    assert unit.decode(CODE + 2) is first
    uc.mem_write(CODE + 2, bytes.fromhex("c5fc28"))      # vmovups -> vmovaps, same length
    assert unit.decode(CODE + 2).mnemonic == "vmovaps"


def test_execute_decodes_once(monkeypatch):
    """Executing an instruction again reuses its decode: capstone runs once, through the unit's own decoder."""
    from emu.arch.x86_64.avx.decoder import Decoder
    code = bytes.fromhex("c5fc1003")                      # vmovups ymm0, [rbx]
    uc = machine(code)
    unit = AvxUnit(uc)
    decoded, decode = [], Decoder.decode

    def counting(self, raw, address):
        decoded.append(address)
        return decode(self, raw, address)

    monkeypatch.setattr(Decoder, "decode", counting)
    for _ in range(1000):
        unit.execute(CODE)
    assert decoded == [CODE]


@pytest.mark.parametrize("hexcode, keep_low", [("c5f877", True), ("c5fc77", False)])
def test_vzeroupper_and_vzeroall_clear_zmm0_to_15(hexcode, keep_low):
    """vzeroupper keeps bits 127:0 of zmm0-15 and clears the rest; vzeroall clears them all; zmm16+ untouched."""
    code = bytes.fromhex(hexcode)
    uc = machine(code)
    values = {i: (0xABCD << 400) | (0x1234 << 200) | (0x5678 + i) for i in (0, 3, 15, 16)}
    for i, value in values.items():
        uc.reg_write(ZMM[i], value)
    run(uc, code)
    for i, value in values.items():
        want = value if i >= 16 else (value & ((1 << 128) - 1) if keep_low else 0)
        assert uc.reg_read(ZMM[i]) == want, f"zmm{i}"


def test_vzeroupper_clears_what_the_unit_wrote_after_a_clean_one():
    """vzeroupper skips reading the registers once they are known clean; a wide write makes them dirty again."""
    code = bytes.fromhex("c5f877" "c5fc1003" "c5f877")      # vzeroupper; vmovups ymm0, [rbx]; vzeroupper
    uc = machine(code, MEMBYTES)
    uc.reg_write(ZMM[1], 7 << 130)                          # before any vzeroupper: unknown, so cleared too
    unit = run(uc, code[:3])
    assert unit.vectors.wide == 0 and uc.reg_read(ZMM[1]) == 0
    unit.execute(CODE + 3)
    assert unit.vectors.wide == 1 and uc.reg_read(YMM[0]) >> 128 == M(16, 16)
    unit.execute(CODE + 7)
    assert uc.reg_read(ZMM[0]) == M(0, 16) and unit.vectors.wide == 0


def test_only_the_loaded_objects_vector_sites_stay_hooked():
    """Unicorn checks every code hook for each instruction while the budget's counter runs: a process
    must not keep the sites of every object it has seen hooked, nor an unbounded number of parked hooks."""
    from emu.arch import architecture
    from emu.dsl.entries import EntrySpec
    from emu.cache.loaded import load_image
    from emu.emulator.machine import machine_for
    from emu.run.session import run_object
    from emu.emulator.site_hooks import SPARE

    fixtures = Path(__file__).parent.parent / "fixtures" / "cutlass-dsl-4.8.0"
    avx, portable = str(fixtures / "native" / "two_kernels_carveout_50.o"), str(fixtures / "x86_64" / "plain.o")
    entries = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]
    sites = load_image(avx)[0].extras["vector_sites"]
    machine = machine_for(architecture("x86_64"))
    engine = machine.uc
    run_object(portable, entries=entries)
    assert machine.site_hooks.hooked() == []
    without = len(engine._callbacks) - len(machine.site_hooks.handles)
    first = run_object(avx, entries=entries)
    assert machine.site_hooks.hooked() == list(sites)
    run_object(portable, entries=entries)
    assert machine.site_hooks.hooked() == []
    assert len(engine._callbacks) - without == len(machine.site_hooks.handles) <= max(len(sites), SPARE)
    again = run_object(avx, entries=entries)     # its sites hooked again
    assert machine.site_hooks.hooked() == list(sites)
    assert again.model_dump() == first.model_dump()
    assert first.entries[-1].fault is None
