"""Every command's output on the whole committed corpus, written to a folder, to prove a change alters none.

    python tests/oracles/corpus_snapshot.py OUT_DIR            # snapshot this checkout
    python tests/oracles/corpus_snapshot.py --compare A B      # what differs between two snapshots

For every committed object (toy, real-world, old releases, host-CPU): `trace`, `inspect` and `check`,
each as text and as `--json`, with stderr and the exit code; for every scenario file, `run` and
`run --json`.  A fresh process per command, no server, a fresh cache: what a user sees.  `--compare`
ignores what a trace is allowed to change between versions: `trace_version` and the `export` field.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = {"trace": ["trace"], "trace.json": ["trace", "--json"], "inspect": ["inspect"],
            "inspect.json": ["inspect", "--json"], "check": ["check"], "check.json": ["check", "--json"]}
ALLOWED_TO_CHANGE = ("trace_version", "export")


def corpus() -> list[Path]:
    objects = sorted(p for folder in ("tests", "scenarios") for p in (ROOT / folder).rglob("*.o"))
    return [p.relative_to(ROOT) for p in objects]


def scenarios() -> list[Path]:
    return sorted(p.relative_to(ROOT) for p in (ROOT / "scenarios").glob("*.yaml"))


def _run(argv: list[str], env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "emu", *argv], cwd=ROOT, env=env, capture_output=True, text=True)
    return f"rc={done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}"


def snapshot(out: Path, jobs: int) -> None:
    env = {**os.environ, "EMU_NO_SERVER": "1", "EMU_CACHE_DIR": tempfile.mkdtemp(prefix="emu-snapshot-")}
    work = [(f"{obj}.{name}", [*argv, str(obj)]) for obj in corpus() for name, argv in COMMANDS.items()]
    work += [(f"{s}.run", ["run", str(s)]) for s in scenarios()] + [(f"{s}.run.json", ["run", "--json", str(s)]) for s in scenarios()]
    out.mkdir(parents=True, exist_ok=True)

    def one(item):
        name, argv = item
        (out / name.replace("/", "__")).write_text(_run(argv, env))

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, work))
    print(f"{len(work)} outputs in {out}")


def _normalised(text: str) -> str:
    """A trace's JSON without the fields a trace version may change; any other text as it is."""
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


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    differ = [n for n in names if not (a / n).exists() or not (b / n).exists()
              or _normalised((a / n).read_text()) != _normalised((b / n).read_text())]
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(names) - len(differ)} of {len(names)} outputs identical")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        parser.error("give OUT_DIR or --compare A B")
    snapshot(args.out, args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
