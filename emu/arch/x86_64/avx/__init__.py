"""AVX for Unicorn 2.1.4: the vector instructions host-CPU exports use, carried out in Python.

unit: the CpuExtension (hooks in, faults out); scan: where the vector instructions are;
decoder and operands: what one instruction is; semantics, fast_paths and sse_twin: what
it does; vector_file: the registers, as VEX/EVEX write them.
"""
from .errors import MemoryFault, MisalignedAccess, UnsupportedInstruction
from .unit import AvxUnit

__all__ = ["AvxUnit", "MemoryFault", "MisalignedAccess", "UnsupportedInstruction"]
