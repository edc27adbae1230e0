"""Which device profile runs an object file: the loaded image's fatbin decides.

Apart from emu.cuda.loading because it loads the object's image: the image store keeps
what loading reads from the cubins, so loading must not import the image loader back.
"""
from __future__ import annotations

from ..cache.loaded import load_image
from ..dsl.exports import choose
from .loading import library_image, profiles_running
from .profile import PROFILES


def pick_profile(image, export, given: str | None) -> tuple[str, str]:
    """(the profile, how it was picked): `given`; else "chosen", the first whose device runs the export's GPU
    binary; else "default", the first profile (no binary, an unreadable one, or one no profile runs)."""
    if given is not None:
        return given, "given"
    binary = library_image(image, export.binary)
    running = profiles_running(binary) if binary is not None and binary.error is None else []
    return (running[0], "chosen") if running else (PROFILES[0], "default")


def profile_for_object(path: str, export: str | None = None) -> str:
    """The profile `pick_profile` chooses for the object's export (`export`: its name, needed when it holds several)."""
    image, exports = load_image(path)
    return pick_profile(image, choose(exports, export, path), None)[0]
