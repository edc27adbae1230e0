"""The CUDA runtime model the stubs act on: device profiles, configuration and state."""
