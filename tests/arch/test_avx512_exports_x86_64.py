"""Real exports whose host code LLVM compiled for AVX-512 CPUs: emu's trace equals their native run.

tests/data/avx512/exports/<cpu>/ holds exports of real kernels (CUTLASS's elementwise_add and PDL
tutorial, quack-kernels' SM90/SM100 GEMMs) built with `--host-target '... -mcpu=<cpu>'` for
sapphirerapids, skylake-avx512 and znver4, and `<prefix>.calls.json`: what each did when linked with
the recording stubs and run on an AVX-512 CPU (tests/data/avx512/exports.py says how).  Their launch
code divides vectors of extents with compares into mask registers, kandw, vpmovm2d, kmovd and a
broadcast vpaddd; emu must carry these out and reach the same launches.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from capstone import CS_ARCH_X86, CS_MODE_64, Cs

from tests.oracles.recorder_lines import LOADER_ENTRIES, first_difference, normalise_native, recorder_config, \
    stubs_c_emu_lines as emu_lines

EXPORTS = Path(__file__).parent.parent / "data" / "avx512" / "exports"
OBJECTS = sorted(EXPORTS.glob("*/*.o"))
IDS = [f"{obj.parent.name}/{obj.stem}" for obj in OBJECTS]


@pytest.mark.parametrize("obj", OBJECTS, ids=IDS)
def test_launch_matches_the_avx512_cpu(obj):
    from emu.dsl.entries import EntrySpec
    from emu.run.session import run_object
    args = json.loads(obj.with_suffix(".args.json").read_text())["args"]
    native = json.loads(obj.with_suffix(".calls.json").read_text())
    assert any(line.get("call") == "cudaLaunchKernelEx" for line in native)
    specs = [EntrySpec.model_validate(spec) for spec in [*LOADER_ENTRIES, {"launch": {"args": args}}]]
    emu = emu_lines(run_object(str(obj), config=recorder_config(str(obj)), entries=specs))
    difference = first_difference(emu, normalise_native(native))
    assert difference is None, f"{obj}: emu's trace differs from the native run on the AVX-512 CPU\n{difference}"


def _avx512_instructions(obj: Path) -> list[tuple[int, bytes, str]]:
    """(address, bytes, text) of each EVEX or mask instruction in the object's code sections."""
    import lief
    binary = lief.parse(str(obj))
    cs = Cs(CS_ARCH_X86, CS_MODE_64)
    cs.skipdata = True
    found = []
    for section in binary.sections:
        if section.flags & 0x4:                       # SHF_EXECINSTR
            for insn in cs.disasm(bytes(section.content), 0x1000):
                if insn.id and (insn.bytes[0] == 0x62 or insn.mnemonic.startswith("k")):
                    found.append((insn.address, bytes(insn.bytes), f"{insn.mnemonic} {insn.op_str}"))
    return found


@pytest.mark.parametrize("obj", OBJECTS, ids=IDS)
def test_every_avx512_instruction_of_the_export_is_carried_out(obj):
    from emu.arch.x86_64.avx.decoder import Decoder
    decoder = Decoder()
    found = _avx512_instructions(obj)
    assert found, "the export holds no AVX-512 instruction: it no longer tests what it is for"
    for address, raw, text in found:
        assert decoder.decode(raw + bytes(15), address).handler is not None, text
