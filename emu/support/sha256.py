"""SHA-256 without starting OpenSSL for the little that a short run hashes.

hashlib's SHA-256 is OpenSSL's: the fastest per byte, but importing it (`_hashlib`) starts OpenSSL, 2-3 ms of a
cold one-object run that hashes a few kilobytes (the object, the stores' keys).  CPython's own implementation of
the same function (`_sha256`; `_sha2` from 3.12), which hashlib itself falls back to, starts at once.  `sha256`
answers with that one for data under a megabyte while OpenSSL has not been started, and with hashlib's otherwise
(a large object, or a process that imported hashlib anyway): the same digest either way.
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

SMALL = 1 << 20         # bytes hashed faster by OpenSSL than its start-up costs, about


def sha256(data: bytes = b""):
    """A SHA-256 object (hashlib's interface: update, digest, hexdigest) over `data`."""
    if _own is not None and len(data) < SMALL and "_hashlib" not in sys.modules:
        return _own(data)
    import hashlib
    return hashlib.sha256(data)
