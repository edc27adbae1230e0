"""`trace --arg NAME=VALUE` and `--args FILE.json`: launch arguments from the command line."""
from __future__ import annotations

import json
from typing import Any

from ..errors import BadInput


def launch_args_from_cli(pairs: list[str], args_file: str | None) -> dict[str, Any] | None:
    """The mapping the launch entry gets, or None when neither option was used (defaults, or <prefix>.args.json)."""
    from ..dsl.launch.plan import load_args_file
    if not pairs and args_file is None:
        return None
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
