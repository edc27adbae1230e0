"""AArch64: the relocation table, the AAPCS64 calling convention and the CPU setup."""
