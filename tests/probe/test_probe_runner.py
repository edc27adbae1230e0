"""run.sh (what runs on the GPU machine) restarts a harness whose context an execution error poisoned,
without repeating lines or the failing launch, and records a harness that stopped early."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from emu.probe.build import RUNNER
from emu.probe.facts import read_facts

# A stand-in harness that follows the real one's replay rules: --skip N suppresses the first N lines,
# --bad S skips launch S (and counts the execution line that followed it).
FAKE = """#!/bin/sh
skip=0; bad=""
while [ $# -gt 0 ]; do case "$1" in --skip) skip=$2; shift;; --bad) bad="$bad $2"; shift;; esac; shift; done
emit() { if [ "$1" -ge "$skip" ]; then echo "$2"; fi; }
head='"object":"a.o","sha256":"00"'
emit 0 "{\\"kind\\":\\"load\\",$head,\\"result\\":0}"
emit 1 "{\\"kind\\":\\"get_kernel\\",$head,\\"kernel\\":\\"k\\",\\"result\\":0}"
case " $bad " in *" 2 "*) ;; *)
  emit 2 "{\\"kind\\":\\"launch\\",$head,\\"kernel\\":\\"k\\",\\"via\\":\\"cudaLaunchKernelEx\\",\\"config\\":{\\"grid\\":[1,1,1],\\"block\\":[1,1,1],\\"dynamic_smem\\":0,\\"attrs\\":[]},\\"pre\\":{},\\"result\\":0}"
  emit 3 "{\\"kind\\":\\"execution\\",$head,\\"seq\\":2,\\"result\\":700}"
  exit 3;;
esac
emit 4 "{\\"kind\\":\\"wrapper_return\\",$head,\\"result\\":0}"
"""


@pytest.mark.skipif(shutil.which("timeout") is None, reason="run.sh uses coreutils' timeout")
def test_restart_and_crash(tmp_path):
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True)
    shutil.copy(RUNNER, build / "run.sh")
    (build / "bin" / "good").write_text(FAKE)
    (build / "bin" / "crash").write_text("#!/bin/sh\nkill -SEGV $$\n")
    for name in ("good", "crash"):
        (build / "bin" / name).chmod(0o755)
    (build / "targets.tsv").write_text("good\ta.o\t00\tgood\t-\ncrash\tb.o\t11\tcrash\tFOO=1\n")
    subprocess.run(["sh", str(build / "run.sh"), str(tmp_path / "facts")], check=True, capture_output=True)
    good = read_facts(tmp_path / "facts" / "good.jsonl")
    assert [f.kind for f in good] == ["load", "get_kernel", "launch", "execution", "wrapper_return"]
    crash = read_facts(tmp_path / "facts" / "crash.jsonl")
    assert [(f.kind, f.object, f.sha256, f.result) for f in crash] == [("harness_exit", "b.o", "11", 139)]
    log = (tmp_path / "facts" / "probe.log").read_text()
    assert "good rc=3" in log and "good rc=0" in log
