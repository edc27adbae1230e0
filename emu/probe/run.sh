#!/bin/sh
# Run every harness built by `python -m emu probe --build-only` and collect its facts.
# Usage: run.sh OUTDIR   (from anywhere; needs an NVIDIA GPU and its driver, nothing else)
# targets.tsv: facts name, object label, sha256, binary, environment for the run (or -).
# Each harness prints JSON lines; one that stops with exit code 3 hit an execution error that
# poisoned its CUDA context: it is started again, skipping the lines it already printed and the launch
# that failed.  Any other failure is recorded as a {"kind":"harness_exit"} line.  Harnesses run one at
# a time so that no two share the GPU while launches are measured.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR}
mkdir -p "$out"
log="$out/probe.log"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1; } > "$log"
while IFS="$(printf '\t')" read -r name label sha binary env; do
  [ "$env" = "-" ] && env=""
  facts="$out/$name.jsonl"
  : > "$facts"
  extra=""
  tries=0
  while :; do
    start=$(date +%s)
    # shellcheck disable=SC2086
    env $env timeout "${PROBE_TIMEOUT:-300}" "$here/bin/$binary" --skip "$(wc -l < "$facts")" $extra >> "$facts" 2>> "$log"
    rc=$?
    echo "$name rc=$rc $(( $(date +%s) - start ))s lines=$(wc -l < "$facts")" >> "$log"
    if [ "$rc" -eq 3 ] && [ "$tries" -lt 400 ]; then
      seq=$(tail -n 1 "$facts" | sed -n 's/.*"seq":\([0-9]*\).*/\1/p')
      extra="$extra --bad $seq"
      tries=$((tries + 1))
      continue
    fi
    if [ "$rc" -ne 0 ]; then
      printf '{"kind":"harness_exit","object":"%s","sha256":"%s","result":%d}\n' "$label" "$sha" "$rc" >> "$facts"
    fi
    break
  done
done < "$here/targets.tsv"
