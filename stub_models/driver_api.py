"""Former home of the driver models; they now live in driver.py.  Kept for older imports."""
from __future__ import annotations

from .driver import CuKernelGetAttribute

__all__ = ["CuKernelGetAttribute"]
