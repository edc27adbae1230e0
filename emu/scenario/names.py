"""Every name a scenario uses must exist: a typo is bad input (exit 2) with its line and the nearest valid
names, never an expectation that cannot fail (`no_calls` of a misspelled symbol) or a FAIL that blames the
object (`returns` of an entry that never runs).

Two steps:
- `check_names`, when the file loads, from the scenario alone: entry names in `returns` and call patterns
  against emu.dsl.entries and the entries the scenario runs; enum names and numbers (state attributes,
  return codes, pattern arguments) against stub_models.enums; pattern argument names against each stub's model.
- `check_object`, once the object is known (a built one after its build), before anything runs: the export
  (emu refuses to run a scenario on a format or metadata it does not know, see `refuse_unknown_format`), the
  scenario's entries against the functions the export defines, every symbol against what a stub family models
  and the object's own undefined symbols, kernel names against the export's kernels.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ..errors import BadInput, ScenarioError
from .yaml_source import line_of

if TYPE_CHECKING:
    from .load import LoadedScenario
    from .model import CallPattern, Expectations, Scenario

GROUPS = ("calls_in_order", "calls_any_order", "no_calls", "exact_calls.calls")


def nearest(word: str, names: Iterable[str], what: str = "valid names") -> str:
    """` (nearest: a, b)`: the names that start with `word` or are close to it; every name when there are few."""
    import difflib          # only a refused name pays for it (about 1 ms of every cold run otherwise)

    names = sorted(set(names))
    close = [n for n in names if word and n.startswith(word)][:3]
    close += [n for n in difflib.get_close_matches(word, names, n=3, cutoff=0.6) if n not in close]
    if close:
        return f" (nearest: {', '.join(close)})"
    return f" ({what}: {', '.join(names)})" if 0 < len(names) <= 8 else ""


def fail(lines: dict, where: tuple, message: str, path: str) -> ScenarioError:
    field = ".".join(str(part) for part in where)
    return ScenarioError(f"line {line_of(lines, where)}: field {field}: {message}", path=path)


def blocks(scenario: Scenario, index: int | None = None) -> Iterator[tuple[tuple, Expectations]]:
    """Each expectations block with where it sits: the scenario's, then object `index`'s (every object's if None)."""
    yield ("expect",), scenario.expect
    for i, ref in enumerate(scenario.objects):
        if ref.expect is not None and index in (None, i):
            yield ("objects", i, "expect"), ref.expect


def patterns(expect: Expectations) -> Iterator[tuple[tuple, CallPattern]]:
    """Every call pattern of a block, with its key path inside the block."""
    for key in GROUPS:
        found = expect.exact_calls.calls if key == "exact_calls.calls" and expect.exact_calls else getattr(expect, key, [])
        for index, pattern in enumerate(found):
            yield tuple(key.split(".")) + (index,), pattern


def check_names(scenario: Scenario, lines: dict, path: str) -> None:
    """What can be checked without the object (see the module's docstring)."""
    from stub_models.enums import CudaError, FuncAttribute

    from ..dsl.entries import ENTRY_NAMES, HEADER_DEVICE_COUNT, recorded_as
    ran = [name for spec in scenario.entries for name in recorded_as(spec.name)]
    called_in = set(ran) | {spec.name for spec in scenario.entries}          # module_load's own header call

    def entry(name: str, where: tuple, valid: set[str]) -> None:
        if name not in ENTRY_NAMES:
            raise fail(lines, where, f"no entry {name!r}{nearest(name, ENTRY_NAMES, 'entries')}", path)
        if name not in valid:
            runs = f"module_load runs {', '.join(recorded_as('module_load'))}, each recorded by its own name; " \
                if name == "module_load" else ""
            raise fail(lines, where, f"{runs}the scenario runs no entry {name} (its entries run: "
                       f"{', '.join(dict.fromkeys(ran))}), so this could never hold", path)

    for prefix, expect in blocks(scenario):
        for key, pattern in patterns(expect):
            where = prefix + key
            if pattern.entry is not None:
                entry(pattern.entry, where + ("entry",), called_in if pattern.symbol == HEADER_DEVICE_COUNT else set(ran))
            _check_pattern(pattern, where, lines, path)
            if pattern.ret is not None:
                _check_enum(CudaError, pattern.ret, where + ("ret",), lines, path)
        for name, code in expect.returns.items():
            entry(name, prefix + ("returns", name), set(ran))
            if name == "tvm_ffi":         # TVM-FFI's int32 (0, or -1 with an error raised), not a cudaError_t
                if isinstance(code, str) and not code.lstrip("-").isdigit():
                    raise fail(lines, prefix + ("returns", name), f"tvm_ffi returns an int32 (0, or -1 with an error "
                               f"raised), not {code!r}", path)
                _per_call(code, sum(n == "tvm_ffi" for n in ran), prefix + ("returns", name), lines, path)
                continue
            if isinstance(code, list):
                raise fail(lines, prefix + ("returns", name), f"one return code for every run of {name}: a list, one "
                           "per call, is for tvm_ffi", path)
            _check_enum(CudaError, code, prefix + ("returns", name), lines, path)
        if expect.raises is not None:
            entry("tvm_ffi", prefix + ("raises",), set(ran))
            _per_call(expect.raises, sum(name == "tvm_ffi" for name in ran), prefix + ("raises",), lines, path)
        for index, state in enumerate(expect.state):
            _check_enum(FuncAttribute, state.attribute, prefix + ("state", index, "attribute"), lines, path, member=True)


def _per_call(expected, calls: int, where: tuple, lines: dict, path: str) -> None:
    """A list expects the tvm_ffi calls one by one: as many items as the scenario makes calls."""
    if isinstance(expected, list) and len(expected) != calls:
        raise fail(lines, where, f"a list of {len(expected)} expectation(s), one per tvm_ffi call, but the scenario "
                   f"makes {calls} tvm_ffi call(s) (null leaves a call unchecked; a single expectation applies to "
                   "every call)", path)


def _check_enum(enum, value, where: tuple, lines: dict, path: str, member: bool = False) -> None:
    """A name or number the checker will resolve later: resolve it now, so a bad one is an error with a line."""
    from stub_models.enums import enum_value
    try:
        number = enum_value(enum, value)
        if member:
            enum(number)
    except ValueError as error:
        hint = nearest(str(value).strip().upper(), enum.__members__) if isinstance(value, str) else \
            f" (valid: {', '.join(f'{int(m)} {m.name}' for m in enum)})" if member else ""
        raise fail(lines, where, f"{error}{hint}", path) from None


def _check_pattern(pattern: CallPattern, where: tuple, lines: dict, path: str) -> None:
    """Argument names in call patterns must be the stub model's parameter names, enum values its enum's."""
    from stub_models import recorded_model
    model = recorded_model(pattern.symbol)
    if model is None:
        if pattern.args or pattern.outputs:
            raise fail(lines, where, f"{pattern.symbol} has no stub model, so its arguments cannot be matched", path)
        return
    names = {p.name: p.c for p in model.params()}
    for name, value in {**pattern.args, **pattern.outputs}.items():
        here = where + ("args", name)
        if name not in names:
            raise fail(lines, here, f"{pattern.symbol} has no parameter {name!r} (it has {', '.join(names)})", path)
        enum = names[name].enum
        if enum is not None and isinstance(value, str):
            _check_enum(enum, value, here, lines, path)


def check_objects(loaded: LoadedScenario, only: int | None = None) -> None:
    """`check_object` for every object (or object `only`) not checked yet: all of them before any runs."""
    for index in range(len(loaded.scenario.objects)):
        if only in (None, index) and index not in loaded.checked:
            check_object(loaded, index)
            loaded.checked.add(index)


def check_object(loaded: LoadedScenario, index: int) -> None:
    """What needs object `index` (built first if the scenario builds it): see the module's docstring."""
    from ..cache.loaded import load_image
    from ..dsl.exports import choose
    scenario, lines, path = loaded.scenario, loaded.lines, loaded.name()
    ref, where = scenario.objects[index], ("objects", index)
    image, exports = load_image(loaded.object_path(index))
    object_path = ref.path or ref.label()          # as the scenario names it
    named = ref.export or next((spec.export for spec in scenario.entries if spec.export is not None), None)
    try:
        export = choose(exports, named, image.path)
    except BadInput as error:
        raise fail(lines, where + (("export",) if ref.export else ()), error.render(), path) from None
    if not export.ffi_name:         # a TVM-FFI export carries no version or kernel_info by design
        refuse_unknown_format(export, image, object_path, lines, where, path)
    for position, spec in enumerate(scenario.entries):
        absent = _absent(export, image, spec.name)
        if absent:
            raise fail(lines, ("entries", position), f"{object_path}: export {export.name} has no {absent}, "
                       f"so entry {spec.name} cannot run", path)
    _check_symbols(scenario, index, image, object_path, lines, path)
    kernels = [(("runtime", "kernel_attributes", name), name) for name in scenario.runtime.kernel_attributes]
    kernels += [(prefix + ("state", i, "kernel"), state.kernel) for prefix, expect in blocks(scenario, index)
                for i, state in enumerate(expect.state)]
    for here, name in kernels:
        if name != "*" and name not in export.kernels:
            raise fail(lines, here, f"{object_path}: export {export.name} has no kernel {name!r}"
                       f"{nearest(name, export.kernels, 'its kernels')}; '*' means every kernel", path)


def refuse_unknown_format(export, image, object_path: str, lines: dict, where: tuple, path: str) -> None:
    """Refused, not flagged: a scenario gates CI, and its pass or FAIL on an export emu does not know
    would rest on calls emu cannot vouch for; `trace` runs it anyway, with the reason shown."""
    from ..dsl.generations import unknown_format
    reason = unknown_format(export, image.data_symbols.__contains__)
    if reason:
        raise fail(lines, where, f"{object_path}: emu does not know this export's format or metadata: {reason}. "
                   "A scenario on it would pass or fail on calls emu cannot vouch for, so `run` refuses it; "
                   "`python -m emu trace` shows what its loaders do anyway (flagged), and a newer emu may know "
                   "the format", path)


def _absent(export, image, entry: str) -> str | None:
    """What the export lacks to run `entry`, or None."""
    from ..dsl.entries import KINDS
    from ..dsl.generations import FORMATS
    if entry == "process_exit":                # the destructor every TVM-FFI export registers (.fini_array)
        return None if export.ffi_name else "destructor (process_exit runs a TVM-FFI export's unload at exit)"
    if entry == "tvm_ffi" or (entry == "launch" and export.ffi_name):
        if not export.ffi_name:
            return "__tvm_ffi_<name> entry (it is a CuTe-ABI export: its launch entry is `launch`)"
        return None if entry == "tvm_ffi" else "launch wrapper (it is a TVM-FFI export: its entry is `tvm_ffi`)"
    if entry == "launch":
        found = export.launch_function in image.functions
        return None if found else f"launch function (_mlir_{export.prefix}__mlir_ciface_*)"
    if entry == "module_load":
        per_device = FORMATS[export.format].module_load_per_device
        needed = [export.entry_symbol(name) for name in ("mlir_cuda_init", "mlir_cuda_load_to_device" if per_device
                                                         else "mlir_cuda_load")]
    else:
        needed = [KINDS[entry].symbol.format(prefix=export.prefix)]
    missing = [symbol for symbol in needed if symbol not in image.functions]
    return f"function {' or '.join(missing)}" if missing else None


def _check_symbols(scenario: Scenario, index: int, image, object_path: str, lines: dict, path: str) -> None:
    """Each symbol named must be one a stub family models, one the object leaves undefined, the header's call, or a
    runtime call a helper the object imports makes inside itself; an injected error only where the call returns one."""
    from ..dsl.entries import HEADER_DEVICE_COUNT
    from ..stubs.families import families, provides
    named = [(("runtime", "errors", i, "symbol"), error.symbol) for i, error in enumerate(scenario.runtime.errors)]
    for prefix, expect in blocks(scenario, index):
        named += [(prefix + key + ("symbol",), pattern.symbol) for key, pattern in patterns(expect)]
        if expect.exact_calls and expect.exact_calls.symbols:
            named += [(prefix + ("exact_calls", "symbols", i), s) for i, s in enumerate(expect.exact_calls.symbols)]
    undefined = {name for name in image.stub_symbols if name}
    injected = {where for where, _ in named[:len(scenario.runtime.errors)]}
    for where, symbol in named:
        inner = _inner_call(symbol, undefined)
        if inner is not None and where in injected and not inner.injectable:
            raise fail(lines, where, f"{symbol} returns a `const char *` (the text {', '.join(inner.made_by)} puts in "
                       f"the error it raises), not a cudaError_t: there is no error to inject into it", path)
        if symbol == HEADER_DEVICE_COUNT and where in injected and inner is None:
            raise fail(lines, where, f"{symbol} is called by module_load's header code (C outside the object), whose answer "
                       f"emu records but cannot make fail; set runtime.device_count (0: no device) instead", path)
        if provides(symbol) or symbol in undefined or symbol == HEADER_DEVICE_COUNT or inner is not None:
            continue
        known = undefined | {name for family in families() for name in family.models} | {HEADER_DEVICE_COUNT}
        known |= {name for name in _inner_models() if _inner_call(name, undefined) is not None}
        helpers = {helper for name in _inner_models() for helper in _inner_models()[name].made_by}
        made = f" ({symbol} is called inside {', '.join(sorted(_inner_models()[symbol].made_by))}, which " \
            f"{object_path} does not import)" if symbol in _inner_models() and not helpers & undefined else ""
        raise fail(lines, where, f"unknown symbol {symbol!r}: no stub models it and {object_path} does not import it, "
                   f"so no call to it can happen{made}{nearest(symbol, known)}", path)


def _inner_models() -> dict:
    from stub_models import INNER_CATALOGUE
    return {name: INNER_CATALOGUE[name] for name in INNER_CATALOGUE}


def _inner_call(symbol: str, undefined: set[str]):
    """The model of a plain runtime call a cuda_dialect helper the object imports makes inside itself
    (stub_models.inner: cudaGetDeviceCount, cudaGetErrorName/String, cudaLibraryUnload), else None."""
    from stub_models import INNER_CATALOGUE
    model = INNER_CATALOGUE.get(symbol)
    return model if model is not None and undefined.intersection(model.made_by) else None
