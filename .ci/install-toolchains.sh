#!/usr/bin/env bash
# Install the native toolchains the native oracles use, then prove they work; exit non-zero when they do not.
#   cc                       links x86-64 fixtures with the recording stubs   (build-essential)
#   aarch64-linux-gnu-gcc    links AArch64 fixtures statically                (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross)
#   qemu-aarch64             runs them on an x86-64 machine                   (qemu-user)
# Users: tests/ground_truth/ (native traces, patched check objects, the seed's record_loader.c, shared libraries),
# tests/binary/test_hostile_input.py (cc).  Idempotent: installs only what is missing (apt-get, as root or with
# passwordless sudo).  Exit 0 only when a C program was compiled and run for each architecture;
# otherwise exit 1 naming what is missing (.ci/run then says so and fails, see there).
set -u

fail() { echo "install-toolchains: FAILED: $*" >&2; exit 1; }

machine="$(uname -m)"
[ "$machine" = "x86_64" ] || fail "this is a $machine machine: the x86-64 native oracle (tests/oracles/native_harness.py) runs x86-64 objects only on an x86-64 machine"

missing=()
command -v cc >/dev/null 2>&1 || missing+=(build-essential)
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing+=(gcc-aarch64-linux-gnu)
[ -e /usr/aarch64-linux-gnu/lib/libc.a ] || missing+=(libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null 2>&1 || missing+=(qemu-user)

if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || fail "no apt-get to install ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo=(sudo -n)
    else
      fail "not root and no passwordless sudo: cannot install ${missing[*]}"
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  echo "install-toolchains: installing ${missing[*]}"
  ${sudo[@]+"${sudo[@]}"} apt-get update -qq || echo "install-toolchains: apt-get update failed; trying the current package lists" >&2
  ${sudo[@]+"${sudo[@]}"} apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || fail "apt-get install ${missing[*]} failed"
fi

# Prove each toolchain links and runs a program, the way the oracles use it.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf '#include <stdio.h>\nint main(void) { printf("ok\\n"); return 0; }\n' > "$work/ok.c"
cc -o "$work/ok-x86_64" "$work/ok.c" 2>"$work/err" || fail "cc cannot link a C program: $(cat "$work/err")"
[ "$("$work/ok-x86_64")" = ok ] || fail "a program linked by cc does not run"
aarch64-linux-gnu-gcc -static -o "$work/ok-aarch64" "$work/ok.c" 2>"$work/err" \
  || fail "aarch64-linux-gnu-gcc -static cannot link a C program: $(cat "$work/err")"
[ "$(qemu-aarch64 "$work/ok-aarch64")" = ok ] || fail "qemu-aarch64 does not run a static AArch64 program"
# tests/oracles/shared_native.py dlopens AArch64 shared libraries: a dynamic program under qemu's -L sysroot
aarch64-linux-gnu-gcc -o "$work/ok-aarch64-dynamic" "$work/ok.c" -ldl 2>"$work/err" \
  || fail "aarch64-linux-gnu-gcc cannot link a dynamic C program: $(cat "$work/err")"
[ "$(qemu-aarch64 -L /usr/aarch64-linux-gnu "$work/ok-aarch64-dynamic")" = ok ] \
  || fail "qemu-aarch64 -L /usr/aarch64-linux-gnu does not run a dynamic AArch64 program"
echo "install-toolchains: cc, aarch64-linux-gnu-gcc (static and dynamic) and qemu-aarch64 link and run C programs"
