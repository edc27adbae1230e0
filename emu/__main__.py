import os
import sys

# A `python -m emu` process has no use for pydantic plugins; looking for them scans the
# metadata of every installed distribution, which costs a short run several milliseconds.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from .cli import main  # noqa: E402

sys.exit(main())
