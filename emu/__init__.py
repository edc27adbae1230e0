"""emu: run the host loaders of CuTe DSL ahead-of-time exports on a CPU emulator.

`emu.run.run_object` runs one object; `emu.scenario` runs YAML scenarios; the CLI is
`python -m emu`.
"""

__version__ = "0.1.0"
