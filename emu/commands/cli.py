"""`python -m emu`: run scenarios, trace objects, print schemas.

Exit codes: 0 every expectation holds, 1 an expectation failed, 2 bad input (an
unreadable or invalid scenario or object), 3 a run stopped with a fault the scenario
did not expect, 4 an internal error (a bug).  Errors are one paragraph on stderr,
never a traceback.
"""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

PROFILES = ("h200", "a100", "b200")     # emu.cuda.profile.PROFILES, named here so that parsing imports nothing

from ..errors import (EXIT_BAD_INPUT, EXIT_EXPECTATION_FAILED, EXIT_FAULT, EXIT_INTERNAL, EXIT_OK, EmuError,
                      ObjectFormatError)


COMMANDS = ("run", "trace", "inspect", "check", "occupancy", "serve", "schema")
SCHEMAS = ("scenario", "trace", "result", "check", "inspect", "occupancy")     # emu.commands.schema.schemas(), named here likewise
MAX_DEVICES = 64                  # RuntimeConfig.device_count's bound (emu.cuda.config), named here likewise
MODULE_PROG = "python -m emu"
_PARSERS: dict[tuple[bool, str, str | None], argparse.ArgumentParser] = {}


def program_name(argv0: str) -> str:
    """What the user typed: `emu` for the console script (pip's wrapper keeps its own name as argv[0],
    without .exe), `python -m emu` otherwise (argv[0] is then emu/__main__.py, in a served child too)."""
    name = os.path.basename(argv0)
    return "emu" if name in ("emu", "emu.exe") else MODULE_PROG


def _device_count(text: str) -> int:
    """--devices: a number of devices, checked here so that the error names the flag."""
    import argparse
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of devices") from None
    if not 0 <= count <= MAX_DEVICES:
        raise argparse.ArgumentTypeError(f"{count} is not a device count emu models (0 to {MAX_DEVICES})")
    return count


def _parser(with_probe: bool, prog: str = MODULE_PROG, only: str | None = None) -> argparse.ArgumentParser:
    """The command line, built once per process and program name (a served child, always `python -m emu`,
    finds it built by the server).

    Only a process that may be a probe (or asks for help) gets the probe's command (its
    arguments alone: emu.probe.cli_args imports nothing heavy).  `only`: a command the process
    runs, whose parser is then the only one built (each costs argparse's formatter and
    translation look-ups: ~1 ms of a cold run apiece); its parsing, usage and help are those of
    the whole command line's.
    """
    for key in ((with_probe, prog, None), (with_probe, prog, only)):
        if key in _PARSERS:
            return _PARSERS[key]
    import argparse
    from .. import __version__
    parser = argparse.ArgumentParser(prog=prog, description="Run CuTe DSL AOT export loaders on a CPU emulator.")
    parser.add_argument("--version", action="version", version=f"emu {__version__}",
                        help="print emu's version and exit")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, add in _COMMAND_PARSERS.items():
        if only is None or name == only:
            add(commands)
    if with_probe:
        from ..probe.cli_args import add_probe_parser
        add_probe_parser(commands)
    _PARSERS[with_probe, prog, only] = parser
    return parser


def _add_run(commands) -> None:
    run = commands.add_parser("run", help="run scenario files and check their expectations")
    run.add_argument("scenarios", nargs="+", metavar="SCENARIO|DIRECTORY",
                     help="a scenario file, or a folder: every *.yaml and *.yml under it, sorted")
    run.add_argument("--json", action="store_true", help="print the machine-readable result")
    run.add_argument("--quiet", action="store_true", help="print only the expectation results")


def _add_trace(commands) -> None:
    trace = commands.add_parser("trace", help="run an object's loaders (and launch) with default stubs and print every call")
    trace.add_argument("objects", nargs="+", metavar="OBJECT")
    trace.add_argument("--json", action="store_true", help="print the machine-readable trace")
    trace.add_argument("--devices", type=_device_count, default=None, help="number of devices (default: the profile's)")
    trace.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                       help="a launch argument by parameter name; VALUE is JSON (7, 2.5, [128,64], "
                       "'{\"dynamic_shapes\": [1024]}'); repeatable")
    trace.add_argument("--args", metavar="FILE", help='launch arguments: JSON {"args": {name: value}} (--arg wins); for a '
                       "TVM-FFI export, YAML or JSON holding the positional list [{tensor: {dtype, shape, strides, data, "
                       "byte_offset, device}}, {int: N}, {float: X}, {bool: B}, {stream: HANDLE}, {shape: [N, ...]}, "
                       "{tuple: [item, ...]}, null]")
    trace.add_argument("--profile", choices=PROFILES, default="h200", help="device profile (default: h200, measured)")
    trace.add_argument("--export", metavar="NAME", help="only the export called NAME in each file (a library or object "
                       "linked from several exports; default: every export)")


def _add_inspect(commands) -> None:
    inspect = commands.add_parser("inspect", help="show what an export holds: entries, kernels, metadata, signature, binary, symbols")
    inspect.add_argument("object", metavar="OBJECT")
    inspect.add_argument("--json", action="store_true", help="print the machine-readable description")


def _add_check(commands) -> None:
    check = commands.add_parser("check", help="check that the loaders apply every attribute kernel_info asks for")
    check.add_argument("paths", nargs="+", metavar="OBJECT|DIRECTORY")
    check.add_argument("--json", action="store_true", help="print the full machine-readable result")
    check.add_argument("--devices", type=_device_count, default=None, help="number of devices (default: the profile's)")
    check.add_argument("--profile", choices=PROFILES, default=None,
                       help="device profile for every object (default: per export, the first whose device runs its GPU binary)")
    check.add_argument("--missing-symbols", choices=("error", "return_zero"), default="error",
                       help="a call to an undefined symbol emu has no stub for: stop the loader (default) or return 0")
    acknowledged = check.add_mutually_exclusive_group()
    acknowledged.add_argument("--baseline", metavar="FILE", help="findings a project acknowledges (known upstream bugs): "
                              "shown, not failing; an entry whose finding no longer appears fails until rewritten")
    acknowledged.add_argument("--write-baseline", metavar="FILE", help="write every current finding to FILE as the baseline "
                              "(keeping each entry's note) and exit 0")


def _add_occupancy(commands) -> None:
    occupancy = commands.add_parser("occupancy", help="resident blocks per SM of each kernel for block sizes x dynamic "
                                    "shared memory, with what limits them")
    occupancy.add_argument("object", metavar="OBJECT")
    occupancy.add_argument("--kernel", metavar="K", help="only this kernel (default: every kernel of every export)")
    occupancy.add_argument("--block", type=_numbers, metavar="N[,N...]", help="block sizes (default: 32 to 1024, step 32)")
    occupancy.add_argument("--smem", type=_numbers, metavar="BYTES[,...]",
                           help="dynamic shared memory per block (default: 0,1024,16384,49152,100000,232448)")
    occupancy.add_argument("--carveout", type=int, metavar="P", help="PREFERRED_SHARED_MEMORY_CARVEOUT (-1 to 100) set "
                           "first (default: as the loaders left it)")
    occupancy.add_argument("--profile", choices=PROFILES, default=None,
                           help="device profile (default: per export, the first whose device runs its GPU binary)")
    occupancy.add_argument("--cluster", type=_numbers, metavar="X[,Y[,Z]]", help="also answer "
                           "cudaOccupancyMaxActiveClusters for this cluster (default: the kernel's compile-time cluster)")
    occupancy.add_argument("--json", action="store_true", help="print the full machine-readable result")


def _add_serve(commands) -> None:
    serve = commands.add_parser("serve", help="run the warm server that later `python -m emu` commands use (foreground)")
    serve.add_argument("--stop", action="store_true", help="stop the running server (it finishes the commands it runs)")
    serve.add_argument("--status", action="store_true", help="say whether a server is running and whether it serves this emu")


def _add_schema(commands) -> None:
    schema = commands.add_parser("schema", help="print a JSON Schema (as in emu/schemas/NAME.schema.json), or all of them by name")
    schema.add_argument("which", nargs="?", choices=(*SCHEMAS, "all"), default="all", metavar="NAME",
                        help=f"one of {', '.join(SCHEMAS)}: that schema itself; all (the default): "
                        "{name: schema} for every one")


_COMMAND_PARSERS = {"run": _add_run, "trace": _add_trace, "inspect": _add_inspect, "check": _add_check, "occupancy": _add_occupancy, "serve": _add_serve, "schema": _add_schema}


_RUN_FLAGS = ("--json", "--quiet")


def _plain_run(argv: list[str]):
    """What argparse makes of `run [--json] [--quiet] FILE...` (the flags before or after the files), without
    importing it (argparse, gettext and locale, and the parser: about 3 ms of a cold run); None for any other
    command line, which argparse parses (help, errors, `--`, abbreviations, anything starting with `-`)."""
    if not argv or argv[0] != "run":
        return None
    rest = argv[1:]
    files = [index for index, arg in enumerate(rest) if arg not in _RUN_FLAGS]
    if not files or files[-1] - files[0] + 1 != len(files) or any(rest[index].startswith("-") for index in files):
        return None
    from types import SimpleNamespace
    return SimpleNamespace(command="run", scenarios=[rest[index] for index in files], json="--json" in rest,
                           quiet="--quiet" in rest)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = _plain_run(argv)
    if args is None:
        known = bool(argv) and argv[0] in COMMANDS
        parser = _parser(with_probe=not known, prog=program_name(sys.argv[0]), only=argv[0] if known else None)
        try:
            args = parser.parse_args(argv)
        except SystemExit as exit_:
            return EXIT_BAD_INPUT if exit_.code else EXIT_OK
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "trace":
            return _trace(args)
        if args.command == "inspect":
            return _inspect(args)
        if args.command == "check":
            return _check(args)
        if args.command == "occupancy":
            return _occupancy(args)
        if args.command == "serve":
            return _serve(args)
        if args.command == "probe":
            from ..probe.command import probe_command
            return probe_command(args)
        return _schema(args)
    except EmuError as error:
        print(f"emu: error: {error.render()}", file=sys.stderr)
        return error.exit_code
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        print("emu: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # a bug in emu: still one paragraph, never a traceback
        print(f"emu: internal error: {type(error).__name__}: {error}. This is a bug in emu; "
              "please report it with the command and input that caused it.", file=sys.stderr)
        return EXIT_INTERNAL


def _run(args) -> int:
    from ..scenario.load import load_scenarios, scenario_files
    loaded = [variant for path in scenario_files(args.scenarios) for variant in load_scenarios(path)]
    from .report import print_scenario           # the emulator and the report: only once every file is valid
    from ..scenario.names import check_objects
    from ..scenario.runner import run_scenario

    for scenario in loaded:                      # every object (built if need be) valid before any runs
        check_objects(scenario)

    results = [run_scenario(scenario) for scenario in loaded]
    if args.json:
        _print_json({"passed": all(r.passed for r in results), "scenarios": [r.model_dump(mode="json") for r in results]})
    else:
        for result in results:
            print_scenario(result, quiet=args.quiet)
    if any(r.faulted for r in results):
        return EXIT_FAULT
    return EXIT_OK if all(r.passed for r in results) else EXIT_EXPECTATION_FAILED


def _trace(args) -> int:
    if args.devices is None and not args.arg and not args.args:   # nothing else can fail before the first object is read
        _readable(args.objects[0], "trace")
    from .launch_args import launch_args_from_cli

    runtime = {"profile": args.profile, **({"device_count": args.devices} if args.devices is not None else {})}
    launch_args = launch_args_from_cli(args.arg, args.args)
    for path in args.objects:
        _readable(path, "trace")
    import warnings
    from ..api import trace
    from ..errors import UnknownFormatWarning
    from .render import format_warning, show_run
    from ..run.session import EntryNotRun

    from ..cache.loaded import load_image

    runs, stopped = [], []
    for path in args.objects:
        _image, exports = load_image(path)
        if args.export is not None:             # one export, by name: BadInput naming the file's exports otherwise
            from ..dsl.exports import choose
            exports = [choose(exports, args.export, path)]
        for export in exports:                  # every export of the object, each on its own runtime
            try:
                with warnings.catch_warnings():     # flagged below, on stderr and in the output, in emu's words
                    warnings.simplefilter("ignore", UnknownFormatWarning)
                    runs.append(trace(path, runtime=runtime, launch_args=launch_args,
                                      export=export.name if len(exports) > 1 or args.export else None))
            except EntryNotRun as reason:       # a launch that cannot be built keeps the loaders' trace
                runs.append(reason.run)
                stopped.append(reason)
    if args.json:
        _print_json([r.model_dump(mode="json") for r in runs])
    else:
        for run in runs:
            print("\n".join(show_run(run)))
    for run in runs:                            # flagged, not refused: trace is how one sees what such loaders do
        if run.format_warning:
            print(f"emu: warning: {run.object}: {format_warning(run)}", file=sys.stderr)
    for reason in stopped:
        print(f"emu: error: {reason.render()}", file=sys.stderr)
    if stopped:
        return EXIT_BAD_INPUT if any(r.exit_code == EXIT_BAD_INPUT for r in stopped) else stopped[0].exit_code
    return EXIT_FAULT if any(r.fault for r in runs) else EXIT_OK


def _print_json(value) -> None:
    """Print plain JSON data, indented: pydantic-core's encoder writes it several times faster than `json`'s."""
    from pydantic_core import to_json
    print(to_json(value, indent=1).decode())


def _inspect(args) -> int:
    _readable(args.object, "inspect")
    from .inspect import inspect_object, show_inspect
    results = inspect_object(args.object)
    if args.json and len(results) == 1:
        print(results[0].model_dump_json(indent=1))
    elif args.json:                           # several exports: a list of their descriptions, by prefix
        _print_json([result.model_dump(mode="json") for result in results])
    else:
        print("\n\n".join("\n".join(show_inspect(result)) for result in results))
    return EXIT_OK


def _readable(path: str, command: str) -> None:
    """Fail as reading the object would, before importing the emulator: a path that does not resolve; a folder
    (a kernel cache, say) with the command that takes one."""
    try:
        os.stat(path)
    except OSError as error:                  # opening it would fail with the same error
        raise ObjectFormatError.unreadable(path, error) from None
    if os.path.isdir(path):
        raise ObjectFormatError(f"is a folder: `{command}` reads object files and shared libraries (`python -m emu "
                                f"check {path}` checks every object under a folder, a kernel cache's too)", path=path)


def _check(args) -> int:
    from .baseline import read_baseline, write_baseline
    from .check import check_objects, find_objects, stderr_progress
    from .check_findings import object_keys
    from .check_text import show_check
    baseline = read_baseline(args.baseline) if args.baseline else None        # a bad file fails before any run
    objects, directories = find_objects(args.paths)
    result = check_objects(objects, args.devices, stderr_progress if directories else None, args.profile,
                           keys=object_keys(args.paths, objects), baseline=baseline, baseline_file=args.baseline or "",
                           missing_symbols=args.missing_symbols)
    for obj in result.objects:
        if obj.error:
            print(f"emu: error: {obj.object}: {obj.error}", file=sys.stderr)
    print(result.model_dump_json(indent=1) if args.json else "\n".join(show_check(result, directories)))
    if args.write_baseline:
        written = write_baseline(args.write_baseline, result.objects)
        print(f"emu: wrote {written} finding(s) to the baseline {args.write_baseline}", file=sys.stderr)
        return EXIT_OK
    return result.exit_code


def _numbers(text: str) -> list[int]:
    """--block, --smem, --cluster: whole numbers separated by commas."""
    import argparse
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not whole numbers separated by commas") from None


def _occupancy(args) -> int:
    _readable(args.object, "occupancy")
    from .occupancy import occupancy_object, show_occupancy
    result = occupancy_object(args.object, args.kernel, args.block, args.smem, args.carveout, args.profile, args.cluster)
    print(result.model_dump_json(indent=1) if args.json else "\n".join(show_occupancy(result)))
    return EXIT_OK


def _serve(args) -> int:
    from ..server import serve
    if args.stop:
        return serve.stop()
    if args.status:
        return serve.status()
    _parser(with_probe=False)                 # built once, before the server forks its children
    return serve.serve(main)


def _schema(args) -> int:
    import json
    from .schema import schemas
    chosen = schemas() if args.which == "all" else schemas()[args.which]    # one: the file an editor points at
    print(json.dumps(chosen, indent=1, sort_keys=True))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
