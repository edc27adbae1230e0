"""Store a probe run's facts in the repository: validate every line, keep only the facts, gzip.

`python -m emu.probe.store RAW_DIR DEST_DIR` reads `RAW_DIR/*.jsonl` (what `run.sh` wrote), checks
each line against the models of `facts.py`, drops lines that are not JSON objects (output a kernel or
the export printed to stdout, from harnesses built before fd 1 was kept for facts alone), and writes
`DEST_DIR/<name>.jsonl.gz` (gzip without a timestamp, so the same facts give the same bytes).  The
facts are stored compressed because they are large (about 30 MB of JSON lines for the toy and
real-world fixtures) and highly repetitive (every line names its object and sha256).
"""
from __future__ import annotations

import gzip
import sys
from pathlib import Path

from .facts import parse_fact


def store(raw: Path, dest: Path) -> list[tuple[str, int, int]]:
    """(name, facts kept, lines dropped) for every facts file of `raw`."""
    dest.mkdir(parents=True, exist_ok=True)
    summary = []
    for path in sorted(raw.glob("*.jsonl")):
        kept, dropped = [], 0
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if not line.startswith("{"):
                dropped += 1
                continue
            parse_fact(line, f"{path}:{number}")
            kept.append(line + "\n")
        with open(dest / (path.name + ".gz"), "wb") as raw_out, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw_out, mtime=0, compresslevel=9) as out:
            out.write("".join(kept).encode())
        summary.append((path.stem, len(kept), dropped))
    return summary


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m emu.probe.store RAW_DIR DEST_DIR", file=sys.stderr)
        return 2
    for name, kept, dropped in store(Path(args[0]), Path(args[1])):
        print(f"{name}: {kept} facts" + (f", {dropped} non-JSON lines dropped" if dropped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
