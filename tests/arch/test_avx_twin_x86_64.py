"""Host-CPU (AVX) exports against their portable twins, and the VEX forms the AVX unit refuses.

Each `native` export (built without --host-target, so its loaders use this build
machine's AVX2) must trace exactly as its `x86_64` twin (same kernel, same calls) does.
The instruction-level checks against the real CPU are in test_avx_x86_64.py.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from unicorn import UC_ARCH_X86, UC_MODE_64, Uc

from emu.arch.x86_64.avx import AvxUnit, UnsupportedInstruction
from emu.dsl.entries import EntrySpec
from emu.binary.memory_map import STACK_BASE, STACK_SIZE
from emu.run.session import run_object

FIXTURES = Path(__file__).parent.parent / "fixtures"
ASM = {c["name"]: bytes.fromhex(c["code"]) for c in
       json.loads((Path(__file__).parent.parent / "data" / "avx" / "cases.json").read_text())["assembled"]}
ENTRIES = [EntrySpec(name=name) for name in ("cuda_init", "cuda_load", "cuda_load_to_device", "launch")]
TWINS = sorted((native, native.parent.parent / "x86_64" / native.name) for native in FIXTURES.rglob("native/*.o")
               if (native.parent.parent / "x86_64" / native.name).exists())


def _on_stack(value) -> bool:
    return isinstance(value, int) and STACK_BASE <= value < STACK_BASE + STACK_SIZE


def _comparable(run) -> dict:
    """What must agree between twins: entries and calls.

    Not addresses that depend on code generation: the cubin's (the code's size differs)
    and those of locals (the two builds lay out their stack frames differently).
    """
    calls = [(c.symbol, {k: "stack" if _on_stack(v) else v for k, v in c.args.items()
                         if not (c.symbol == "_cudaLibraryLoadData" and k == "code")}, c.outputs, c.ret)
             for c in run.calls]
    entries = [(e.entry, e.returned, e.fault.kind if e.fault else None) for e in run.entries]
    return {"entries": entries, "calls": calls}


@pytest.mark.parametrize("native, portable", TWINS, ids=[str(n.relative_to(FIXTURES)) for n, _ in TWINS])
def test_host_cpu_export_traces_as_its_portable_twin(native, portable):
    avx = run_object(str(native), entries=ENTRIES)
    assert all(e.fault is None or e.fault.kind != "unsupported_instruction" for e in avx.entries), avx.entries
    assert _comparable(avx) == _comparable(run_object(str(portable), entries=ENTRIES))


def test_there_are_twins_to_compare():
    assert len(TWINS) >= 4


@pytest.mark.parametrize("name, mnemonic", [("unsupported_rcpps", "vrcpps"), ("unsupported_rcpss", "vrcpss"),
                                            ("unsupported_rsqrtps_ymm", "vrsqrtps"), ("evex_fma_zmm", "vfmadd231ps"),
                                            ("evex_add_xmm", "vaddps"), ("evex_cmp_predicate", "vcmpgt_oqps")])
def test_forms_without_an_exact_result_are_refused(name, mnemonic):
    """Approximations that differ between CPU models, and EVEX (AVX-512) forms."""
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(0x10000, 0x1000)
    uc.mem_write(0x10000, ASM[name])
    with pytest.raises(UnsupportedInstruction) as info:
        AvxUnit(uc).execute(0x10000)
    assert info.value.mnemonic == mnemonic and f"'{mnemonic} " in str(info.value)


@pytest.mark.parametrize("name", ["unsupported_fma", "unsupported_cmp_predicate", "unsupported_vex256_arith"])
def test_forms_once_refused_are_carried_out(name):
    """FMA, compare predicates above 7 and VEX.256 arithmetic: checked against the CPU in test_avx_x86_64.py."""
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(0x10000, 0x1000)
    uc.mem_write(0x10000, ASM[name])
    assert AvxUnit(uc).execute(0x10000) == len(ASM[name])
