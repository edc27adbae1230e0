"""Make exports whose loaders DO apply their metadata, so `emu check` has a clean case.

Every real export asks for attribute 9 (or nothing), which no loader sets (NVIDIA/cutlass#3715).
These copies of committed fixtures get a `<prefix>_kernel_info` that asks exactly what the
loaders set (8 MAX_DYNAMIC_SHARED_SIZE_BYTES = optin 232448 - static 0, 14
NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 1), written over the original bytes at the same length,
padded with spaces: nothing else in the object moves.  Both attributes for one kernel do
not fit in a one-kernel object's 67 bytes, so the two-kernel object carries them for
`rotate` and an empty request for `negate`, and the one-kernel object asks for 14 only.

Run from the repository root (deterministic; the test suite checks the committed copies):
    python tests/data/check/make_patched.py        # in .venv/
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from emu.dsl.exports import discover  # noqa: E402
from emu.binary.elf.reader import load_object  # noqa: E402

HERE = Path(__file__).resolve().parent
FIXTURES = ROOT / "tests" / "fixtures" / "cutlass-dsl-4.8.0"
ROTATE = "kernel_cutlass_rotate_tensorptrf32gmemalign16o1281_0"
NEGATE = "kernel_cutlass_negate_tensorptrf32gmemalign16o1281_1"

# output name -> (source fixture, the kernel_info the patched object carries)
PATCHES = {
    "applied_two_kernels_x86_64.o": ("x86_64/two_kernels_carveout_50.o", {ROTATE: {"8": 232448, "14": 1}, NEGATE: {}}),
    "applied_carveout_25_aarch64.o": ("aarch64/carveout_25.o", {ROTATE: {"14": 1}}),
}


def replace_symbol(source: Path, symbol: str, data: bytes) -> bytes:
    """The bytes of `source` with the initial bytes of the defined `symbol` replaced by `data` (same size)."""
    obj = load_object(source)
    found = obj.symbol(symbol)
    if found is None or not found.defined:
        raise ValueError(f"{source}: no defined symbol {symbol}")
    old = obj.symbol_bytes(found)
    if len(data) != len(old):
        raise ValueError(f"{source}: {symbol} holds {len(old)} bytes, not {len(data)}")
    raw = source.read_bytes()
    if raw.count(old) != 1:
        raise ValueError(f"{source}: the bytes of {symbol} are not unique in the file")
    return raw.replace(old, data)


def patched_bytes(source: Path, kernel_info: dict) -> bytes:
    """`source` with its kernel_info replaced by `kernel_info`, compact JSON padded with spaces to the same length."""
    obj = load_object(source)
    symbol = f"{discover(obj)[0].prefix}_kernel_info"
    size = obj.symbol(symbol).size
    new = json.dumps(kernel_info, separators=(",", ":")).encode()
    if len(new) + 1 > size:
        raise ValueError(f"{source}: {len(new)} bytes of kernel_info do not fit in {size - 1}")
    return replace_symbol(source, symbol, new.ljust(size - 1) + b"\0")


def main() -> None:
    for name, (source, kernel_info) in PATCHES.items():
        (HERE / name).write_bytes(patched_bytes(FIXTURES / source, kernel_info))
        print(HERE / name)


if __name__ == "__main__":
    main()
