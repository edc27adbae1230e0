import gc
import os
import sys
from types import ModuleType

GC_THRESHOLD = 100_000      # allocations between two collections of the youngest generation (see below)

# A `python -m emu` process has no use for pydantic plugins; looking for them scans the
# metadata of every installed distribution, which costs a short run several milliseconds.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
if os.environ["PYDANTIC_DISABLE_PLUGINS"] in ("__all__", "1", "true") and "pydantic" not in sys.modules:
    # Even disabled, pydantic imports its plugin loader (and with it importlib.metadata, about
    # 50 ms here) when it builds its first validator; this stand-in answers what the loader
    # answers when plugins are disabled: none.
    _no_plugins = ModuleType("pydantic.plugin._loader")
    _no_plugins.get_plugins = lambda: ()
    sys.modules[_no_plugins.__name__] = _no_plugins

if "secrets" not in sys.modules:
    # pydantic.types imports `secrets` (and with it hmac and OpenSSL's _hashlib: 3 ms) for comparing secret
    # strings, which emu never does: this stand-in imports the real module when a name of it is first read
    # (emu hashes with CPython's own SHA-256 for the same reason: emu.support.sha256).
    class _Secrets(ModuleType):
        def __getattr__(self, name):
            if sys.modules.get("secrets") is self:
                del sys.modules["secrets"]
            import secrets
            return getattr(secrets, name)

    sys.modules["secrets"] = _Secrets("secrets")

# Either way the process ends as CPython ends one, less the teardown of every module (emu.commands.process_end).
from .commands.process_end import end_process  # noqa: E402

# A running `python -m emu serve` runs the command in a warm child (standard library only
# until then); without one, or with EMU_NO_SERVER=1, the command runs here (the client, its
# socket module and its checks not even imported when the variable says there is none to ask).
if os.environ.get("EMU_NO_SERVER") != "1":
    from .server.client import run_served

    served = run_served(sys.argv[1:])
    if served is not None:
        end_process(served)

# Run here.  CPython's cyclic garbage collector looks for cycles every 700 allocations not yet freed: the imports
# and classes of a cold run (some 60,000 objects that all live until the process ends) cost it about 70
# collections, 15-20 ms of a one-object run.  Every 100,000 instead: a short command makes none, a long one
# (check of a folder) still collects as it goes, in the same memory (check of 295 objects: 126 MB either way).
_threshold = gc.get_threshold()
gc.set_threshold(max(_threshold[0], GC_THRESHOLD), *_threshold[1:])

# The classes emu and its libraries make compile the same methods in every process, and emu's modules
# are read from as many files; their code is kept in emu's store between processes (emu.cache.class_code,
# emu.cache.module_code).
from .cache import class_code, module_code  # noqa: E402

class_code.install()
module_code.install()

from .commands.cli import main  # noqa: E402

status = main()
class_code.save()
module_code.save()
end_process(status)
