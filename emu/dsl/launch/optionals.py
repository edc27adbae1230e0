"""Which optional parameters an export was compiled without, when no header says so.

The header generator leaves out every argument whose compile-time value was None, so
the wrapper's `void *args[]` has no slot for it.  Without the header three things tell:
- arguments given by name: once every required tensor is given (as `<prefix>.args.json`
  gives them all), an optional one not given was None;
- the mangled launch-function name, which spells each argument in order: a tensor as
  `FakeTensor...`, a None as `None` (the DSL cuts the name at 180 characters, so it may
  say nothing about the last parameters);
- how many slots of `args[]` the launch code reads (emu.dsl.launch.discovery's probe): one per
  argument it was compiled with.
Each choice of omitted parameters that all of these allow is kept; exactly one must remain.
"""
from __future__ import annotations

from itertools import combinations
from typing import Callable

from .mangled import is_truncated, name_kinds

MAX_OPTIONALS = 16              # choices examined: at most 2**16


def fits_name(kinds: list[tuple[str, str | None]], omitted: frozenset[str], named: list[str], truncated: bool) -> bool:
    """Whether the name's T/N words are what these parameters, with `omitted` None, spell."""
    expected = ["N" if name in omitted else kind for name, kind in kinds if name in omitted or kind]
    return expected[:len(named)] == named if truncated else expected == named


def omitted_options(kinds: list[tuple[str, str | None]], optional: list[str], launch_function: str | None,
                    forced: frozenset[str] = frozenset(),
                    fits_code: Callable[[frozenset[str]], bool] | None = None) -> list[frozenset[str]]:
    """Every set of parameters that could have been None: `forced` (given as None) and some of `optional`.

    `kinds`: each parameter and the word its value leaves in the name ("T" for a tensor, None for
    anything else); `fits_code`, when given, says whether the launch code reads args[] as the
    parameters left would be passed.
    """
    named, truncated = name_kinds(launch_function), is_truncated(launch_function)
    options = []
    if len(optional) > MAX_OPTIONALS:
        return options
    for size in range(len(optional) + 1):
        for choice in combinations(optional, size):
            omitted = forced.union(choice)
            if fits_name(kinds, omitted, named, truncated) and (fits_code is None or fits_code(omitted)):
                options.append(omitted)
    return options
