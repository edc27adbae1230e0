"""The server's wire format: one JSON object per message, length-prefixed, optionally with fds.

JSON only (never pickle): a request carries argv, environment and paths, nothing executable.
File descriptors travel as SCM_RIGHTS ancillary data on a message's first bytes.
"""
from __future__ import annotations

import _socket as socket     # the C module `socket` wraps: the client saves `socket`'s enum building (ms)
import array
import json
import os
import struct

_LENGTH = struct.Struct("!I")
MAX_MESSAGE = 16 << 20          # an environment plus argv; anything larger is not a request
MAX_FDS = 3


class ProtocolError(Exception):
    """The peer sent something that is not a message of this protocol (or hung up)."""


def send(sock: socket.socket, message: dict, fds: list[int] | None = None) -> None:
    body = json.dumps(message, separators=(",", ":")).encode()
    data = _LENGTH.pack(len(body)) + body
    if fds:
        sent = sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        data = data[sent:]
    if data:
        sock.sendall(data)


def receive(sock: socket.socket, with_fds: bool = False, max_fds: int = MAX_FDS) -> tuple[dict, list[int]]:
    """One message and the fds that came with it (closed here and refused when not expected)."""
    fds = array.array("i")
    head, ancillary, _, _ = sock.recvmsg(_LENGTH.size, socket.CMSG_SPACE(max_fds * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
    received = list(fds)
    try:
        while len(head) < _LENGTH.size:
            more = sock.recv(_LENGTH.size - len(head))
            if not more:
                raise ProtocolError("the peer closed the connection")
            head += more
        (length,) = _LENGTH.unpack(head)
        if length > MAX_MESSAGE or (received and not with_fds):
            raise ProtocolError("not a message of this protocol")
        body = bytearray()
        while len(body) < length:
            more = sock.recv(min(length - len(body), 1 << 20))
            if not more:
                raise ProtocolError("the peer closed the connection")
            body += more
        message = json.loads(body)
        if not isinstance(message, dict):
            raise ProtocolError("not a message of this protocol")
    except (ProtocolError, ValueError, OSError):
        for fd in received:
            _close(fd)
        raise
    return message, received


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
