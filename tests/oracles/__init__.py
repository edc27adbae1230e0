"""What emu is compared with: the comparison helpers, and the names of the oracles a test's assertion rests on.

A test whose assertion compares emu with something independent of emu carries `@pytest.mark.oracle(X)`
with one of these names; `.ci/oracle_share.py` counts them.
"""
NATIVE = "native run"
LD = "GNU ld"
CPU = "real CPU"
H200 = "H200 facts"
NVIDIA = "NVIDIA cuda-bindings"
CC = "C compilers (cc, aarch64-linux-gnu-gcc)"
CPYTHON = "CPython's own pickles and inspect"
TVM_FFI = "apache-tvm-ffi's libtvm_ffi.so (native run)"
