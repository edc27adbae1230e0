"""The server's wire format: one JSON object per message, length-prefixed, optionally with fds.

JSON only (never pickle): a request carries argv, environment and paths, nothing executable.
File descriptors travel as SCM_RIGHTS ancillary data on a message's first bytes.
"""
from __future__ import annotations

import _socket as socket     # the C module `socket` wraps: the client saves `socket`'s enum building (ms)
import json
import os
import sys

# Lengths and descriptors packed with int.to_bytes, not struct and array: a client saves their imports.
_LENGTH = 4                     # bytes of a message's length, big-endian
_FD = 4                         # bytes of a descriptor in SCM_RIGHTS data (a C int)
MAX_MESSAGE = 16 << 20          # an environment plus argv; anything larger is not a request
MAX_FDS = 3


class ProtocolError(Exception):
    """The peer sent something that is not a message of this protocol (or hung up)."""


def send(sock: socket.socket, message: dict, fds: list[int] | None = None) -> None:
    body = json.dumps(message, separators=(",", ":")).encode()
    data = len(body).to_bytes(_LENGTH, "big") + body
    if fds:
        payload = b"".join(fd.to_bytes(_FD, sys.byteorder, signed=True) for fd in fds)
        sent = sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, payload)])
        data = data[sent:]
    if data:
        sock.sendall(data)


def receive(sock: socket.socket, with_fds: bool = False, max_fds: int = MAX_FDS) -> tuple[dict, list[int]]:
    """One message and the fds that came with it (closed here and refused when not expected)."""
    received = []
    head, ancillary, _, _ = sock.recvmsg(_LENGTH, socket.CMSG_SPACE(max_fds * _FD))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            received.extend(int.from_bytes(payload[at:at + _FD], sys.byteorder, signed=True)
                            for at in range(0, len(payload) - len(payload) % _FD, _FD))
    try:
        while len(head) < _LENGTH:
            more = sock.recv(_LENGTH - len(head))
            if not more:
                raise ProtocolError("the peer closed the connection")
            head += more
        length = int.from_bytes(head, "big")
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
