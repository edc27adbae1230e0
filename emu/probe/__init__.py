"""The probe: measures what a real NVIDIA GPU answers for CuTe DSL exports (load, kernel attributes,
occupancy, attribute setters, launches) and writes them as facts, the ground truth the CUDA model is
tested against.  `python -m emu probe --help`; README.md beside this file says how it works.
"""
