"""x86-64: the relocation table, the System V calling convention and the CPU setup."""
