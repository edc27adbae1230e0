"""Reading kernels' facts from cubins: against what ptxas reported when it wrote them."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from emu.gpu_binary.cubin import CubinError, parse_cubin
from emu.gpu_binary.cubin_info import NvInfoError, nv_info_records

DATA = Path(__file__).parent.parent / "data" / "cubin"


def ptxas_report(arch: str) -> dict[str, dict[str, int]]:
    """Registers, stack frame and shared memory per kernel from `nvcc -Xptxas -v` (kernels.cu's header)."""
    text = (DATA / f"kernels_{arch}.ptxas.txt").read_text()
    report, kernel = {}, None
    for line in text.splitlines():
        if m := re.search(r"Function properties for (\w+)", line):
            kernel = m.group(1)
            report[kernel] = {"smem": 0}
        elif m := re.search(r"(\d+) bytes stack frame", line):
            report[kernel]["stack"] = int(m.group(1))
        elif m := re.search(r"Used (\d+) registers", line):
            report[kernel]["registers"] = int(m.group(1))
            if s := re.search(r"(\d+) bytes smem", line):
                report[kernel]["smem"] = int(s.group(1))
    return report


@pytest.mark.parametrize("arch", ["sm90a", "sm80"])
def test_registers_stack_and_shared_memory_match_ptxas(arch):
    info = parse_cubin((DATA / f"kernels_{arch}.cubin").read_bytes())
    reserved = 1024 if info.kernels[0].reserved_window else 0
    read = {k.name: {"registers": k.registers, "stack": k.min_stack_bytes,
                     "smem": max(0, k.shared_section_bytes - reserved)} for k in info.kernels}
    assert read == ptxas_report(arch)


def test_launch_bounds_and_clusters_are_read():
    kernels = {k.name: k for k in parse_cubin((DATA / "kernels_sm90a.cubin").read_bytes()).kernels}
    assert kernels["bounded"].max_threads == (256, 1, 1)
    assert kernels["clustered"].cluster_dims == (2, 1, 1) and kernels["clustered"].explicit_cluster
    assert kernels["register_capped"].max_registers == 32
    assert {k.const_bytes for k in kernels.values()} == {1024}          # __constant__ float table[256]


def test_architecture_from_the_elf_header():
    sm90a, sm80 = (parse_cubin((DATA / f"kernels_{arch}.cubin").read_bytes()) for arch in ("sm90a", "sm80"))
    assert (sm90a.binary_version, sm90a.virtual_version, sm80.binary_version, sm80.virtual_version) == (90, None, 80, None)   # nvcc 13 writes ABI 8 cubins: no virtual arch recorded


def test_a_truncated_or_foreign_cubin_is_refused_by_name():
    image = (DATA / "kernels_sm90a.cubin").read_bytes()
    with pytest.raises(CubinError, match="not a 64-bit ELF"):
        parse_cubin(b"\x7fELF" + b"\0" * 10)
    with pytest.raises(CubinError, match="runs past"):
        parse_cubin(image[:len(image) // 2])
    with pytest.raises(NvInfoError, match="runs past"):
        nv_info_records(bytes([4, 0x2F, 16, 0, 1, 2]))
