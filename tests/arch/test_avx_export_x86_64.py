"""A real host-CPU export whose launch code uses FMA, traced by emu and run natively on this CPU.

tests/data/avx/host_fma/native/host_fma_math.o (nvidia-cutlass-dsl 4.8.0, no --host-target)
computes its grid with vfmadd213ss/vfmadd213sd/vfmadd132sd (register and memory forms) and shows the fused results'
low bits in it; host_fma_math.native.json holds the grids its native run gave on an FMA
CPU for three argument sets (tests/data/avx/host_fma/record_native.py).
"""
import json
from pathlib import Path

import pytest
from capstone import CS_ARCH_X86, CS_MODE_64, Cs

import emu
from emu.dsl.entries import EntrySpec
from tests import oracles

HERE = Path(__file__).parent.parent / "data" / "avx" / "host_fma"
NATIVE = json.loads((HERE / "host_fma_math.native.json").read_text())["runs"]
OBJECT = HERE / "native" / "host_fma_math.o"
TAKES_ARGUMENTS = "args" in EntrySpec.model_fields


def test_the_export_uses_fma():
    from test_avx_x86_64 import elf_section
    mnemonics = {m for section in (".text", ".ltext")
                 for _, _, m, _ in Cs(CS_ARCH_X86, CS_MODE_64).disasm_lite(elf_section(OBJECT, section), 0)}
    assert {"vfmadd213ss", "vfmadd213sd", "vfmadd132sd"} <= mnemonics


@pytest.mark.oracle(oracles.NATIVE)
@pytest.mark.skipif(not TAKES_ARGUMENTS, reason="emu's launch does not take arguments yet (issue 18 item 2)")
@pytest.mark.parametrize("run", NATIVE, ids=[f"extent{r['extent']}" for r in NATIVE])
def test_launch_grid_equals_the_native_run(run):
    args = {"x": {"data": 0xDADA0000, "dynamic_shapes": [run["extent"]]}, **run["scalars"], "stream": 0x5757}
    trace = emu.trace(OBJECT, launch_args=args)
    launches = [{"grid": c.args["config"]["gridDim"], "block": c.args["config"]["blockDim"]}
                for c in trace.calls if c.symbol == "_cudaLaunchKernelEx"]
    assert launches == run["launches"]
