"""Yes-or-no answers about the installed libraries that cost a process milliseconds to work out, kept between processes.

A question names everything its answer depends on (the libraries' exact releases, the interpreter's build), so
the answer stored under it holds for as long as they are installed: e.g. whether the installed pydantic keeps a
model instance as emu.support.hotpath writes it (1.5 ms of a cold run: a model class built and compared).  Each
answer is a file of emu's store (emu.cache.root) holding the question and the answer; a file that does not hold
exactly the question (another question with the same digest, a damaged file) is worked out again and rewritten.
`EMU_CACHE_DIR=off`: worked out in every process.  Standard library only.
"""
from __future__ import annotations

import os
from typing import Callable

from ..support.sha256 import sha256 as sha256_of
from .root import store_dir, write_atomically


def remembered(question: str, work_out: Callable[[], bool]) -> bool:
    """The answer stored under `question`, or `work_out()`'s, stored for the next process."""
    root = store_dir()
    if root is None:
        return work_out()
    path = os.path.join(root, "answers", sha256_of(question.encode()).hexdigest()[:32])
    asked = question.encode() + b"\n"
    try:
        with open(path, "rb") as handle:
            stored = handle.read()
    except OSError:
        stored = b""
    if stored in (asked + b"yes", asked + b"no"):
        return stored.endswith(b"yes")
    answer = bool(work_out())
    try:
        write_atomically(path, asked + (b"yes" if answer else b"no"))
    except OSError:
        pass            # a read-only or full disk only costs the next process the work
    return answer
