"""AArch64 exports run end to end, and behave exactly like their x86-64 twins.

The fixtures under tests/fixtures/cutlass-dsl-4.8.0/ are the same kernels exported by
CuTe DSL 4.8.0 for both host targets.  The loaders are the same C-level code, so the
calls they make into CUDA must be identical call for call: symbol, every argument that
is not an address (pointers and out-pointers differ with the stack layout), the values
written through out-pointers and the return codes.  Every entry must return 0.

The calling convention and CPU setup are also checked against hand-assembled code, so
a mistake shared by `enter` and `read_args` cannot hide behind a round trip.
"""
from __future__ import annotations

import struct
from pathlib import Path

import pytest
from unicorn import UC_PROT_ALL
from unicorn import arm64_const as arm64

from emu.arch.aarch64.architecture import AARCH64
from emu.arch.aarch64.cpu import CPACR_FPEN
from emu.dsl.entries import EntrySpec
from emu.cuda.config import RuntimeConfig
from emu.cuda.object_profile import profile_for_object
from emu.run.session import run_object
from stub_models import CATALOGUE

FIXTURES = Path(__file__).parent.parent / "fixtures" / "cutlass-dsl-4.8.0"
ALL_ENTRIES = [EntrySpec(name=name) for name in ("cuda_init", "cuda_load", "cuda_load_to_device", "mlir_cuda_init",
                                                 "mlir_cuda_load", "mlir_cuda_load_to_device", "module_load", "launch")]
TWINS = sorted(path.stem for path in (FIXTURES / "aarch64").glob("*.o") if (FIXTURES / "x86_64" / path.name).exists())
ADDRESS_KINDS = {"ptr", "out"}


def _comparable(call) -> tuple:
    """A call without what depends on the architecture: addresses and the caller's offset."""
    model = CATALOGUE.get(call.symbol)
    addresses = {p.name for p in model.params() if p.c.kind in ADDRESS_KINDS} if model else set()
    args = {name: value for name, value in call.args.items() if name not in addresses}
    return call.entry, call.symbol, args, call.outputs, call.ret, call.injected


@pytest.mark.skipif(not TWINS, reason=f"no AArch64/x86-64 fixture pairs under {FIXTURES}")
@pytest.mark.parametrize("case", TWINS)
def test_aarch64_trace_equals_x86_64_twin(case):
    config = RuntimeConfig(profile=profile_for_object(FIXTURES / "x86_64" / f"{case}.o"))
    arm = run_object(FIXTURES / "aarch64" / f"{case}.o", config, entries=ALL_ENTRIES)
    x86 = run_object(FIXTURES / "x86_64" / f"{case}.o", config, entries=ALL_ENTRIES)
    assert arm.arch == "aarch64" and x86.arch == "x86_64"
    assert [(e.entry, e.function) for e in arm.entries] == [(e.entry, e.function) for e in x86.entries]
    assert {e.entry for e in arm.entries} >= {spec.name for spec in ALL_ENTRIES} - {"module_load"}
    for run in (arm, x86):
        assert [(e.entry, e.returned, e.fault) for e in run.entries] == [(e.entry, 0, None) for e in run.entries]
    assert len(arm.calls) == len(x86.calls)
    for arm_call, x86_call in zip(arm.calls, x86.calls):
        assert _comparable(arm_call) == _comparable(x86_call), f"call {arm_call.index}"
    assert {c.symbol for c in arm.calls} >= {"_cudaLibraryGetKernel", "_cudaFuncSetAttribute", "_cudaLaunchKernelEx"}
    assert arm.state == x86.state


def test_fixtures_use_the_relocations_the_field_notes_list():
    from emu.binary.elf.reader import load_object
    used = {rel.type for case in TWINS for rel in load_object(FIXTURES / "aarch64" / f"{case}.o").relocations}
    assert not TWINS or used <= set(AARCH64.relocations)


# -- calling convention and CPU, against hand-assembled code --------------------------
CODE, STACK_TOP, SENTINEL = 0x1_0000, 0x9_0000, 0x2_0000
# f(a0..a9) = a3 | a6 | a8 | a9, a8 and a9 loaded from [sp] and [sp+8] (aarch64-linux-gnu-as):
#   ldr x9, [sp]; ldr x10, [sp, #8]; orr x0, x3, x6; orr x0, x0, x9; orr x0, x0, x10; ret
ARGS_3_6_8_9 = struct.pack("<6I", 0xF94003E9, 0xF94007EA, 0xAA060060, 0xAA090000, 0xAA0A0000, 0xD65F03C0)
# ldr q0, [x1]; str q0, [x2, #16]; ret
COPY_Q = struct.pack("<3I", 0x3DC00020, 0x3D800440, 0xD65F03C0)
RET = (0xD65F03C0).to_bytes(4, "little")


def _emulator(code: bytes):
    uc = AARCH64.cpu.create()
    uc.mem_map(0, 0x10_0000, UC_PROT_ALL)
    uc.mem_write(CODE, code)
    uc.mem_write(SENTINEL, RET)
    return uc


def test_arguments_4_and_7_and_stack_arguments_reach_compiled_code():
    uc = _emulator(ARGS_3_6_8_9)
    args = [1 << (4 * i) for i in range(10)]
    AARCH64.convention.enter(uc, CODE, args, STACK_TOP, SENTINEL)
    assert uc.reg_read(arm64.UC_ARM64_REG_SP) % 16 == 0
    assert AARCH64.convention.read_args(uc, 10) == args
    assert AARCH64.convention.return_address(uc) == SENTINEL
    uc.emu_start(CODE, SENTINEL)
    assert AARCH64.convention.return_value(uc) == args[3] | args[6] | args[8] | args[9]


def test_set_return_masks_to_64_bits():
    uc = _emulator(b"")
    AARCH64.convention.set_return(uc, -1)
    assert AARCH64.convention.return_value(uc) == (1 << 64) - 1


def test_fp_simd_is_enabled_and_q_registers_move_memory():
    uc = _emulator(COPY_Q)
    assert uc.reg_read(arm64.UC_ARM64_REG_CPACR_EL1) & CPACR_FPEN == CPACR_FPEN
    uc.mem_write(0x4_0000, bytes(range(16)))
    AARCH64.convention.enter(uc, CODE, [0, 0x4_0000, 0x5_0000], STACK_TOP, SENTINEL)
    uc.emu_start(CODE, SENTINEL)
    assert bytes(uc.mem_read(0x5_0010, 16)) == bytes(range(16))


def test_cpu_describes_itself_for_fault_reports():
    uc = _emulator(COPY_Q)
    registers = AARCH64.cpu.registers(uc)
    assert list(registers)[:31] == [f"x{n}" for n in range(31)] and {"sp", "pc", "nzcv"} <= set(registers)
    assert AARCH64.cpu.disassemble(COPY_Q, CODE) == "ldr q0, [x1]"
    assert AARCH64.cpu.disassemble(b"\xff\xff\xff\xff", CODE).startswith("(undecodable")
    slot = AARCH64.cpu.stub_slot_code(0x100010, 0x110000)
    assert [AARCH64.cpu.disassemble(slot[i:], 0x100010 + i) for i in (0, 4, 8)] == [
        "mov x16, #0x10", "movk x16, #0x10, lsl #16", "b #0x110000"]
