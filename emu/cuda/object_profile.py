"""Which device profile runs an object file: the loaded image's fatbin decides.

Apart from emu.cuda.loading because it loads the object's image: the image store keeps
what loading reads from the cubins, so loading must not import the image loader back.
"""
from __future__ import annotations

from ..cache.loaded import load_image
from ..dsl.exports import choose
from .loading import library_image, profiles_running
from .profile import PROFILES


def profile_for_object(path: str, export: str | None = None) -> str:
    """The first profile that runs the GPU binary of the object's export (`export`: its name, needed when it holds
    several) (h200 when it runs there or none does)."""
    image, exports = load_image(path)
    return next(iter(profiles_running(library_image(image, choose(exports, export, path).binary))), PROFILES[0])
