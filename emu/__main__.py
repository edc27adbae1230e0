import os
import sys

# A `python -m emu` process has no use for pydantic plugins; looking for them scans the
# metadata of every installed distribution, which costs a short run several milliseconds.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

# A running `python -m emu serve` runs the command in a warm child (standard library only
# until then); without one, or with EMU_NO_SERVER=1, the command runs here.
from .server.client import run_served  # noqa: E402

served = run_served(sys.argv[1:])
if served is not None:
    sys.exit(served)

from .cli import main  # noqa: E402

sys.exit(main())
