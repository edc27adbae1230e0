"""An export's decoded args_spec, kept on disk so that a later run never walks the pickle again.

Decoding `<prefix>_args_spec` (emu.dsl.args_spec.reader: base64, then pickle opcodes walked on an inert machine)
costs a cold process several milliseconds, most of it importing pickletools and the walker.  The first
run stores the description under `$EMU_CACHE_DIR/args_specs/<code digest>/<key>.json`
(emu.cache.derived_store), keyed by the args_spec's text; later runs validate it back with the pydantic
models (emu.dsl.args_spec.model), so an entry that is not exactly an ArgSpec is ignored and decoded again.
An args_spec that does not decode is not stored: its error always comes from the decoder.
"""
from __future__ import annotations

from functools import lru_cache

from pydantic import ValidationError

from ..dsl.args_spec.model import ArgSpec
from .derived_store import MISSING, DerivedStore

# The code that shapes a stored description, relative to the emu package.
CODE = ("dsl/args_spec", "cache")      # the packages that decode and store it
STORE = DerivedStore("args_specs", CODE, format=1)


@lru_cache(maxsize=256)
def stored_args_spec(text: str) -> tuple[ArgSpec | None, str | None]:
    """emu.dsl.args_spec.reader.decode_args_spec's description of `text`, or None and why it cannot be decoded."""
    entry = STORE.entry(text)
    if entry is not None:
        value = STORE.read(entry)
        if value is not MISSING:
            try:
                return ArgSpec.model_validate(value), None
            except ValidationError:
                pass
    from ..dsl.args_spec.reader import ArgSpecError, decode_args_spec      # the pickle walker: only on a miss
    try:
        spec = decode_args_spec(text)
    except ArgSpecError as error:
        return None, str(error)
    if entry is not None:
        STORE.write(entry, spec.model_dump(mode="json"))
    return spec, None
