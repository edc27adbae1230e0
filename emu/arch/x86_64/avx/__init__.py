"""AVX for Unicorn 2.1.4: the vector instructions host-CPU exports use, carried out in Python.

unit: the CpuExtension (hooks in, faults out); scan: where the vector instructions are;
decoder and operands: what one instruction is; what it does: semantics and fast_paths
(moves, logic), sse_twin and wide (arithmetic through the legacy SSE instruction on
calculator's private Unicorn, per 128-bit lane), fma, compare, dot, permute and f16c (in
Python, on ieee's exact rounding), nan_rule (SSE's NaN choice where the twin differs);
vector_file: the registers, as VEX/EVEX write them.  README.md beside this file lists every mnemonic carried out.
"""
from .errors import MemoryFault, MisalignedAccess, UnsupportedInstruction
from .unit import AvxUnit

__all__ = ["AvxUnit", "MemoryFault", "MisalignedAccess", "UnsupportedInstruction"]
