"""Mnemonic -> builder, for the instructions carried out in Python whose handler is made per decoded form.

A builder takes the decoded instruction, checks its encoding and operands once (raising
UnsupportedInstruction where it cannot carry it out: EVEX forms among them) and returns
the handler with what it needs baked in.
"""
from __future__ import annotations

from typing import Callable

from . import compare, dot, f16c, fma, permute
from .operands import Instruction
from .semantics import Handler

BUILDERS: dict[str, Callable[[Instruction], Handler]] = {
    **fma.BUILDERS, **compare.BUILDERS, **permute.BUILDERS, **f16c.BUILDERS, **dot.BUILDERS}
