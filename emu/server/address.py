"""Where the server listens, who may talk to it, and when a client may use it.

The socket lives in a folder only this user can enter (0700, owned by this uid, not a
symlink): `$EMU_SERVER_DIR`, else `$XDG_RUNTIME_DIR/emu-server`, else `$TMPDIR` or /tmp
`/emu-server-<uid>`.  A folder that fails those checks is never used.

The compatibility key says what a fresh process would have run: the interpreter and its
flags, the module search path and each of its folders' modification time (installing,
upgrading or removing a library changes it), the environment variables read while
importing, every file of emu's two packages (name, size, modification time), and the
text-encoding locale (what `open()` without an encoding uses).  A client uses a server only
when both keys are equal, so a server started from other sources or another Python is not
used.  Standard library only: the client computes this before importing anything heavy.
"""
from __future__ import annotations

import _locale
import os
import stat
import sys

SOCKET_NAME = "server.sock"
LOCK_NAME = "server.lock"
PACKAGES = ("emu", "stub_models")
# Read once per process (at start-up or on import), so a served child cannot take the client's.
IMPORT_TIME_ENVIRONMENT = ("PYTHONHASHSEED", "PYDANTIC_DISABLE_PLUGINS", "LIBUNICORN_PATH", "TZ")


class UnsafeFolder(Exception):
    """The server folder exists but another user could reach it."""


def server_dir() -> str:
    configured = os.environ.get("EMU_SERVER_DIR")
    if configured:
        return configured
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "emu-server")
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"emu-server-{os.getuid()}")


def check_private(folder: str) -> None:
    """Raise UnsafeFolder unless `folder` is a real directory of this user that only it can use."""
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeFolder(f"{folder} is not a directory (a symlink or a file)")
    if info.st_uid != os.getuid():
        raise UnsafeFolder(f"{folder} belongs to uid {info.st_uid}, not to this user (uid {os.getuid()})")
    if info.st_mode & 0o077:
        raise UnsafeFolder(f"{folder} can be reached by other users (mode {stat.S_IMODE(info.st_mode):o}; it must be 700)")


def make_private(folder: str) -> None:
    """Create the server folder (0700) if it is missing, then check it."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    check_private(folder)


def socket_path(folder: str | None = None) -> str:
    return os.path.join(folder or server_dir(), SOCKET_NAME)


def compatibility_key() -> str:
    """What decides how a fresh `python -m emu` behaves before it reads its arguments (see above).

    The text itself, not a hash of it (a few kilobytes): the server compares it, and a client
    saves importing hashlib.
    """
    parts = [sys.executable, sys.version, repr(sys.flags), repr(sys.warnoptions), repr(sorted(sys._xoptions.items())),
             repr(sys.path[1:]), repr([os.environ.get(name) for name in IMPORT_TIME_ENVIRONMENT]),
             _locale.setlocale(_locale.LC_CTYPE), sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()]
    for folder in sys.path[1:]:        # a library installed, upgraded or removed there changes its folder's time
        try:
            parts.append(f"{folder} {os.stat(folder).st_mtime_ns}")
        except OSError:
            parts.append(f"{folder} absent")
    for folder in package_folders():
        _list_files(parts, folder)
    return "\n".join(parts)


def package_folders() -> list[str]:
    """emu's folder (this file's grandparent) and stub_models', found without importing it."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folders = [here]
    from importlib.util import find_spec
    spec = find_spec(PACKAGES[1])
    if spec is not None and spec.submodule_search_locations:
        folders.extend(spec.submodule_search_locations)
    return folders


def _list_files(parts: list[str], folder: str) -> None:
    """`folder` and each file under it with its size and modification time, as os.walk finds them (top down,
    sorted, without __pycache__, a symlinked folder neither listed nor entered), read with one scandir per folder:
    every client does this before it is served (about 0.4 ms less than os.walk and a stat per path)."""
    parts.append(folder)
    _list_folder(parts, folder)


def _list_folder(parts: list[str], folder: str) -> None:
    try:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return
    folders = []
    for entry in entries:
        try:
            is_folder = entry.is_dir()
        except OSError:
            is_folder = False
        if is_folder:
            if entry.name != "__pycache__" and not entry.is_symlink():
                folders.append(entry.path)
            continue
        try:
            info = entry.stat()
        except OSError:
            continue
        parts.append(f"{entry.path} {info.st_size} {info.st_mtime_ns}")
    for path in folders:
        _list_folder(parts, path)
