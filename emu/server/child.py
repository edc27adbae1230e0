"""A forked child of the server turning into the client's `python -m emu` process, then running it.

It takes over what a fresh process starts from (stdin/stdout/stderr rebuilt as CPython
builds them, the working folder, environment, umask, argv and sys.path[0]), runs emu.commands.cli,
and finishes as CPython finishes (atexit functions, flushing stdout then stderr, exit code
120 when that flush fails).  The server reports the exit status to the client.
"""
from __future__ import annotations

import io
import os
import signal
import sys
import traceback
from typing import Callable

from ..commands.process_end import finish


def run_request(request: dict, fds: list[int], inherited: list, command: Callable[[list[str]], int]) -> int:
    """Become the client's process and run its command line with `command` (emu.commands.cli.main); the exit status.

    `inherited`: what the server holds that is not this command's (its listener, wake-up pipe
    and other clients' connections), as sockets (closed as objects) or fds.
    """
    close_inherited(inherited)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        if fd > 2:
            os.close(fd)
    # A session of its own, without a controlling terminal: signals from the server's terminal are
    # not this command's, and the client's terminal is a plain file to it (no job-control stops).
    os.setsid()
    for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")      # as emu/__main__.py does
    sys.argv = [request["argv0"], *request["argv"]]
    sys.path[0] = request["path0"]
    sys.stdin, sys.stdout, sys.stderr = (_stdio(fd, settings) for fd, settings in enumerate(request["streams"]))
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    try:
        status = _status(command(request["argv"]))
    except SystemExit as exit_:
        status = _status(exit_.code)
    except KeyboardInterrupt:                 # as CPython: the traceback, then die of SIGINT
        traceback.print_exc()
        finish()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        status = 130
    except BaseException:                     # noqa: BLE001 - as CPython: the traceback, exit status 1
        traceback.print_exc()
        status = 1
    return finish() or status


def close_inherited(inherited: list) -> None:
    """Close what the server holds that is not this command's: sockets as objects, descriptors as ints."""
    for item in inherited:
        try:
            if isinstance(item, int):
                os.close(item)
            else:
                item.close()
        except OSError:
            pass


def _stdio(fd: int, settings: list | None):
    """The text stream CPython's create_stdio makes for `fd`, with the client's encoding and errors."""
    if settings is None:
        return None
    encoding, errors, line_buffering, write_through = settings
    buffered = not write_through              # `python -u` (PYTHONUNBUFFERED): unbuffered stdout and stderr
    mode = "r" if fd == 0 else "w"
    buffer = io.open(fd, mode + "b", buffering=-1 if buffered or fd == 0 else 0, closefd=False)
    raw = buffer.raw if buffered or fd == 0 else buffer
    raw.name = ("<stdin>", "<stdout>", "<stderr>")[fd]
    stream = io.TextIOWrapper(buffer, encoding, errors, "\n", line_buffering, write_through)
    stream.mode = mode
    return stream


def _status(code) -> int:
    """sys.exit's rule: None is 0, an int is itself, anything else is printed and is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
