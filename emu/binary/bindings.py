"""Which addresses a run answers with a stub: the binding table, built from the binary.

Every import has a stub slot (the format pointed its relocations there).  A function the
binary defines itself gets one too when the caller says a stub answers its name
(`has_model`, passed in: this layer imports no stub); a shared library defines
`_cudaFuncSetAttribute` and its kin inside itself.  The function's first bytes become a
jump to its slot (the architecture's `jump_code`), in a copy of the binary, so a call to it
reaches the stub machinery as a call to an import does: no hook per instruction, nothing
per call.  Bindings are worked out once per binary and predicate (kept in its `memo`).
"""
from __future__ import annotations

import dataclasses
from typing import Callable, NamedTuple

from ..arch import architecture
from ..errors import ObjectFormatError
from .image import PERM_X, LoadedBinary
from .memory_map import STUB_SLOTS, stub_address


class Bindings(NamedTuple):
    binary: LoadedBinary             # what to map: the binary, or a copy whose bound functions jump to their slots
    symbols: tuple[str, ...]         # slot index -> the symbol its stub answers ('' for slot 0, the sentinel)

    def by_address(self) -> dict[int, str]:
        """Slot address -> the symbol a call there is answered as."""
        return {stub_address(slot): name for slot, name in enumerate(self.symbols) if slot}


def bind(binary: LoadedBinary, has_model: Callable[[str], bool]) -> Bindings:
    """The binary's imports, then the functions it defines that `has_model` names, each at a stub slot."""
    key = ("bindings", has_model)
    found = binary.memo.get(key)
    if found is None:
        found = binary.memo[key] = _bind(binary, has_model)
    copy, symbols = found
    return Bindings(binary if copy is None else copy, symbols)


def _bind(binary: LoadedBinary, has_model: Callable[[str], bool]) -> tuple[LoadedBinary | None, tuple[str, ...]]:
    """The copy to map (None: the binary itself) and the slots' symbols.  Kept in the binary's memo, so never the
    binary itself: a cycle would keep every binary a process drops alive until the garbage collector runs."""
    defined = sorted(filter(has_model, binary.functions))
    if not defined:
        return None, tuple(binary.stub_symbols)
    symbols = (*binary.stub_symbols, *defined)
    if len(symbols) > STUB_SLOTS:
        raise ObjectFormatError(f"{len(symbols) - 1} imports and functions answered by stubs; emu provides at most "
                                f"{STUB_SLOTS - 1} stubs", path=binary.path)
    cpu = architecture(binary.arch).cpu
    segments = list(binary.segments)
    codes: dict[int, bytearray] = {}                      # segment index -> its bytes being patched (copied once)
    patched: list[tuple[int, int]] = []                   # [start, end) of each jump written
    for slot, name in enumerate(defined, len(binary.stub_symbols)):
        address, size = binary.functions[name], binary.sizes.get(name, 0)
        jump = cpu.jump_code(address, stub_address(slot))
        if size < len(jump):
            raise ObjectFormatError(f"{name} is defined in the binary and answered by a stub, but its {size} bytes "
                                    f"cannot hold the {len(jump)}-byte jump to the stub", path=binary.path)
        index = next((i for i, s in enumerate(segments) if s.perms & PERM_X
                      and s.address <= address and address + len(jump) <= s.address + len(s.data)), None)
        if index is None:
            raise ObjectFormatError(f"{name} is answered by a stub, but {address:#x} is not in the binary's code",
                                    path=binary.path)
        start = address - segments[index].address
        code = codes.get(index)
        if code is None:
            code = codes[index] = bytearray(segments[index].data)
        code[start:start + len(jump)] = jump
        patched.append((address, address + len(jump)))
    for index, code in codes.items():
        segments[index] = dataclasses.replace(segments[index], data=bytes(code))
    extras = binary.extras
    if extras.get("vector_sites"):       # an instruction the jump overwrote is no longer there to carry out
        extras = {**extras, "vector_sites": [site for site in extras["vector_sites"]
                                             if not any(start <= site < end for start, end in patched)]}
    return dataclasses.replace(binary, segments=segments, stub_symbols=list(symbols), extras=extras), symbols
