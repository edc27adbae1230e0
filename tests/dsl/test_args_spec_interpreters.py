"""decode_args_spec reads the pickles every CPython writes: each interpreter we can run pickles real
inspect.Signature and inspect.FullArgSpec objects (every protocol) in a subprocess and says what they
hold; the decoder, which never unpickles, must describe the same parameters.

CPython 3.11.2 (Debian's system python3.11) pickles a parameter kind by name,
`getattr(inspect._ParameterKind, 'POSITIONAL_OR_KEYWORD')`; later 3.11 releases pickle it by value.
nvidia-cutlass-dsl 4.4.x stores an inspect.FullArgSpec instead of an inspect.Signature.
"""
import json
import os
import subprocess
import sys

import pytest

from emu.dsl.args_spec.reader import decode_args_spec
from tests import oracles

INTERPRETERS = {"system-python3.11": "/usr/bin/python3.11", "project": sys.executable}

# Runs inside each interpreter: pickles, plus the description the real objects give.
PROBE = r'''
import base64, inspect, json, pickle, sys, types

typing_module = types.ModuleType("cutlass.cute.typing")     # pickles refer to the DSL's annotation classes by name
class Tensor: pass
Tensor.__module__ = typing_module.__name__
typing_module.Tensor = Tensor
for name in ("cutlass", "cutlass.cute"):
    sys.modules[name] = types.ModuleType(name)
sys.modules[typing_module.__name__] = typing_module

def launch(a: Tensor, b: "Shape" = 2, *rest, alpha: float = 2.5, stream=None, **extra) -> int: pass
def plain(x, y=None): pass

def kind_name(p): return p.kind.name
def render(annotation):
    if annotation is inspect.Parameter.empty: return None
    return annotation if isinstance(annotation, str) else f"{annotation.__module__}.{annotation.__qualname__}"
out = []
for fn in (launch, plain):
    sig = inspect.signature(fn)
    expected = [[p.name, kind_name(p), render(p.annotation), None if p.default is inspect.Parameter.empty else repr(p.default)]
                for p in sig.parameters.values()]
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        for form, obj in (("Signature", sig), ("FullArgSpec", inspect.getfullargspec(fn))):
            out.append({"form": form, "protocol": proto, "expected": expected,
                        "returns": render(sig.return_annotation),
                        "b64": base64.b64encode(pickle.dumps(obj, protocol=proto)).decode()})
print(json.dumps(out))
'''


def _cases(interpreter: str) -> list[dict]:
    if not os.path.exists(interpreter):
        pytest.skip(f"{interpreter} is not installed here")
    done = subprocess.run([interpreter, "-c", PROBE], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.oracle(oracles.CPYTHON)
@pytest.mark.parametrize("name", sorted(INTERPRETERS))
def test_every_protocol_of_every_form_decodes_like_inspect_says(name):
    cases = _cases(INTERPRETERS[name])
    assert {c["form"] for c in cases} == {"Signature", "FullArgSpec"}
    for case in cases:
        spec = decode_args_spec(case["b64"])
        got = [[p.name, p.kind, p.annotation, p.default] for p in spec.parameters]
        assert got == case["expected"], (case["form"], case["protocol"])
        assert spec.return_annotation == case["returns"]


def test_system_python_spells_the_kind_by_name():
    """The form that used to be refused really is what Debian's 3.11.2 writes (so the test above covers it)."""
    cases = _cases(INTERPRETERS["system-python3.11"])
    version = subprocess.run([INTERPRETERS["system-python3.11"], "-c", "import sys; print(sys.version_info[:3])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    import base64
    raw = base64.b64decode(next(c for c in cases if c["form"] == "Signature" and c["protocol"] == 4)["b64"])
    by_name = b"getattr" in raw and b"POSITIONAL_OR_KEYWORD" in raw
    if version == "(3, 11, 2)":
        assert by_name
