#!/bin/sh
# Builds and runs the native program (main.c, scenarios.c, standin.c and the DSL's static runtime); what it prints
# is the committed output:
#   sh tests/cuda/native_library_once/build.sh "$(python -m cutlass.cute.export.aot_config --libdir)" \
#       > tests/cuda/native_library_once/native_output_x86_64.txt
#   CC=aarch64-linux-gnu-gcc RUN="qemu-aarch64 -L /usr/aarch64-linux-gnu" sh tests/cuda/native_library_once/build.sh \
#       WHEEL/nvidia_cutlass_dsl/cu12/lib > tests/cuda/native_library_once/native_output_aarch64.txt
# $1: the DSL's library directory (nvidia-cutlass-dsl 4.8.0 and 4.8.1 ship the same tvm_ffi_extension.c.o; for
# AArch64, WHEEL is the unpacked nvidia_cutlass_dsl_libs_cu12-4.8.1-cp311-cp311-manylinux_2_28_aarch64.whl, from
# `pip download --platform manylinux_2_28_aarch64 --only-binary=:all: --no-deps nvidia-cutlass-dsl-libs-cu12==4.8.1`);
# $2: where to build (default: a temporary directory); CC the compiler (default cc), RUN what runs the program.
set -e
here=$(dirname "$0")
out=${2:-$(mktemp -d)}
${CC:-cc} -O1 -o "$out/library_once" "$here/main.c" "$here/scenarios.c" "$here/standin.c" "$1/libcuda_dialect_runtime_static.a"
${RUN:-} "$out/library_once"
