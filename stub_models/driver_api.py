"""Former home of the driver models; they now live in driver.py (cuKernelGetAttribute in loaders.py).  Kept for older imports."""

from .loaders import CuKernelGetAttribute

__all__ = ["CuKernelGetAttribute"]
