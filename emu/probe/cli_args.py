"""The `probe` command's arguments: argparse alone, so that building the CLI's parser (for `--help` or an
unknown command) does not import the probe's builders and facts models."""
from __future__ import annotations


def add_probe_parser(commands) -> None:
    probe = commands.add_parser("probe", help="measure exports on this machine's NVIDIA GPU (needs nvcc) and write facts")
    probe.add_argument("objects", nargs="*", metavar="OBJECT", help="exports (.o with their .h beside them)")
    probe.add_argument("--out", required=True, metavar="DIR", help="facts folder (with --build-only: the build folder)")
    probe.add_argument("--build-only", action="store_true", help="only build the harnesses and DIR/run.sh")
    probe.add_argument("--sweep", action="append", metavar="GLOB", help="exports (by path) that also get the launch sweep")
    probe.add_argument("--no-toys", action="store_true", help="leave out the probe's own toy kernels")
    probe.add_argument("--jobs", type=int, default=2, help="parallel nvcc builds (default 2)")
