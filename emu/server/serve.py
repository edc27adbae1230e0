"""The server behind `python -m emu serve`: preload, listen, fork one child per command.

Foreground and single-threaded (so that forking is safe): one loop waits on the listening
socket and on a wake-up pipe that SIGCHLD writes to.  Each run request from a peer of this
uid whose compatibility key matches gets a forked child (emu.server.child); the child tells the
client its pid, then its exit status once its command has finished; a child that does not get
that far (a signal) is reported by the server once it has reaped it.  The child is forked before
its request comes (a spare, waiting on a socket pair of its own): a request costs the server a
hand-over of its connection and descriptors, not a fork of the whole warm process.  `--stop` (or SIGTERM,
or Ctrl-C) stops accepting at once and exits when the running children have finished.
"""
from __future__ import annotations

import fcntl
import gc
import os
import select
import signal
import socket
import struct
import sys
import time
from typing import Callable

from ..errors import BadInput
from .child import close_inherited, run_request
from .address import LOCK_NAME, UnsafeFolder, compatibility_key, make_private, server_dir, socket_path
from .protocol import ProtocolError, receive, send
from .warm import preload

REQUEST_TIMEOUT_S = 5.0


def serve(command: Callable[[list[str]], int], folder: str | None = None) -> int:
    """Serve until stopped; each child runs `command(argv)` (emu.commands.cli.main, passed in: the CLI imports the server)."""
    folder = folder or server_dir()
    try:
        make_private(folder)
    except (OSError, UnsafeFolder) as error:
        raise BadInput(f"cannot use the server folder: {error}", path=folder) from None
    lock = open(os.path.join(folder, LOCK_NAME), "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise BadInput("an emu server is already running for this user (`python -m emu serve --status`)", path=folder) from None
    started = time.perf_counter()
    preload()
    gc.collect()
    gc.freeze()          # children's collections skip the preloaded objects (and leave their pages shared)
    server = Server(socket_path(folder), compatibility_key(), lock, command)
    print(f"emu server: pid {os.getpid()}, ready in {time.perf_counter() - started:.1f} s, listening on {server.path}; "
          "`python -m emu serve --stop` stops it", flush=True)
    try:
        server.loop()
    finally:
        server.close()
        lock.close()
        gc.unfreeze()    # let interpreter shutdown free them as usual
    print(f"emu server: stopped after serving {server.served} command(s)", flush=True)
    return 0


class Server:
    def __init__(self, path: str, key: str, lock, command: Callable[[list[str]], int]):
        self.path, self.key, self.lock, self.command, self.served = path, key, lock, command, 0
        self.running: dict[int, socket.socket] = {}       # child pid -> its client's connection
        if os.path.exists(path):
            os.unlink(path)                                # stale: whoever made it no longer holds the lock
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        os.chmod(path, 0o600)
        self.listener.listen(64)
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)
        signal.set_wakeup_fd(self.wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: self.stop())
        self.stopping = False
        self.spare: tuple[int, socket.socket] | None = None      # (pid, the server's end of its socket pair)
        self.fork_spare()

    def loop(self) -> None:
        while not self.stopping or self.running:
            try:
                waiting = [self.wake_read] + ([] if self.stopping else [self.listener])
                readable, _, _ = select.select(waiting, [], [], 1.0)
            except KeyboardInterrupt:
                self.stop()
                continue
            if self.wake_read in readable:
                while True:
                    try:
                        if not os.read(self.wake_read, 512):
                            break
                    except BlockingIOError:
                        break
            self.reap()
            if not self.stopping and self.listener in readable:
                self.accept()

    def accept(self) -> None:
        try:
            connection, _ = self.listener.accept()
        except OSError:
            return
        fds: list[int] = []
        try:
            connection.settimeout(REQUEST_TIMEOUT_S)
            if peer_uid(connection) != os.getuid():
                connection.close()
                return
            message, fds = receive(connection, with_fds=True)
            op = message.get("op")
            if op == "run" and len(fds) == 3:
                self.fork(connection, message, fds)
                return
            if op == "status":
                send(connection, {"pid": os.getpid(), "key": self.key, "socket": self.path, "served": self.served,
                                  "running": len(self.running)})
            elif op == "stop":
                send(connection, {"stopping": os.getpid(), "running": len(self.running)})
                self.stop()
            elif op == "run":
                send(connection, {"refused": "a run request carries stdin, stdout and stderr"})
        except (OSError, ProtocolError, ValueError, KeyError, TypeError):
            pass
        for fd in fds:
            os.close(fd)
        connection.close()

    def fork(self, connection: socket.socket, message: dict, fds: list[int]) -> None:
        """Hand the request to the spare child (forked beforehand, or now when none waits)."""
        if message.get("key") != self.key:
            send(connection, {"refused": "this server runs other emu sources or another Python"})
            raise ProtocolError("refused")
        if self.spare is None:
            self.fork_spare()
        pid, channel = self.spare
        self.spare = None
        try:
            send(channel, message, fds=[connection.fileno(), *fds])
        except OSError:                       # the spare died (killed from outside): a fresh one takes the request
            channel.close()
            self.fork_spare()
            pid, channel = self.spare
            self.spare = None
            send(channel, message, fds=[connection.fileno(), *fds])
        channel.close()
        for fd in fds:
            os.close(fd)
        self.served += 1
        self.running[pid] = connection

    def fork_spare(self) -> None:
        """A child that waits for one request on a socket pair: it is the command's process once one comes."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            ours.close()
            inherited = [self.listener, self.lock, self.wake_read, self.wake_write, *self.running.values()]
            _serve_one(theirs, inherited, self.command)
        theirs.close()
        self.spare = (pid, ours)

    def reap(self) -> None:
        self.reap_children()
        # The next spare is forked once no command runs: a fork beside a running command slows it on a busy machine.
        if self.spare is None and not self.running and not self.stopping:
            self.fork_spare()

    def reap_children(self) -> None:
        while self.running or self.spare is not None:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            connection = self.running.pop(pid, None)
            if connection is None:
                if self.spare is not None and self.spare[0] == pid:      # killed while waiting: replaced in reap
                    self.spare[1].close()
                    self.spare = None
                continue
            result = {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"exit": os.WEXITSTATUS(status)}
            try:
                send(connection, result)
            except OSError:
                pass
            connection.close()

    def stop(self) -> None:
        """Stop accepting (new clients run in their own process); the loop ends once children finish."""
        if not self.stopping:
            self.stopping = True
            self.unlink()
            self.close_spare()

    def close_spare(self) -> None:
        """The spare sees its socket pair close and exits without running anything."""
        if self.spare is not None:
            self.spare[1].close()
            self.spare = None

    def unlink(self) -> None:
        try:
            os.unlink(self.path)          # ours: no other server can bind it while this one holds the lock
        except OSError:
            pass

    def close(self) -> None:
        self.close_spare()
        self.unlink()
        self.listener.close()
        signal.set_wakeup_fd(-1)
        os.close(self.wake_read)
        os.close(self.wake_write)


def _serve_one(channel: socket.socket, inherited: list, command: Callable[[list[str]], int]) -> None:
    """A spare child: wait for one request (the client's connection and its stdin, stdout and stderr come with it),
    tell the client its pid, run the command, then tell the client its exit status; never returns."""
    status = 0
    try:
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGCHLD, signal.SIGTERM):          # the server's handlers are not a spare's
            signal.signal(number, signal.SIG_DFL)
        close_inherited(inherited)            # at once: a spare must not keep other clients' connections open
        try:
            message, fds = receive(channel, with_fds=True, max_fds=4)
        except BaseException:                 # noqa: BLE001 - the server closed the pair (it stops) or a signal came
            os._exit(0)
        channel.close()
        if len(fds) != 4:
            os._exit(0)
        connection = socket.socket(fileno=fds[0])
        connection.settimeout(REQUEST_TIMEOUT_S)     # as the server's end of it was
        status = 4
        # The child says its pid first, then its exit status: both on its client's connection, in order.
        send(connection, {"pid": os.getpid()})
        status = run_request(message, fds[1:], [], command)
        # The command has finished as a process finishes (atexit, stdout and stderr flushed): the child
        # tells its client at once, rather than after its own teardown and the server's reaping of it
        # (two hand-offs between processes, each a scheduling delay on a busy machine).  A child that
        # dies of a signal never gets here: the server's report of its end (reap) says so.
        send(connection, {"exit": status & 0xFF})
    except BaseException:                     # noqa: BLE001 - the server's report of its end still comes
        pass
    finally:
        os._exit(status & 0xFF)


def peer_uid(connection: socket.socket) -> int:
    """The uid of the process at the other end (Linux SO_PEERCRED, macOS LOCAL_PEERCRED)."""
    if hasattr(socket, "SO_PEERCRED"):
        _, uid, _ = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
        return uid
    sol_local, local_peercred = 0, 1                      # <sys/un.h>: SOL_LOCAL, LOCAL_PEERCRED (struct xucred)
    _, uid = struct.unpack("Ii", connection.getsockopt(sol_local, local_peercred, 76)[:8])
    return uid


def status(folder: str | None = None) -> int:
    """`serve --status`: 0 when a server is running that this emu would use, else 1."""
    reply = _ask(folder, {"op": "status"})
    if reply is None:
        print(f"emu server: not running (no live socket at {socket_path(folder or server_dir())})")
        return 1
    usable = reply.get("key") == compatibility_key()
    print(f"emu server: running, pid {reply.get('pid')}, socket {reply.get('socket')}, {reply.get('served')} command(s) served; "
          + ("it serves this emu" if usable else "it does NOT serve this emu (started from other sources, another Python or "
             "another environment): restart it"))
    return 0 if usable else 1


def stop(folder: str | None = None) -> int:
    """`serve --stop`: ask the server to stop; it exits once its running commands have finished."""
    reply = _ask(folder, {"op": "stop"})
    if reply is None:
        print(f"emu server: not running (no live socket at {socket_path(folder or server_dir())})")
        return 1
    print(f"emu server: pid {reply.get('stopping')} is stopping ({reply.get('running')} command(s) still running)")
    return 0


def _ask(folder: str | None, message: dict) -> dict | None:
    from .client import connect
    connection = connect(folder)
    if connection is None:
        return None
    try:
        connection.settimeout(REQUEST_TIMEOUT_S)
        send(connection, message)
        reply, _ = receive(connection)
    except (OSError, ProtocolError):
        return None
    finally:
        connection.close()
    return reply
