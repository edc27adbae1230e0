"""Count the oracle share of the test suite: items whose assertion compares emu with something independent
of emu (marker `oracle`, carried by each such test; names in tests/oracles/__init__.py) over all items
pytest collects.

    python .ci/oracle_share.py            # from the repository root, in .venv/

Prints the share and the count per kind of oracle.  Collection only: nothing runs.
"""
from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest


class Count:
    def __init__(self) -> None:
        self.total, self.kinds = 0, collections.Counter()

    def pytest_collection_finish(self, session) -> None:
        self.total = len(session.items)
        for item in session.items:
            marker = item.get_closest_marker("oracle")
            if marker is not None:
                self.kinds[marker.args[0] if marker.args else "unnamed"] += 1


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))    # as `python -m pytest` from the root: tests.* imports
    count = Count()
    code = pytest.main(["--collect-only", "-qq", "-p", "no:xdist", "-p", "no:cacheprovider", *sys.argv[1:]],
                       plugins=[count])
    if code != 0:
        return int(code)
    oracles = sum(count.kinds.values())
    print(f"oracle items: {oracles} of {count.total} ({100 * oracles / max(count.total, 1):.1f}%)")
    for kind, number in count.kinds.most_common():
        print(f"  {kind}: {number}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
