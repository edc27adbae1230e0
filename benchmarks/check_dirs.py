"""The two folders a `python -m emu check DIR` benchmark compares: one object, and every object."""
from __future__ import annotations

import os


def check_dirs(paths: list[str], folder: str) -> tuple[str, str]:
    """Folders `one` (the first of `paths`) and `every` (all of them) under `folder`, as symlinks in order."""
    one, every = os.path.join(folder, "check_one"), os.path.join(folder, "check_every")
    os.makedirs(one)
    os.makedirs(every)
    os.symlink(paths[0], os.path.join(one, "00.o"))
    for index, path in enumerate(paths):
        os.symlink(path, os.path.join(every, f"{index:02}.o"))
    return one, every
