"""How a `python -m emu` process ends: as CPython ends one, without tearing down every module and object.

CPython's exit runs the atexit functions, flushes stdout then stderr (exit status 120 when that fails),
then tears the interpreter down object by object: about a quarter of a short cold run here (0.1 s), and
nothing the operating system does not do at once when the process ends.  A command's process, a served
command's forked child and the client that waited for it do the first two, then end with os._exit.
Standard library only, imported on the way out.
"""
from __future__ import annotations

import os
import sys

TYPE_CHECKING = False      # as typing.TYPE_CHECKING, without importing typing: a served client never needs it (2 ms)
if TYPE_CHECKING:
    from typing import NoReturn


def finish() -> int:
    """What CPython does on the way out: atexit functions, then flush stdout and stderr (120 if that fails)."""
    import atexit
    atexit._run_exitfuncs()
    status = 0
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:
                stream.flush()
        except Exception as error:            # noqa: BLE001 - reported as CPython reports it
            import traceback
            status = 120
            try:
                sys.stderr.write(f"Exception ignored in: {stream!r}\n" + "".join(traceback.format_exception_only(type(error), error)))
                sys.stderr.flush()
            except Exception:                 # noqa: BLE001
                pass
    return status


def end_process(status: int) -> NoReturn:
    """Finish as CPython would, with `status` (or 120), and end the process without the teardown."""
    os._exit(finish() or status)
