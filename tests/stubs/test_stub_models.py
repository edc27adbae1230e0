"""The stub-model catalogue is complete and exact.

(a) every symbol libcute_dsl_runtime.so exports (stub_models/wrappers.txt) has a model, and only those;
(b) every field has a C marker and a description; every model has symbol, prototype and api;
(c) where cuda-bindings is installed, every enum name and value matches it (skipped otherwise);
(d) every model's fields are the prototype's parameters: same count, same names, same order,
    and C kinds that fit the C types.
"""
from __future__ import annotations

import re
from enum import IntEnum
from pathlib import Path

import pytest

from stub_models import CATALOGUE, MODELS, CudaCall
from stub_models import enums as E
from stub_models.base import C
from tests import oracles

WRAPPERS = Path(__file__).resolve().parents[2] / "stub_models" / "wrappers.txt"
MODEL_IDS = [m.symbol for m in MODELS]


def exported_symbols() -> list[str]:
    return [line.strip() for line in WRAPPERS.read_text().splitlines() if line.strip() and not line.startswith("#")]


# --- (a) ---------------------------------------------------------------------------------------

def test_wrappers_file_documents_its_command():
    first = WRAPPERS.read_text().splitlines()[0]
    assert first.startswith("# nm -D --defined-only")


def test_every_exported_wrapper_has_a_model_and_no_other():
    exported = exported_symbols()
    assert len(exported) == len(set(exported)) == 64
    assert set(CATALOGUE) == set(exported)
    assert len(MODELS) == len(CATALOGUE), "a model is listed twice in MODELS"


# --- (b) ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
def test_fields_have_markers_and_descriptions(model: type[CudaCall]):
    assert issubclass(model, CudaCall)
    for name, info in model.model_fields.items():
        markers = [m for m in info.metadata if isinstance(m, C)]
        assert len(markers) == 1, f"{name} needs exactly one C marker"
        assert info.description and info.description.strip(), f"{name} has no description"
        c = markers[0]
        assert (c.pointee is not None) == (c.kind == "out"), f"{name}: pointee goes with kind out"
        assert (c.struct is not None) == (c.kind == "struct"), f"{name}: struct goes with kind struct"
        if c.enum is not None:
            assert c.kind in ("i32", "u32") and issubclass(c.enum, IntEnum)
    assert [p.name for p in model.params()] == list(model.model_fields)


@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
def test_model_class_attributes(model: type[CudaCall]):
    assert model.symbol and model.prototype
    expected = ("helper" if model.symbol.startswith("cuda_dialect_") else "runtime" if model.symbol.startswith("_cuda")
                else "driver")
    assert model.api == expected


# --- (d) ---------------------------------------------------------------------------------------

def split_prototype(prototype: str) -> tuple[str, list[tuple[str, str]]]:
    """('cudaGetDevice', [('int *', 'device')]) from 'cudaError_t cudaGetDevice(int *device)'."""
    match = re.fullmatch(r"\s*(.+?)\s*\**\s*\b(\w+)\s*\((.*)\)\s*", prototype)
    assert match, prototype
    name, inside = match.group(2), match.group(3).strip()
    if inside in ("", "void"):
        return name, []
    params = []
    for part in inside.split(","):
        m = re.fullmatch(r"\s*(.*?[\s*])(\w+)\s*", part)
        assert m, f"cannot parse parameter {part!r} of {prototype}"
        params.append((" ".join(m.group(1).split()), m.group(2)))
    return name, params


HANDLE_TYPES = {"cudaStream_t", "cudaEvent_t", "cudaLibrary_t", "cudaKernel_t", "cudaGraph_t", "cudaGraphExec_t",
                "CUlibrary", "CUkernel", "CUmodule", "CUfunction", "CUstream"}
INT_TYPES = {"int": {"i32"}, "unsigned int": {"u32"}, "cuuint32_t": {"u32"}, "size_t": {"size"},
             "unsigned long long": {"u64"}, "CUdevice": {"i32"}}
ENUM_TYPES = {"cudaDeviceAttr", "cudaFuncAttribute", "CUfunction_attribute", "cudaMemcpyKind", "cudaStreamCaptureMode",
              "cudaError_t", "CUtensorMapDataType", "CUtensorMapInterleave", "CUtensorMapSwizzle",
              "CUtensorMapL2promotion", "CUtensorMapFloatOOBfill"}


def allowed_kinds(ctype: str) -> set[str]:
    base = ctype.replace("const ", "").strip()
    if base in HANDLE_TYPES:
        return {"handle"}
    if base in INT_TYPES:
        return INT_TYPES[base]
    if base in ENUM_TYPES:
        return {"i32", "u32"}
    if base == "char *":
        return {"cstr"}
    if base.endswith("*") or base.endswith("_fn") or base == "cudaStreamCallback_t":
        return {"ptr", "out", "struct", "handle"}
    raise AssertionError(f"unknown C type {ctype!r}")


@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
def test_fields_follow_the_prototype(model: type[CudaCall]):
    name, params = split_prototype(model.prototype)
    fields = model.params()
    assert len(fields) == len(params), f"{len(fields)} fields for a {len(params)}-parameter prototype"
    assert [f.name.rstrip("_") for f in fields] == [p for _, p in params]
    for field, (ctype, pname) in zip(fields, params):
        assert field.c.kind in allowed_kinds(ctype), f"{pname}: {ctype} read as {field.c.kind}"
        if ctype.replace("const ", "") in ENUM_TYPES:
            assert field.c.enum is not None, f"{pname} ({ctype}) should name its enum"
    if model.symbol.startswith("cuda_dialect_"):
        assert name == model.symbol
    elif model.public_prototype is not None:
        assert name == model.symbol, "a wrapper-specific prototype is named after the wrapper"
        public_name, _ = split_prototype(model.public_prototype)
        assert public_name == model.symbol[1:]
    else:
        assert name == model.symbol[1:]


def test_wrappers_that_differ_from_the_public_api():
    differing = {m.symbol: m for m in MODELS if m.public_prototype is not None}
    assert set(differing) == {"_cudaLaunchKernel", "_cudaStreamWaitEvent"}
    # _cudaLaunchKernel: dim3 by value -> six unsigned ints; _cudaStreamWaitEvent: flags fixed to 0.
    assert len(CATALOGUE["_cudaLaunchKernel"].params()) == 10
    assert len(split_prototype(CATALOGUE["_cudaLaunchKernel"].public_prototype)[1]) == 6
    assert len(CATALOGUE["_cudaStreamWaitEvent"].params()) == 2
    assert len(split_prototype(CATALOGUE["_cudaStreamWaitEvent"].public_prototype)[1]) == 3


# --- enums without cuda-bindings ---------------------------------------------------------------

def test_enum_names_emu_relies_on():
    assert E.CudaError.SUCCESS == 0 and E.CudaError.INVALID_VALUE == 1 and E.CudaError.INVALID_DEVICE == 101
    assert E.CudaError.SYMBOL_NOT_FOUND == 500 and E.CudaError.INVALID_RESOURCE_HANDLE == 400
    assert E.CudaError.INVALID_CONFIGURATION == 9 and E.CudaError.INVALID_DEVICE_FUNCTION == 98
    assert E.FuncAttribute.SHARED_SIZE_BYTES == 1 and E.FuncAttribute.NUM_REGS == 4
    assert E.FuncAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES == 8 and E.FuncAttribute.PREFERRED_SHARED_MEMORY_CARVEOUT == 9
    assert E.FuncAttribute.NON_PORTABLE_CLUSTER_SIZE_ALLOWED == 14 and E.FuncAttribute.CLUSTER_SCHEDULING_POLICY_PREFERENCE == 15
    assert E.LaunchAttributeID.CLUSTER_DIMENSION == 4 and E.LaunchAttributeID.PREFERRED_SHARED_MEMORY_CARVEOUT == 14
    assert E.DeviceAttribute.MULTIPROCESSOR_COUNT == 16 and E.DeviceAttribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN == 97
    assert E.DeviceAttribute.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR == 81 and E.DeviceAttribute.CLUSTER_LAUNCH == 120
    assert E.READ_ONLY_FUNC_ATTRIBUTES == frozenset(range(8))
    for number in range(8, 16):
        assert E.CudaFuncAttribute(number).name == E.FuncAttribute(number).name


@pytest.mark.oracle(oracles.H200)
def test_device_attributes_cover_the_h200_probe():
    import json
    probe = Path(__file__).resolve().parents[1] / "data" / "facts" / "h200-probe.jsonl"
    answered = next(json.loads(line)["device_attributes"] for line in probe.read_text().splitlines()
                    if "device_attributes" in line)
    missing = [n for n in map(int, answered) if n not in E.DeviceAttribute._value2member_map_]
    assert not missing


@pytest.mark.parametrize("text, enum, value", [
    ("cudaDevAttrMaxSharedMemoryPerBlockOptin", E.DeviceAttribute, 97),
    ("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT", E.DeviceAttribute, 16),
    ("cudaDevAttrMaxTexture1DWidth", E.DeviceAttribute, 21),
    ("max_shared_memory_per_block_optin", E.DeviceAttribute, 97),
    ("cudaFuncAttributeMaxDynamicSharedMemorySize", E.FuncAttribute, 8),
    ("CU_FUNC_ATTRIBUTE_NUM_REGS", E.FuncAttribute, 4),
    ("PreferredSharedMemoryCarveout", E.FuncAttribute, 9),
    ("cudaFuncAttributeSharedMemoryMode", E.CudaFuncAttribute, 16),
    ("cudaErrorInvalidValue", E.CudaError, 1),
    ("CUDA_ERROR_INVALID_VALUE", E.CudaError, 1),
    ("cudaErrorCudartUnloading", E.CudaError, 4),
    ("cudaSuccess", E.CudaError, 0),
    ("CUDA_SUCCESS", E.CUresult, 0),
    ("CUDA_ERROR_NOT_FOUND", E.CUresult, 500),
    ("cudaLaunchAttributeClusterDimension", E.LaunchAttributeID, 4),
    ("CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B", E.TensorMapDataType, 13),
    ("CU_TENSOR_MAP_SWIZZLE_128B", E.TensorMapSwizzle, 3),
    ("-2", E.CudaError, -2),
    (7, E.FuncAttribute, 7),
])
def test_enum_value_spellings(text, enum, value):
    assert E.enum_value(enum, text) == value


def test_enum_value_and_label_errors():
    with pytest.raises(ValueError):
        E.enum_value(E.FuncAttribute, "NOT_AN_ATTRIBUTE")
    assert E.enum_label(E.FuncAttribute, 9) == "9 PREFERRED_SHARED_MEMORY_CARVEOUT"
    assert E.enum_label(E.FuncAttribute, 99) == "99"
    assert E.enum_label(None, 5) == "5"


# --- (c) against cuda-bindings -----------------------------------------------------------------

def bindings():
    runtime = pytest.importorskip("cuda.bindings.runtime")
    driver = pytest.importorskip("cuda.bindings.driver")
    return runtime, driver


def compact(name: str) -> str:
    return name.replace("_", "").upper()


def real_members(bound, prefix: str, full: bool = False):
    """(name without prefix, value) for every member name of a cuda-bindings enum, aliases included,
    leaving out the *_MAX / NUM_* sentinels; with `full`, (full name, short name, value)."""
    for name, member in bound.__members__.items():
        short = name[len(prefix):] if name.startswith(prefix) else name
        if short.upper() in ("MAX", "NUM_OPTIONS") or short.upper().endswith("_MAX"):
            continue
        yield (name, short, int(member.value)) if full else (short, int(member.value))


def ours_name(short: str, digit_word: str = "") -> str:
    return f"{digit_word}_{short}" if short[0].isdigit() else short


def check_driver_enum(ours: type[IntEnum], bound, prefix: str, digit_word: str = ""):
    """Same names (with their prefix dropped) and values, both ways, aliases included."""
    theirs = dict((ours_name(s, digit_word), v) for s, v in real_members(bound, prefix))
    for name, value in theirs.items():
        assert name in ours.__members__, f"{ours.__name__} lacks {prefix}{name} = {value}"
        assert int(ours.__members__[name]) == value, f"{ours.__name__}.{name}"
    known_values = set(theirs.values())
    for name, member in ours.__members__.items():
        if name in theirs:
            continue
        # a name newer than the installed cuda-bindings: its number must not mean something else there
        assert int(member) not in known_values, f"{ours.__name__}.{name} = {int(member)} is named differently in cuda-bindings"


def check_runtime_enum(ours: type[IntEnum], bound, prefix: str, names_follow_runtime: bool):
    """Every runtime value is present and its runtime spelling resolves to it through enum_value."""
    for name, short, value in real_members(bound, prefix, full=True):
        assert value in ours._value2member_map_, f"{ours.__name__} lacks {name} = {value}"
        assert E.enum_value(ours, name) == value, name
        if names_follow_runtime and name.startswith(prefix):
            assert compact(short) in {compact(n) for n, m in ours.__members__.items() if int(m) == value}, \
                f"{ours.__name__}: no member spelled like {name}"


def test_h200_example_attribute_number():
    runtime, driver = bindings()
    assert runtime.cudaDeviceAttr.cudaDevAttrMaxSharedMemoryPerBlockOptin == 97 == E.DeviceAttribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN


@pytest.mark.oracle(oracles.NVIDIA)
def test_device_attributes_match_cuda_bindings():
    runtime, driver = bindings()
    check_driver_enum(E.DeviceAttribute, driver.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_")
    check_runtime_enum(E.DeviceAttribute, runtime.cudaDeviceAttr, "cudaDevAttr", names_follow_runtime=False)


@pytest.mark.oracle(oracles.NVIDIA)
def test_function_attributes_match_cuda_bindings():
    runtime, driver = bindings()
    check_driver_enum(E.FuncAttribute, driver.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_")
    check_runtime_enum(E.CudaFuncAttribute, runtime.cudaFuncAttribute, "cudaFuncAttribute", names_follow_runtime=False)
    runtime_values = {v for _, v in real_members(runtime.cudaFuncAttribute, "cudaFuncAttribute")}
    extra = {int(m) for m in E.CudaFuncAttribute} - runtime_values
    assert extra <= set(range(8)) | {16}, "CudaFuncAttribute only adds the read-only driver numbers 0-7"


@pytest.mark.oracle(oracles.NVIDIA)
def test_launch_attributes_match_cuda_bindings():
    runtime, driver = bindings()
    check_driver_enum(E.LaunchAttributeID, driver.CUlaunchAttributeID, "CU_LAUNCH_ATTRIBUTE_")
    check_runtime_enum(E.LaunchAttributeID, runtime.cudaLaunchAttributeID, "cudaLaunchAttribute", names_follow_runtime=True)


@pytest.mark.oracle(oracles.NVIDIA)
def test_errors_match_cuda_bindings():
    runtime, driver = bindings()
    check_runtime_enum(E.CudaError, runtime.cudaError_t, "cudaError", names_follow_runtime=True)
    theirs = {int(m.value) for m in runtime.cudaError_t}
    for member in E.CudaError:       # nothing invented: numbers the installed runtime lacks must be newer ones
        assert int(member) in theirs or int(member) in (917, 918, 919, 227, 10), member
    check_driver_enum(E.CUresult, _without(driver.CUresult, "CUDA_SUCCESS"), "CUDA_ERROR_")
    assert E.CUresult.SUCCESS == driver.CUresult.CUDA_SUCCESS == 0


class _without:
    """A view of a cuda-bindings enum without one member (CUDA_SUCCESS has no CUDA_ERROR_ prefix)."""

    def __init__(self, bound, name):
        self.__members__ = {k: v for k, v in bound.__members__.items() if k != name}


@pytest.mark.oracle(oracles.NVIDIA)
def test_small_enums_match_cuda_bindings():
    runtime, driver = bindings()
    check_driver_enum(E.Limit, driver.CUlimit, "CU_LIMIT_")
    check_runtime_enum(E.Limit, runtime.cudaLimit, "cudaLimit", names_follow_runtime=True)
    check_driver_enum(E.FuncCache, driver.CUfunc_cache, "CU_FUNC_CACHE_")
    check_runtime_enum(E.FuncCache, runtime.cudaFuncCache, "cudaFuncCache", names_follow_runtime=True)
    check_runtime_enum(E.SharedMemConfig, runtime.cudaSharedMemConfig, "cudaSharedMem", names_follow_runtime=True)
    check_runtime_enum(E.SharedMemConfig, driver.CUsharedconfig, "CU_SHARED_MEM_CONFIG_", names_follow_runtime=False)
    check_runtime_enum(E.MemcpyKind, runtime.cudaMemcpyKind, "cudaMemcpy", names_follow_runtime=True)
    check_runtime_enum(E.StreamCaptureMode, runtime.cudaStreamCaptureMode, "cudaStreamCaptureMode", names_follow_runtime=True)
    check_runtime_enum(E.GraphInstantiateFlags, runtime.cudaGraphInstantiateFlags, "cudaGraphInstantiateFlag",
                       names_follow_runtime=True)
    for ours, prefix in ((E.StreamFlags, "cudaStream"), (E.EventFlags, "cudaEvent"), (E.MemAttachFlags, "cudaMemAttach")):
        for member in ours:
            spelled = prefix + "".join(word.capitalize() for word in member.name.split("_"))
            assert getattr(runtime, spelled) == int(member), spelled


@pytest.mark.oracle(oracles.NVIDIA)
def test_tensor_map_enums_match_cuda_bindings():
    runtime, driver = bindings()
    check_driver_enum(E.TensorMapDataType, driver.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_", digit_word="TYPE")
    check_driver_enum(E.TensorMapInterleave, driver.CUtensorMapInterleave, "CU_TENSOR_MAP_INTERLEAVE_", digit_word="INTERLEAVE")
    check_driver_enum(E.TensorMapSwizzle, driver.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_", digit_word="SWIZZLE")
    check_driver_enum(E.TensorMapL2Promotion, driver.CUtensorMapL2promotion, "CU_TENSOR_MAP_L2_PROMOTION_")
    check_driver_enum(E.TensorMapFloatOOBFill, driver.CUtensorMapFloatOOBfill, "CU_TENSOR_MAP_FLOAT_OOB_FILL_")


def test_project_does_not_import_cuda_bindings():
    root = Path(__file__).resolve().parents[2]
    for path in [*root.glob("stub_models/*.py"), *root.glob("emu/**/*.py")]:
        text = path.read_text()
        assert not re.search(r"^\s*(from|import)\s+cuda(\.bindings)?\b", text, re.M), path


def test_generated_decoders_convert_every_argument_kind():
    """The per-model decoders (emu.stubs.dispatch) turn raw 64-bit values into each kind's JSON value."""
    from emu.stubs.dispatch import _compile_decoder

    params = (("a", "i32", None), ("b", "u32", None), ("c", "i64", None), ("d", "u64", None), ("e", "out", None))
    decode = _compile_decoder(params)
    raw = [0xFFFF_FFFF_FFFF_FFFF, 0x1_8000_0001, 0x8000_0000_0000_0000, 0xDEAD_BEEF_0000_0001, 0x7000_0010]
    assert decode(raw, None) == {"a": -1, "b": 0x8000_0001, "c": -(1 << 63), "d": 0xDEAD_BEEF_0000_0001, "e": 0x7000_0010}
    assert decode([0x7FFF_FFFF, 5, 1 << 62, 0, 0], None) == {"a": 0x7FFF_FFFF, "b": 5, "c": 1 << 62, "d": 0, "e": 0}
    for model in MODELS:                                   # every real model compiles and keeps its parameter order
        names = [p.name for p in model.params()]
        params = tuple((p.name, "u64", None) for p in model.params())
        assert list(_compile_decoder(params)(list(range(len(names))), None)) == names
        decode = _compile_decoder(params, model)
        instance, values = decode(list(range(len(names))), None)
        assert type(instance) is model and instance.__dict__ == values and list(values) == names
        assert [getattr(instance, name) for name in names] == list(range(len(names)))
        again, shown = decode(tuple(range(len(names))), None)     # the same words: the same frozen instance,
        assert again is instance and shown == values and shown is not values    # the trace's values a copy each call


def test_decoders_that_read_memory_decode_every_call(monkeypatch):
    """A C string is read from guest memory on every call: the same pointer may hold another text next time."""
    import emu.stubs.dispatch as dispatch

    model = next(m for m in MODELS if any(p.c.kind == "cstr" for p in m.params()))
    params = tuple((p.name, p.c.kind, p.c.struct) for p in model.params())
    memory = {"text": b"first\0"}                      # what read_c_string reads through unicorn_c.mem_read
    monkeypatch.setattr(dispatch, "mem_read", lambda uc, address, size: (memory["text"] + bytes(size))[:size])
    decode = dispatch._compile_decoder(params, model)
    first = decode([0x1000] * len(params), None)
    memory["text"] = b"second\0"
    second = decode([0x1000] * len(params), None)
    name = next(p.name for p in model.params() if p.c.kind == "cstr")
    assert (first[1][name], second[1][name]) == ("first", "second") and first[0] is not second[0]


def test_each_enum_is_the_class_statement_s():
    """stub_models.enums builds its enums the standard library's fast way (enum._simple_enum), those a run of the
    loaders never names only when first named (`_more`); each is the enum `class X(IntEnum)` at the module's top
    level makes of the same body: members, aliases, values, names, order, docs and how a member prints.  Checked
    against classes made from the module's own text by class statements, and, where the standard library has it
    (3.11+), with its own comparison of the two."""
    import enum
    import subprocess
    import sys

    text = re.sub(r"^( *)@_fast\(IntEnum\)\n( *)class (\w+):", r"\1class \3(IntEnum):", Path(E.__file__).read_text(),
                  flags=re.M)
    plain: dict = {"__name__": E.__name__}
    exec(compile(text, E.__file__, "exec"), plain)      # noqa: S102 - the module's own text
    made_later = plain["_more"]()
    assert set(made_later) == set(E._MORE)
    fresh = subprocess.run([sys.executable, "-c", "import stub_models.enums as E; print(sorted(set(E._MORE) & set(vars(E))))"],
                           capture_output=True, text=True, cwd=Path(E.__file__).parents[1], timeout=60)
    assert fresh.stdout.strip() == "[]", fresh.stderr                               # not made at import
    ours = {name: getattr(E, name) for name in [*E._MORE, "FuncAttribute", "CudaFuncAttribute", "LaunchAttributeID",
                                                "CudaError", "DeviceAttribute"]}
    assert set(E._MORE) <= set(vars(E))                 # made once named, and kept
    for name, fast in ours.items():
        made = made_later.get(name) or plain[name]
        assert (fast.__name__, fast.__module__, fast.__doc__, fast.__mro__[1:]) == \
               (made.__name__, made.__module__, made.__doc__, made.__mro__[1:])
        assert fast.__qualname__ == name                 # a top-level class's
        assert [(k, int(v), v.name) for k, v in fast.__members__.items()] == [(k, int(v), v.name) for k, v in made.__members__.items()]
        for member, twin in zip(fast, made):
            assert type(member) is fast and (repr(member), str(member), format(member), f"{member:>4}") == \
                   (repr(twin), str(twin), format(twin), f"{twin:>4}")
            assert fast(int(member)) is member and fast[member.name] is member
        if hasattr(enum, "_test_simple_enum"):
            enum._test_simple_enum(made, fast)
