"""decode_args_spec: real DSL samples, hostile pickles that must never run, and fuzzed input."""
import base64
import builtins
import inspect
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emu.dsl.args_spec import reader as args_spec
from emu.dsl.args_spec.reader import ArgSpec, ArgSpecError, ArgSpecParameter, decode_args_spec

DATA = Path(__file__).parent.parent / "data" / "args_spec"
SAMPLES = sorted(p.stem for p in DATA.glob("*.b64"))


def sample(name: str) -> bytes:
    return (DATA / f"{name}.b64").read_bytes()


def raw_pickle(name: str) -> bytes:
    return base64.b64decode(sample(name).rstrip(b"\0"))


def encode(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


@pytest.mark.parametrize("name", SAMPLES)
def test_real_sample_matches_what_unpickling_gave(name):
    expected = json.loads((DATA / f"{name}.expected.json").read_text())
    assert decode_args_spec(sample(name)).model_dump() == expected


def test_seed_sample_exact():
    spec = decode_args_spec(sample("carveout_25"))
    assert spec == ArgSpec(
        parameters=[
            ArgSpecParameter(name="x", kind="POSITIONAL_OR_KEYWORD", annotation="cutlass.cute.typing.Tensor",
                             default=None),
            ArgSpecParameter(name="stream", kind="POSITIONAL_OR_KEYWORD",
                             annotation="cuda.bindings.driver.CUstream", default=None),
        ],
        return_annotation="cutlass.base_dsl.typing.Int32",
    )


def test_defaults_keyword_only_and_string_annotation():
    dflt = {p.name: p for p in decode_args_spec(sample("defaults_sm_90a")).parameters}
    assert dflt["alpha"].default == "2.5" and dflt["alpha"].annotation == "cutlass.base_dsl.typing.Float32"
    assert dflt["stream"].kind == "KEYWORD_ONLY" and dflt["stream"].default == "None"
    shaped = [p.annotation for p in decode_args_spec(sample("shaped_sm_90a")).parameters]
    assert shaped == ["cutlass.cute.typing.Tensor", "Shape", "cutlass.base_dsl.typing.Int64",
                      "cuda.bindings.driver.CUstream"]


@pytest.mark.parametrize("form", ["bytes_nul", "bytes", "str", "str_nul", "bytearray"])
def test_input_forms(form):
    text = sample("many_sm_90a")
    value = {"bytes_nul": text, "bytes": text.rstrip(b"\0"), "str": text.rstrip(b"\0").decode(),
             "str_nul": text.decode(), "bytearray": bytearray(text)}[form]
    assert len(decode_args_spec(value).parameters) == 6


def test_models_forbid_extra_and_describe_fields():
    for model in (ArgSpec, ArgSpecParameter):
        assert model.model_config["extra"] == "forbid"
        assert all(f.description for f in model.model_fields.values())


class _Payload:
    """Pickles as `func(*args)`: what a hostile args_spec would ask the unpickler to call."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def _hostile(marker: Path) -> list:
    return [
        _Payload(os.system, f"touch {marker}"),
        _Payload(builtins.eval, f"open({str(marker)!r}, 'w')"),
        _Payload(builtins.exec, f"open({str(marker)!r}, 'w')"),
        _Payload(subprocess.call, ["touch", str(marker)]),
        _Payload(subprocess.check_output, ["touch", str(marker)]),
    ]


def test_hostile_payload_is_live_when_really_unpickled(tmp_path):
    """Sanity check of the test itself: pickle.loads (in a child process) does run it."""
    marker = tmp_path / "really_ran"
    blob = pickle.dumps(_Payload(os.system, f"touch {marker}"))
    subprocess.run([sys.executable, "-c", "import pickle,sys; pickle.loads(sys.stdin.buffer.read())"],
                   input=blob, check=True)
    assert marker.exists()


@pytest.mark.parametrize("index", range(5))
def test_hostile_top_level_object_is_rejected_not_run(tmp_path, index):
    marker = tmp_path / "ran"
    blob = pickle.dumps(_hostile(marker)[index], protocol=index % 5)
    with pytest.raises(ArgSpecError, match="not an inspect.Signature"):
        decode_args_spec(encode(blob))
    assert not marker.exists()


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_hostile_calls_inside_a_signature_stay_symbolic(tmp_path, protocol):
    marker = tmp_path / "ran"
    evil = _hostile(marker)
    sig = inspect.Signature(
        [inspect.Parameter("x", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=evil[0], default=evil[1]),
         inspect.Parameter("y", inspect.Parameter.KEYWORD_ONLY, annotation=evil[2], default=evil[4])],
        return_annotation=evil[3])
    spec = decode_args_spec(encode(pickle.dumps(sig, protocol=protocol)))
    x, y = spec.parameters
    assert x.annotation == f"posix.system('touch {marker}')"
    assert x.default.startswith("builtins.eval(") and y.annotation.startswith("builtins.exec(")
    assert spec.return_annotation.startswith("subprocess.call([")
    assert y.default.startswith("subprocess.check_output(")
    assert not marker.exists()


def test_named_modules_are_never_imported():
    blob = (b"\x80\x04\x8c\x1bemu_test_never_imported_mod\x8c\x04boom\x93)R.")
    with pytest.raises(ArgSpecError, match="not an inspect.Signature at byte"):
        decode_args_spec(encode(blob))
    assert "emu_test_never_imported_mod" not in sys.modules


def test_protocol0_inst_is_symbolic(tmp_path):
    marker = tmp_path / "ran"
    blob = f"(S'touch {marker}'\nios\nsystem\n.".encode()
    with pytest.raises(ArgSpecError, match="not an inspect.Signature"):
        decode_args_spec(encode(blob))
    assert not marker.exists()


def _with_return_annotation(code: bytes) -> bytes:
    """A real-shaped Signature pickle whose return annotation is built by `code` (last thing memoized)."""
    blob = pickle.dumps(inspect.Signature([inspect.Parameter("x", 1)], return_annotation="@@RET@@"), protocol=4)
    placeholder = b"\x8c\x07@@RET@@\x94"
    assert blob.count(placeholder) == 1
    return blob.replace(placeholder, code)


def _shared_dag(levels: int) -> bytes:
    """memo[k+1] = [memo[k], memo[k]]: tiny pickle, exponentially large when expanded."""
    def index(k: int) -> bytes:
        return (1000 + k).to_bytes(4, "little")
    code = b"]r" + index(0) + b"0"  # EMPTY_LIST, LONG_BINPUT, POP
    for k in range(levels):
        code += b"(j" + index(k) + b"j" + index(k) + b"lr" + index(k + 1) + b"0"  # MARK GET GET LIST PUT POP
    return code + b"j" + index(levels)


def test_memo_shared_dag_renders_within_the_budget(monkeypatch):
    """2**60 leaves if expanded naively: rendering stops after its budget of values."""
    calls = []
    render = args_spec._Renderer.__call__
    monkeypatch.setattr(args_spec._Renderer, "__call__", lambda self, obj, depth=0: calls.append(depth) or render(self, obj, depth))
    blob = _with_return_annotation(_shared_dag(60))
    spec = decode_args_spec(encode(blob))
    assert "..." in spec.return_annotation and len(spec.return_annotation) < 4096
    assert len(calls) <= 2 * args_spec.RENDER_BUDGET


def test_self_containing_list_and_deep_nesting_terminate():
    cyclic = b"]r\xe8\x03\x00\x00j\xe8\x03\x00\x00a"  # l = []; l.append(l)
    assert decode_args_spec(encode(_with_return_annotation(cyclic))).return_annotation.startswith("[[[")
    deep = b")" + b"\x85" * 50_000  # ((((),),),)... 50k levels
    assert "..." in decode_args_spec(encode(_with_return_annotation(deep))).return_annotation


REAL = raw_pickle("carveout_25")
BAD_PICKLES = {
    "empty": (b"", "empty"),
    "not a pickle": (b"hello world", "at byte 0"),
    "unknown opcode": (b"\x80\x04\xff.", "at byte 2"),
    "truncated unicode": (b"\x80\x04\x8c\x10abc", "truncated opcode at byte 2"),
    "no stop": (b"\x80\x04N", "without a STOP opcode at byte 3"),
    "trailing": (REAL + b"N", "1 trailing bytes after STOP at byte"),
    "left on stack": (b"\x80\x04NN.", "2 values left on the stack at STOP at byte 4"),
    "open mark": (b"\x80\x04(N.", "values left on the stack at STOP at byte 4"),
    "int, not signature": (pickle.dumps(7), "not an inspect.Signature at byte"),
    "dict": (pickle.dumps({"a": [1, 2]}), "not an inspect.Signature"),
    "memo miss": (b"\x80\x04h\x05.", "memo entry 5 read before it was written at byte 2"),
    "underflow": (b"\x80\x04R.", "stack underflow at byte 2"),
    "pop mark without mark": (b"\x80\x04t.", "no MARK to pop to at byte 2"),
    "persistent id": (b"\x80\x04N\x94Q.", "unsupported pickle opcode BINPERSID at byte 4"),
    "ext code": (b"\x80\x04\x82\x01.", "unsupported pickle opcode EXT1 at byte 2"),
    "huge binunicode8": (b"\x80\x04\x8d" + (1 << 60).to_bytes(8, "little") + b"x.", "at byte 2"),
    "unhashable key": (b"\x80\x04}(]]u.", "dict key of type list is not a plain scalar"),
    "bad protocol": (b"\x80\x09N.", "at byte 0"),
    "reduce args not tuple": (b"\x80\x04NNR.", "REDUCE arguments are not a tuple at byte 4"),
    "build on int": (b"\x80\x04K\x01}b.", "BUILD on something"),
}


@pytest.mark.parametrize("case", sorted(BAD_PICKLES))
def test_bad_pickles_raise_with_offset(case):
    blob, message = BAD_PICKLES[case]
    with pytest.raises(ArgSpecError, match=message.replace("(", r"\(")) as info:
        decode_args_spec(encode(blob))
    assert str(info.value).endswith(".") and "\n" not in str(info.value)


@pytest.mark.parametrize("text, message", [
    ("not base64!!", "not valid base64"),
    ("gASV", "at byte"),  # valid base64 of a truncated pickle
    ("", "empty"),
    ("\0\0", "empty"),
    ("gAS\u00e9", "not ASCII base64"),
    ("A" * (2 << 20), "larger than"),
    (12, "must be bytes or str"),
])
def test_bad_text(text, message):
    with pytest.raises(ArgSpecError, match=message):
        decode_args_spec(text)


def test_structure_that_is_not_a_signature():
    sig_of_wrong_things = pickle.dumps(inspect.Signature([inspect.Parameter("x", 1)])).replace(
        b"Parameter", b"Parametex")
    with pytest.raises(ArgSpecError, match="parameter 0 is not an inspect.Parameter at byte"):
        decode_args_spec(encode(sig_of_wrong_things))


def test_every_truncation_of_a_real_sample_is_an_arg_spec_error():
    for cut in range(len(REAL)):
        with pytest.raises(ArgSpecError):
            decode_args_spec(encode(REAL[:cut]))


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(SAMPLES), edits=st.lists(
    st.tuples(st.sampled_from(["set", "insert", "delete"]), st.integers(0, 1 << 16), st.integers(0, 255)),
    min_size=1, max_size=8))
def test_mutated_real_samples_only_raise_arg_spec_error(name, edits):
    data = bytearray(raw_pickle(name))
    for action, where, value in edits:
        where %= max(len(data), 1)
        if action == "set" and data:
            data[where] = value
        elif action == "insert":
            data.insert(where, value)
        elif data:
            del data[where]
    try:
        spec = decode_args_spec(encode(bytes(data)))
    except ArgSpecError:
        return
    # what a decoded spec promises, whatever the bytes were: the checks the decoder makes held
    names = [p.name for p in spec.parameters]
    assert len(names) == len(set(names)) and len(names) <= args_spec.MAX_PARAMETERS
    assert {p.kind for p in spec.parameters} <= {kind.name for kind in inspect._ParameterKind}
    if bytes(data) == raw_pickle(name):                # an edit that changed nothing decodes as the sample did
        assert spec.model_dump() == json.loads((DATA / f"{name}.expected.json").read_text())


@settings(max_examples=200)
@given(text=st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_arbitrary_text_only_raises_arg_spec_error(text):
    """Text that is not a base64 pickle of a Signature is refused with ArgSpecError, never decoded."""
    with pytest.raises(ArgSpecError):
        decode_args_spec(text)


def test_absurd_parameter_count_is_rejected():
    sig = inspect.Signature([inspect.Parameter(f"p{i}", 1) for i in range(600)])
    with pytest.raises(ArgSpecError, match="claims 600 parameters, more than 512 at byte"):
        decode_args_spec(encode(pickle.dumps(sig)))


def test_duplicate_names_and_bad_kind_are_rejected():
    blob = pickle.dumps(inspect.Signature([inspect.Parameter("a", 1), inspect.Parameter("b", 1)]))
    with pytest.raises(ArgSpecError, match="repeats a parameter name"):
        decode_args_spec(encode(blob.replace(b"\x8c\x01b", b"\x8c\x01a")))
    bad_kind = inspect.Signature([inspect.Parameter("a", 1)])
    bad_kind.parameters["a"]._kind = 9          # pickled as the number 9 by every Python version
    with pytest.raises(ArgSpecError, match="kind is not an inspect._ParameterKind"):
        decode_args_spec(encode(pickle.dumps(bad_kind)))


class _KindByName:
    """Pickles as getattr(inspect._ParameterKind, NAME), the form Python 3.11.2 (Debian 12) writes."""

    def __init__(self, name: str):
        self.name = name

    def __reduce__(self):
        return getattr, (inspect._ParameterKind, self.name)


def test_kind_pickled_by_name_decodes_and_is_never_looked_up():
    sig = inspect.Signature([inspect.Parameter("a", 1), inspect.Parameter("b", 3)])
    for param in sig.parameters.values():
        param._kind = _KindByName(param.kind.name)
    blob = pickle.dumps(sig)
    assert b"getattr" in blob
    assert [(p.name, p.kind) for p in decode_args_spec(encode(blob)).parameters] == [
        ("a", "POSITIONAL_OR_KEYWORD"), ("b", "KEYWORD_ONLY")]
    sig.parameters["a"]._kind = _KindByName("__class__")
    with pytest.raises(ArgSpecError, match="kind is not an inspect._ParameterKind"):
        decode_args_spec(encode(pickle.dumps(sig)))
