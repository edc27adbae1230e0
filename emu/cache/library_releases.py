"""Which release of a library is installed, read from its install record without importing it.

What emu keeps on disk was made by libraries as well as by emu's code: an image-store entry holds
what LIEF parsed and what capstone decoded, a header-store entry what pycparser parsed.  Their
versions are not pinned, so an upgrade (a fresh environment installs the newest) must make the
next run compute again rather than read what the old release made; and a served command must run
on the libraries a fresh process would import.  Stores and the server therefore key on these
releases too.  Importing LIEF costs a second and importlib.metadata about ten milliseconds of
imports; a `find_spec` and one listing of the folder the library sits in cost microseconds.
"""
from __future__ import annotations

import os
from importlib.util import find_spec

# distribution -> the module it installs (where they differ)
_MODULES = {"pyyaml": "yaml"}
_RECORDS: dict[str, dict[str, str]] = {}    # folder -> {normalised distribution: version} of its install records
_RELEASES: dict[str, str] = {}              # distribution -> what release() answered


def _normal(name: str) -> str:
    return name.replace("-", "_").replace(".", "_").lower()


def _records(folder: str) -> dict[str, str]:
    """The install records (`name-version.dist-info`, `name-version[-pyX.Y].egg-info`) in a folder, read once."""
    records = _RECORDS.get(folder)
    if records is None:
        records = _RECORDS[folder] = {}
        try:
            entries = os.listdir(folder)
        except OSError:
            entries = []
        for entry in entries:
            stem = entry[:-10] if entry.endswith(".dist-info") else entry[:-9] if entry.endswith(".egg-info") else ""
            if stem:
                name, _, version = stem.partition("-")
                records.setdefault(_normal(name), version.partition("-py")[0])
    return records


def release(distribution: str) -> str:
    """`name version` of an installed distribution, `name not installed`, or `name at PATH` when
    its module is importable but no install record beside it says which release it is (a source checkout)."""
    known = _RELEASES.get(distribution)
    if known is not None:
        return known
    wanted = _normal(distribution)
    try:
        spec = find_spec(_MODULES.get(wanted, wanted))
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None and not spec.submodule_search_locations:
        answer = f"{distribution} not installed"
    else:
        module = os.path.abspath(next(iter(spec.submodule_search_locations or ()), None) or spec.origin)
        version = _records(os.path.dirname(module)).get(wanted)
        answer = f"{distribution} {version}" if version else f"{distribution} at {module}"
    _RELEASES[distribution] = answer
    return answer


def releases(distributions: tuple[str, ...]) -> str:
    """One line per distribution, as `release` says it, in the order given."""
    return "\n".join(release(name) for name in distributions)
