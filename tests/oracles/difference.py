"""Where an emu trace and a native run first disagree: the one comparison every native oracle uses."""
from __future__ import annotations

import json


def first_difference(emu: list[dict], native: list[dict], unit: str = "line") -> str | None:
    """None when the two agree item for item; otherwise the first `unit` that differs (with the one before
    it), or where one side stops and what the other goes on with."""
    for index, (mine, truth) in enumerate(zip(emu, native)):
        if mine != truth:
            return (f"{unit} {index}:\n  emu:    {json.dumps(mine)}\n  native: {json.dumps(truth)}\n"
                    f"  before: {json.dumps(emu[index - 1]) if index else '(start)'}")
    if len(emu) != len(native):
        shorter, longer = sorted(((emu, "emu"), (native, "native")), key=lambda side: len(side[0]))
        return (f"{shorter[1]} stops after {len(shorter[0])} {unit}s; {longer[1]} goes on with "
                f"{json.dumps(longer[0][len(shorter[0])])}")
    return None
