"""x86-64 assembled from its three parts."""
from ..base import Architecture
from .calling_convention import SYSTEM_V_AMD64
from .cpu import X86_64Cpu
from .relocations import DYNAMIC_TABLE, NAMES, TABLE

X86_64 = Architecture(name="x86_64", relocations=TABLE, dynamic_relocations=DYNAMIC_TABLE,
                      relocation_names=NAMES, convention=SYSTEM_V_AMD64, cpu=X86_64Cpu())
