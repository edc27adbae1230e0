"""Former home of the driver models; they now live in driver.py.  Kept for older imports."""

from .driver import CuKernelGetAttribute

__all__ = ["CuKernelGetAttribute"]
