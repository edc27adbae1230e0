#!/usr/bin/env bash
# Install the native toolchains the ground-truth tests use (tests/test_native_ground_truth.py):
#   cc                          links x86-64 fixtures with the recording stubs  (build-essential)
#   aarch64-linux-gnu-gcc       links AArch64 fixtures statically               (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross)
#   qemu-aarch64                runs them on an x86-64 machine                  (qemu-user)
# Idempotent: installs only what is missing.  Never fails: without a toolchain those tests skip.
set -u

warn() { echo "install-toolchains: warning: $*" >&2; }

missing=()
command -v cc >/dev/null 2>&1 || missing+=(build-essential)
if [ "$(uname -m)" != "aarch64" ]; then
  command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing+=(gcc-aarch64-linux-gnu)
  [ -e /usr/aarch64-linux-gnu/lib/libc.a ] || missing+=(libc6-dev-arm64-cross)
  command -v qemu-aarch64 >/dev/null 2>&1 || missing+=(qemu-user)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-toolchains: cc, aarch64-linux-gnu-gcc and qemu-aarch64 already present"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  warn "no apt-get; not installing ${missing[*]} (the native comparisons that need them will skip)"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    warn "not root and no passwordless sudo; not installing ${missing[*]} (the native comparisons that need them will skip)"
    exit 0
  fi
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-toolchains: installing ${missing[*]}"
if ! ${sudo[@]+"${sudo[@]}"} apt-get update -qq; then
  warn "apt-get update failed; trying the install with the current package lists"
fi
if ! ${sudo[@]+"${sudo[@]}"} apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  warn "apt-get install ${missing[*]} failed (the native comparisons that need them will skip)"
fi
exit 0
