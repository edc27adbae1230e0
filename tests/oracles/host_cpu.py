"""Whether this CPU can run a host-native object's code, and how a CPU without AVX-512 would run it.

The TVM-FFI fixtures are host-native (the DSL refuses `--host-target` for `--enable-tvm-ffi`) and were built on
an AVX-512 machine: their code uses zmm and mask registers. A native run of one on a CPU without AVX-512 dies of
SIGILL at the first such instruction it reaches. `without_avx512` writes a copy of an object in which every
AVX-512 instruction is `ud2` (then `int3` padding), so a native run of the copy dies of SIGILL exactly there: the
condition simulated on an AVX-512 machine (EMU_TEST_CPU_WITHOUT_AVX512=1 makes the live tests run such copies).
"""
from __future__ import annotations

import functools
import os
import re
import struct
from pathlib import Path

from tests.oracles import native_harness

SIMULATE = "EMU_TEST_CPU_WITHOUT_AVX512"
UD2 = b"\x0f\x0b"
_LEGACY_PREFIXES = frozenset(b"\x66\x67\xf2\xf3\x2e\x36\x3e\x26\x64\x65\xf0")
_MASK_REGISTER = re.compile(r"\bk[0-7]\b")


def simulated() -> bool:
    """True when the tests are told to behave as on a CPU without AVX-512."""
    return os.environ.get(SIMULATE, "") not in ("", "0")


@functools.lru_cache(maxsize=None)
def cpu_flags() -> frozenset[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    return frozenset(flag for line in text.splitlines() if line.startswith("flags")
                     for flag in line.split(":", 1)[1].split())


def has_avx512() -> bool:
    return "avx512f" in cpu_flags() and not simulated()


def is_avx512(raw: bytes, operands: str) -> bool:
    """EVEX-encoded (0x62 after the legacy prefixes: in 64-bit mode always EVEX), or a VEX mask instruction."""
    opcode = next((b for b in raw if b not in _LEGACY_PREFIXES), None)
    return opcode == 0x62 or bool(_MASK_REGISTER.search(operands))


def _section_offsets(data: bytes) -> list[int]:
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    return [struct.unpack_from("<Q", data, shoff + i * shentsize + 0x18)[0] for i in range(shnum)]


def avx512_sites(obj: Path) -> list[tuple[int, int, str]]:
    """(file offset, size, "function+0x..: text") of every AVX-512 instruction in the object's functions."""
    import capstone
    decoder = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    data = obj.read_bytes()
    offsets = _section_offsets(data)
    sites = []
    for function in native_harness.defined_functions(obj):
        start = offsets[function.section] + function.value
        for insn in decoder.disasm(data[start:start + function.size], 0):
            if is_avx512(bytes(insn.bytes), insn.op_str):
                sites.append((start + insn.address, insn.size,
                              f"{function.name}+{insn.address:#x}: {insn.mnemonic} {insn.op_str}"))
    return sites


def without_avx512(obj: Path, dest: Path) -> Path:
    """A copy of `obj` at `dest` whose AVX-512 instructions are each `ud2` padded with `int3`."""
    data = bytearray(obj.read_bytes())
    for offset, size, _ in avx512_sites(obj):
        data[offset:offset + size] = UD2 + b"\xcc" * (size - len(UD2))
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(bytes(data))
    return dest
