"""AArch64 assembled from its three parts."""
from ..base import Architecture
from .calling_convention import AAPCS64
from .cpu import Aarch64Cpu
from .relocations import DYNAMIC_TABLE, NAMES, TABLE

AARCH64 = Architecture(name="aarch64", relocations=TABLE, dynamic_relocations=DYNAMIC_TABLE,
                       relocation_names=NAMES, convention=AAPCS64, cpu=Aarch64Cpu())
