#!/usr/bin/env bash
# The project's CI job, as docs/ci.md shows it: install, export, check against the baseline, run the scenarios.
set -uo pipefail
EMU_SOURCE=${EMU_SOURCE:?where the team gets emu from: a git URL with @tag, a wheel, or a checkout}
python3 -m venv .venv && . .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q "cute-emu[dsl,test] @ ${EMU_SOURCE}"
export CUDA_VISIBLE_DEVICES="" CUTE_DSL_ARCH=sm_90a CUTE_DSL_NO_CACHE=1
python tools/export_kernels.py --out build/exports --carveouts "${CARVEOUTS:-25,50}" || exit $?
status=0
python -m emu check build/exports --baseline emu-baseline.json --json > emu-check.json || status=$?
python -m emu check build/exports --baseline emu-baseline.json | tail -n 20
python -m emu run --json scenarios > emu-scenarios.json || true          # the record; pytest below is the gate
python -m pytest scenarios -rs -p no:cacheprovider --junitxml=emu-junit.xml || status=$?
exit $status
