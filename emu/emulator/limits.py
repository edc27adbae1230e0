"""How far one entry may run before it stops with a fault.

emu.emulator.machine enforces them; they live here, importing nothing, so that a scenario's
defaults (emu.dsl.entries, emu.scenario) are read without importing the emulator and Unicorn.
"""
DEFAULT_BUDGET = 1_000_000          # guest instructions per entry
DEFAULT_TIMEOUT_S = 5.0
