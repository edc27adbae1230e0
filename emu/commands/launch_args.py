"""`trace --arg NAME=VALUE` and `--args FILE`: launch arguments from the command line.

For a CuTe-ABI export FILE is JSON, `{"args": {name: value}}`; for a TVM-FFI export it is YAML or JSON holding
the positional argument list (emu.dsl.tvm_ffi.arguments), bare or as `{"args": [...]}`.
"""
from __future__ import annotations

import json
from typing import Any

from ..errors import BadInput


def launch_args_from_cli(pairs: list[str], args_file: str | None) -> dict[str, Any] | list | None:
    """The mapping the launch entry gets (the list, for a TVM-FFI call), or None when neither option was used
    (defaults, or <prefix>.args.json)."""
    from ..dsl.launch.plan import load_args_file
    if not pairs and args_file is None:
        return None
    listed = _argument_list(args_file) if args_file is not None else None
    if listed is not None:
        if pairs:
            raise BadInput("--arg NAME=VALUE names a CuTe-ABI launch parameter; a TVM-FFI argument list (--args) is "
                           "positional: write every argument in the file", path=args_file)
        from ..dsl.tvm_ffi.arguments import parse_arguments
        parse_arguments(listed, args_file)
        return listed
    merged = load_args_file(args_file) if args_file is not None else {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            raise BadInput(f"--arg {pair!r}: expected NAME=VALUE, e.g. --arg n=7 or --arg 'a={{\"dynamic_shapes\": [1024]}}'")
        try:
            merged[name.strip()] = json.loads(text)
        except ValueError as error:
            raise BadInput(f"--arg {name.strip()}: the value {text!r} is not JSON ({error})") from None
    return merged


def _argument_list(path: str) -> list | None:
    """A TVM-FFI argument list from `path` (YAML or JSON: the list, or {args: list}); None when it holds a mapping
    of arguments by name (a CuTe-ABI launch's, read by load_args_file)."""
    import os
    from ..dsl.launch.plan import MAX_ARGS_FILE_BYTES
    try:
        if os.path.getsize(path) > MAX_ARGS_FILE_BYTES:
            raise BadInput(f"launch arguments file is larger than {MAX_ARGS_FILE_BYTES} bytes", path=path)
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise BadInput(f"cannot read launch arguments: {error.strerror}", path=path) from None
    except UnicodeDecodeError as error:
        raise BadInput(f"launch arguments are not text: {error}", path=path) from None
    import yaml
    try:
        data = yaml.safe_load(text)          # JSON is YAML
    except yaml.YAMLError as error:
        raise BadInput(f"launch arguments are neither YAML nor JSON: {str(error).splitlines()[0]}", path=path) from None
    if isinstance(data, dict) and set(data) == {"args"}:
        data = data["args"]
    return data if isinstance(data, list) else None
