"""The AVX unit: carries out, for one emulator, the vector instructions Unicorn 2.1.4 cannot run.

Exports compiled for the host CPU (no `--host-target`) contain AVX code.  Unicorn
2.1.4's QEMU 5 core has no AVX: every VEX.256/EVEX instruction raises
UC_ERR_INSN_INVALID, and VEX.128 instructions run as if they were legacy SSE (the third
operand is ignored, bits 255:128 of the destination are not cleared, and
`vzeroupper`/`vzeroall` do nothing).  The Machine hands this unit both: the invalid
instruction hook, and a code hook at each site the scan found.  Anything the unit
cannot carry out exactly stops the run with a fault naming the instruction.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from unicorn import Uc, UcError
from unicorn import x86_const as UX

from ....emulator.unicorn_c import mem_read, reg_read64, reg_write64
from ...base import ExtensionFault
from .errors import UnsupportedInstruction
from .vector_file import VectorFile

if TYPE_CHECKING:                       # operands imports capstone, which a run without vector sites never needs
    from .operands import Instruction

_RIP, _MXCSR = UX.UC_X86_REG_RIP, UX.UC_X86_REG_MXCSR
_CODE_CACHES_MAX = 1024
# True of both forms (the unit does not know which it runs): a TVM-FFI export refuses --host-target
PORTABLE_REBUILD = ("Rebuild a CuTe-ABI export for a portable CPU: --host-target "
                    "'llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64'. A TVM-FFI export (`__tvm_ffi_<name>`, "
                    "--enable-tvm-ffi) cannot take --host-target (the DSL refuses it): its host code is the build "
                    "machine's, so build it on a machine whose CPU lacks this instruction's extension")


class AvxUnit:
    """The CpuExtension of x86-64 (emu.arch.base): AVX/AVX2 (and some AVX-512 moves) for one emulator."""

    def __init__(self, uc: Uc, verify_cache: bool = True) -> None:
        self.uc = uc
        self.vectors = VectorFile(uc)
        self._decoder = None                      # created on first decode: it imports capstone
        self._cache: dict[int, Instruction] = {}  # address -> decode, for the code mapped now (code_changed)
        self._caches: dict[tuple[int, bytes], dict[int, Instruction]] = {}   # (address, code) -> its decodes
        self.last_error: UnsupportedInstruction | None = None
        # Whether a cached decode is checked against the bytes now at its address.  An
        # owner that knows when code changes (emu's Machine: code is read-only to the
        # guest and rewritten only between runs) turns this off and calls code_changed().
        self.verify_cache = verify_cache
        if reg_read64(uc, _MXCSR) == 0:
            # Unicorn starts with MXCSR = 0: every SIMD exception unmasked, which would make the
            # first inexact result a #XM fault.  A Linux process starts with 0x1F80 (all masked, round
            # to nearest), and so does the emulated one.
            reg_write64(uc, _MXCSR, 0x1F80)

    # -- CpuExtension -----------------------------------------------------------------
    def on_invalid_instruction(self) -> bool:
        rip = reg_read64(self.uc, _RIP)
        try:
            size = self.execute(rip)
        except UnsupportedInstruction as err:
            self.last_error = err
            return False
        reg_write64(self.uc, _RIP, rip + size)
        return True

    def on_site(self, address: int) -> None:
        try:
            insn = self.decode(address)      # execute(), without its frame: this runs per executed site
            insn.handler(self.vectors, insn)
        except UnsupportedInstruction as err:
            self.last_error = err
            self.uc.emu_stop()
            return
        # RIP gets a uc_reg_write of its own: in Unicorn 2.1.4 a uc_reg_write_batch that
        # includes RIP, made inside a code hook, does not redirect execution (the site runs again).
        reg_write64(self.uc, _RIP, address + insn.size)

    def code_changed(self, address: int, code: bytes) -> None:
        """`code` is now mapped at `address`: use the decodes made for exactly that code, kept per code.

        An emulator that runs many objects in turn maps each one's code again and again
        (possibly at an address another object's code used): keeping each code's decodes
        means an object run again never decodes its sites again.  Bounded: a process may
        see any number of objects.
        """
        key = (address, code)
        cache = self._caches.get(key)
        if cache is None:
            if len(self._caches) >= _CODE_CACHES_MAX:
                self._caches.clear()
            cache = self._caches[key] = {}
        self._cache = cache

    def observe_reads(self, observer) -> None:
        self.vectors.observer = observer

    def take_fault(self) -> ExtensionFault | None:
        err, self.last_error = self.last_error, None
        if err is None:
            return None
        if type(err) is UnsupportedInstruction and not err.mnemonic.startswith(("v", "k")):
            # not a vector instruction the unit lacks: an undefined opcode (ud2, garbage bytes)
            return ExtensionFault("invalid_instruction", f"invalid instruction '{err.text}' (#UD on hardware)", err.address)
        return ExtensionFault("unsupported_instruction",
                              f"{err}; emu cannot carry out this instruction. {PORTABLE_REBUILD}", err.address)

    # -- decoding and execution --------------------------------------------------------
    def decode(self, address: int) -> Instruction:
        cached = self._cache.get(address)
        if cached is not None and (not self.verify_cache or self._read(address, len(cached.raw)) == cached.raw):
            return cached
        if self._decoder is None:
            from .decoder import Decoder
            self._decoder = Decoder()
        insn = self._decoder.decode(self._fetch(address), address)
        self._cache[address] = insn
        return insn

    def execute(self, address: int) -> int:
        """Carry out the instruction at `address`; return its size."""
        insn = self.decode(address)
        insn.handler(self.vectors, insn)
        return insn.size

    def _read(self, address: int, size: int) -> bytes:
        return mem_read(self.uc, address, size)

    def _fetch(self, address: int) -> bytes:
        for n in (15, 8, 4, 2, 1):                    # the instruction may end a mapping
            try:
                return self._read(address, n)
            except UcError:
                continue
        raise UnsupportedInstruction(address, 0, "(unmapped)", "")
