"""SHA-256 without starting OpenSSL for the little that a short run hashes.

hashlib's SHA-256 is OpenSSL's: the fastest per byte, but importing it (`_hashlib`) starts OpenSSL, 2-3 ms of a
cold one-object run that hashes a few kilobytes (the object, the stores' keys).  CPython's own implementation of
the same function (`_sha256`; `_sha2` from 3.12), which hashlib itself falls back to, starts at once but hashes a
few times slower.  `sha256` answers with CPython's own until this process has given it a megabyte (about what
OpenSSL's start-up costs in its slower hashing), with hashlib's from then on or once something else has imported
hashlib: the same digests either way, and never more than the start-up's worth of time lost (a check of a folder
of large objects starts OpenSSL at its first megabyte).
"""
from __future__ import annotations

import sys

try:
    from _sha256 import sha256 as _own         # CPython 3.10, 3.11
except ImportError:                            # pragma: no cover - 3.12+, or a build without its own hashes
    try:
        from _sha2 import sha256 as _own
    except ImportError:
        _own = None

SMALL = 1 << 20         # bytes CPython's own hashes in about the time OpenSSL takes to start
_given = [0]            # bytes this process has given CPython's own


def sha256(data: bytes = b""):
    """A SHA-256 object (hashlib's interface: update, digest, hexdigest) over `data` (what `update` adds later
    counts as hashed by whichever was chosen)."""
    if _own is not None and _given[0] + len(data) < SMALL and "_hashlib" not in sys.modules:
        _given[0] += len(data)
        return _own(data)
    import hashlib
    return hashlib.sha256(data)
