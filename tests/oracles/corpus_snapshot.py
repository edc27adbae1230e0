"""Every command's output on the whole committed corpus, written to a folder, to prove a change alters none.

    python tests/oracles/corpus_snapshot.py OUT_DIR                 # snapshot this checkout (a process per command)
    python tests/oracles/corpus_snapshot.py OUT_DIR --in-process    # the same, about 10x faster: `main` called in workers
    python tests/oracles/corpus_snapshot.py --compare A B           # what differs between two snapshots

For every committed object (toy, real-world, old releases, host-CPU): `trace`, `inspect` and `check`,
each as text and as `--json`, with stderr and the exit code; for every scenario file, `run` and
`run --json`.  A fresh process per command, no server, a fresh cache: what a user sees; `--in-process`
calls the command line's `main` in a few worker processes instead (each command's stdout, stderr and exit
code captured), which must give the same snapshot.  `--compare`
ignores what a trace is allowed to change between versions: `trace_version`, the `export` field and each entry's
`raised` (version 3, null but for a TVM-FFI call) and each call's `inner_calls` (version 4, 0 but for a stub that calls back).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = {"trace": ["trace"], "trace.json": ["trace", "--json"], "inspect": ["inspect"],
            "inspect.json": ["inspect", "--json"], "check": ["check"], "check.json": ["check", "--json"]}
ALLOWED_TO_CHANGE = ("trace_version", "export", "raised", "inner_calls")   # raised: version 3 (null outside tvm_ffi); inner_calls: 4


def corpus() -> list[Path]:
    objects = sorted(p for folder in ("tests", "scenarios") for p in (ROOT / folder).rglob("*.o"))
    return [p.relative_to(ROOT) for p in objects]


def scenarios() -> list[Path]:
    return sorted(p.relative_to(ROOT) for p in (ROOT / "scenarios").glob("*.yaml"))


def _run(argv: list[str], env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "emu", *argv], cwd=ROOT, env=env, capture_output=True, text=True)
    return f"rc={done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}"


def _main():
    """The command line's `main`, wherever this checkout keeps it."""
    try:
        from emu.commands.cli import main
    except ImportError:                  # a checkout from before the package layout
        from emu.cli import main
    return main


def _run_in_process(item: tuple[str, list[str], str]) -> None:
    import contextlib
    import io
    name, argv, out = item
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = _main()(argv)
    Path(out, name.replace("/", "__")).write_text(f"rc={code}\n--- stdout\n{stdout.getvalue()}--- stderr\n{stderr.getvalue()}")


def snapshot(out: Path, jobs: int, in_process: bool = False) -> None:
    env = {**os.environ, "EMU_NO_SERVER": "1", "EMU_CACHE_DIR": tempfile.mkdtemp(prefix="emu-snapshot-")}
    work = [(f"{obj}.{name}", [*argv, str(obj)]) for obj in corpus() for name, argv in COMMANDS.items()]
    work += [(f"{s}.run", ["run", str(s)]) for s in scenarios()] + [(f"{s}.run.json", ["run", "--json", str(s)]) for s in scenarios()]
    out.mkdir(parents=True, exist_ok=True)
    if in_process:
        from concurrent.futures import ProcessPoolExecutor
        os.environ.update(env)
        os.chdir(ROOT)
        sys.path.insert(0, str(ROOT))
        with ProcessPoolExecutor(jobs) as pool:
            list(pool.map(_run_in_process, [(name, argv, str(out)) for name, argv in work], chunksize=16))
    else:
        def one(item):
            name, argv = item
            (out / name.replace("/", "__")).write_text(_run(argv, env))

        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, work))
    print(f"{len(work)} outputs in {out}")


def _normalised(text: str) -> str:
    """A trace's JSON without the fields a trace version may change, and the snapshot's own temporary
    folder (scenarios' builds are stored under it) named alike; any other text as it is."""
    text = re.sub(r"emu-snapshot-[A-Za-z0-9_]+", "emu-snapshot-*", text)
    head, sep, rest = text.partition("--- stdout\n")
    body, sep2, tail = rest.partition("--- stderr\n")
    try:
        data = json.loads(body)
    except ValueError:
        return text

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ALLOWED_TO_CHANGE}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    return head + sep + json.dumps(strip(data), indent=1) + "\n" + sep2 + tail


def compare(a: Path, b: Path, renamed: list[str] = ()) -> int:
    """Each output of A against B's; `renamed` (OLD=NEW folder prefixes) says where A's objects moved to in B."""
    moves = [tuple(pair.split("=", 1)) for pair in renamed]

    def moved(text: str, separator: str = "/") -> str:
        for old, new in moves:
            text = text.replace(old.replace("/", separator), new.replace("/", separator))
        return text

    old_names = {moved(p.name, "__"): p for p in a.iterdir()}
    names = sorted(set(old_names) | {p.name for p in b.iterdir()})
    differ = [n for n in names if n not in old_names or not (b / n).exists()
              or _normalised(moved(old_names[n].read_text())) != _normalised((b / n).read_text())]
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(names) - len(differ)} of {len(names)} outputs identical")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    parser.add_argument("--renamed", action="append", default=[], metavar="OLD=NEW",
                        help="with --compare: a folder of objects that moved between A and B")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--in-process", action="store_true", help="call main in worker processes (fast)")
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare, args.renamed)
    if args.out is None:
        parser.error("give OUT_DIR or --compare A B")
    snapshot(args.out, args.jobs, args.in_process)
    return 0


if __name__ == "__main__":
    sys.exit(main())
