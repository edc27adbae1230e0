"""What the server does once so that its children do not: import every command's modules and
build every model's validator and serializer.

It imports, it does not run: nothing an emu command reads (the image store, the build cache,
the working folder) is touched, so a child's output cannot depend on the warm-up.  What every
process computes alike from emu's own files and the installed libraries alone (which the
server's compatibility key pins) is computed here once: the stores' folder names (a digest of
emu's code), each architecture's emulator, empty (its CPU, stub window and hooks), and each stub
model's dispatch plan (its argument decoder, generated code).
"""
from __future__ import annotations

import importlib
import pkgutil

PACKAGES = ("emu", "stub_models")
# Not on a command's path in a child: the server itself, the probe (nvcc, the GPU), scripts,
# and the pytest plugin (it imports pytest).
SKIPPED = ("emu.__main__", "emu.server", "emu.probe", "emu.build.worker", "emu.cuda.profiles.build", "emu.scenario.pytest_plugin")
OPTIONAL = ("lief",)     # parses never-seen objects: a second's import that a served `check` should not pay


def preload() -> list[str]:
    """Import and warm; the modules that could not be imported (their commands import them again and report)."""
    failed = []
    for package in PACKAGES:
        root = importlib.import_module(package)
        for module in pkgutil.walk_packages(root.__path__, f"{package}."):
            if module.name.startswith(SKIPPED):
                continue
            try:
                importlib.import_module(module.name)
            except Exception:                     # noqa: BLE001 - e.g. an optional dependency missing
                failed.append(module.name)
    for name in OPTIONAL:
        try:
            importlib.import_module(name)
        except ImportError:
            failed.append(name)
    build_models()
    precompute()
    return failed


def precompute() -> None:
    """The stores' folder names, an empty emulator per architecture and the stub models' dispatch plans, as any
    command's process makes them on first use."""
    import stub_models
    from ..arch import NAMES, architecture
    from ..cuda.profile import PROFILES, load_profile
    from ..cache.derived_store import STORES
    from ..cache.image_store import folder_name
    from ..emulator.machine import machine_for
    from ..stubs.dispatch import symbol_plan

    folder_name()
    for store in STORES:
        folder_name(store.code, store.libraries)
    for name in NAMES:
        machine_for(architecture(name))
    for name in PROFILES:
        load_profile(name)
    for symbol in [model.symbol for model in stub_models.MODELS] + list(stub_models.LIBC_CATALOGUE):
        symbol_plan(symbol)


def build_models() -> None:
    """Build the validators pydantic defers (`defer_build`), and the stub models' parameter tables."""
    from pydantic import BaseModel

    import stub_models
    for model in stub_models.MODELS:
        model.params()
    pending = list(BaseModel.__subclasses__())
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        if model.__module__.split(".")[0] in PACKAGES and not model.__pydantic_complete__:
            try:
                model.model_rebuild()
            except Exception:                     # noqa: BLE001 - a generic or forward-referencing model builds on use
                pass
