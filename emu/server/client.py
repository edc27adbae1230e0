"""The first thing `python -m emu` does: hand the command to a live, compatible server.

`run_served(argv)` returns the served command's exit code, or None when there is no server
to use (none running, a dead socket, an unsafe folder, another Python or other emu sources,
a closed stdio descriptor, EMU_NO_SERVER=1): then the caller runs the command itself and
nothing here has printed anything.  A command stopped by a signal stops the client with the
same signal; Ctrl-C and SIGTERM are passed on to the child.
"""
from __future__ import annotations

import _socket as socket     # the C module `socket` wraps: the client saves `socket`'s enum building (ms)
import os
import sys

from .address import UnsafeFolder, check_private, compatibility_key, server_dir, socket_path

NOT_SERVED = ("serve",)          # commands that must run in this process


def run_served(argv: list[str]) -> int | None:
    if os.environ.get("EMU_NO_SERVER") == "1" or (argv and argv[0] in NOT_SERVED):
        return None
    connection = connect()
    if connection is None:
        return None
    from .protocol import ProtocolError, receive, send      # only with a server to talk to
    try:
        try:
            os.fstat(0), os.fstat(1), os.fstat(2)
            send(connection, request(argv), fds=[0, 1, 2])
            started, _ = receive(connection)
        except (OSError, ProtocolError):
            return None                       # nothing ran: run it here
        except KeyboardInterrupt:             # before the child's pid came: nothing to pass it on to
            print("emu: interrupted", file=sys.stderr)
            return 130
        if "pid" not in started:
            return None                       # refused (another Python or other sources)
        return _wait(connection, started["pid"])
    finally:
        connection.close()


def connect(folder: str | None = None) -> socket.socket | None:
    """A connection to the server in `folder` (default: this user's), or None if there is none to use."""
    folder = folder or server_dir()
    try:
        check_private(folder)
    except (OSError, UnsafeFolder):
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(socket_path(folder))
    except OSError:                             # no socket, or a dead one (ECONNREFUSED)
        connection.close()
        return None
    return connection


def request(argv: list[str]) -> dict:
    """Everything a fresh process would start from, besides the three descriptors."""
    umask = os.umask(0o022)
    os.umask(umask)
    streams = [(stream.encoding, stream.errors, stream.line_buffering, stream.write_through) if stream is not None else None
               for stream in (sys.stdin, sys.stdout, sys.stderr)]
    return {"op": "run", "key": compatibility_key(), "argv": argv, "argv0": sys.argv[0], "path0": sys.path[0],
            "cwd": os.getcwd(), "env": dict(os.environ), "umask": umask, "streams": streams}


def _wait(connection: socket.socket, pid: int) -> int:
    """The child's exit code; a signal that stops it stops this process too."""
    import _signal as signal       # the C module `signal` wraps: the client saves `signal`'s enum building (ms)
    from .protocol import ProtocolError, receive
    forwarded = {sig: signal.signal(sig, lambda number, _frame: _forward(pid, number))
                 for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        while True:
            try:
                result, _ = receive(connection)
                break
            except KeyboardInterrupt:
                _forward(pid, signal.SIGINT)
            except (OSError, ProtocolError):        # the server itself died mid-run (a stop waits for children)
                print("emu: internal error: the emu server stopped while serving this command", file=sys.stderr)
                return 4
    finally:
        for sig, previous in forwarded.items():
            signal.signal(sig, previous)
    if "signal" in result:
        number = int(result["signal"])
        sys.stdout.flush()
        try:
            signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):         # SIGKILL and SIGSTOP keep their default action: none to restore
            pass
        os.kill(os.getpid(), number)
        return 128 + number
    return int(result.get("exit", 1))


def _forward(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except OSError:
        pass
