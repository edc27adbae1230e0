#!/bin/sh
# Builds and runs the native program; its output is native_output.txt (committed):
#   sh tests/cuda/native_library_once/build.sh "$(python -m cutlass.cute.export.aot_config --libdir)" > tests/cuda/native_library_once/native_output.txt
# $1: the DSL's library directory (nvidia-cutlass-dsl 4.8.0 and 4.8.1 ship the same tvm_ffi_extension.c.o);
# $2: where to build (default: a temporary directory); CC picks the compiler (default cc).
set -e
here=$(dirname "$0")
out=${2:-$(mktemp -d)}
${CC:-cc} -O1 -o "$out/library_once" "$here/main.c" "$here/scenarios.c" "$here/standin.c" "$1/libcuda_dialect_runtime_static.a"
"$out/library_once"
