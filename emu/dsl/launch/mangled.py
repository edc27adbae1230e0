"""What the mangled launch-function name says about the arguments it was compiled for.

The DSL names the function `<fn>_<str(arg)>_<str(arg)>...` with `<>(),{}=?` and spaces
dropped, and keeps the first 180 characters (DSL.mangle_name).  A fake tensor is
`FakeTensor<Float16, (?{div=1}, ?{div=8}), (?{i64 div=8}, 1)>`, which becomes
`FakeTensorFloat16_div1_div8_i64_div8_1` or, from the constructors that print no spaces,
`FakeTensorFloat16div1div8i64div81`: the dtype, every shape mode, then every stride mode,
`div<N>` for a dynamic one (`i64` first when 64-bit) and the number for a static one.
Without separators the digits run together (`div81` is divisibility 8 then stride 1), so
a part is read every way it can be and only what all readings agree on is used.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

MANGLED_NAME_LIMIT = 180        # DSL.mangle_name keeps the first 180 characters
TENSOR_PREFIXES = ("FakeTensor", "Tensor", "tensorptr")
DTYPES = ("Boolean", "Int4", "Int8", "Int16", "Int32", "Int64", "Int128", "Uint8", "Uint16", "Uint32", "Uint64",
          "Uint128", "Float64", "Float32", "TFloat32", "Float16", "BFloat16", "Float8E5M2", "Float8E4M3FN",
          "Float8E4M3B11FNUZ", "FloatNV8E5M3FNU", "Float8E4M3", "Float8E8M0FNU", "Float4E2M1FN", "Float6E3M2FN",
          "Float6E2M3FN", "Float4E2M1FNx2", "Float6E3M2FNx4", "Float6E2M3FNx4")
_TENSOR_START = re.compile(r"(?<=_)(?:Fake)?Tensor(?=[A-Za-z_])")      # an argument starts after "_"; a class name
                                                                         # such as `gemmTensorOpGemm` does not
_LAYOUT_WORD = re.compile(r"(?:i64|div\d+|\d+)+")
MAX_READINGS = 4096


def mangled_arguments(launch_function: str | None) -> str:
    return (launch_function or "").partition("__mlir_ciface_")[2]


def is_truncated(launch_function: str | None) -> bool:
    return len(mangled_arguments(launch_function)) >= MANGLED_NAME_LIMIT


def name_kinds(launch_function: str | None) -> list[str]:
    """The name's tensors ("T") and Nones ("N"), in order; a cut name's last word counts only if it is a tensor's."""
    words = mangled_arguments(launch_function).split("_")
    if is_truncated(launch_function) and not words[-1].startswith(TENSOR_PREFIXES):
        words = words[:-1]                  # "Non" or a cut number says nothing; "FakeTensorBF" still says tensor
    return ["T" if word.startswith(TENSOR_PREFIXES) else "N" for word in words
            if word == "None" or word.startswith(TENSOR_PREFIXES)]


def tensor_tokens(launch_function: str | None, tensors: int) -> list[str] | None:
    """Each tensor argument's part of the mangled name, in order; None when they cannot be matched one
    to one (a class name holding "Tensor", or a name cut at 180 characters: its last part is dropped)."""
    mangled = mangled_arguments(launch_function)
    starts = [m.start() for m in _TENSOR_START.finditer(mangled)]
    tokens = [mangled[a:b] for a, b in zip(starts, starts[1:] + [len(mangled)])]
    truncated = is_truncated(launch_function)
    if len(tokens) > tensors or (not truncated and len(tokens) != tensors):
        return None
    return tokens[:-1] if truncated else tokens


def name_allows(token: str | None) -> Callable[[tuple[int, int, int, int]], bool] | None:
    """Which structs (as token_structs spells them) a tensor's part of the name allows; None: it says nothing.

    A fake tensor's part spells every dynamic mode (token_structs).  A tensor from `from_dlpack`
    prints as `Tensor<gmem, o, layout>` (`Tensorgmemodiv8i64div8i64div81`), where a dynamic extent
    with no divisibility leaves nothing but a dynamic stride always leaves `i64`: its `i64` words
    count its 64-bit strides, and its extents are 32-bit, of any number.
    """
    if not token:
        return None
    structs = token_structs(token)
    if structs is not None:
        return structs.__contains__
    if token.startswith("Tensor"):
        wide = token.split("_")[0].count("i64")          # the words after it are the next arguments
        if wide:
            return lambda key: key[2] == wide and key[3] == 8 and key[1] in (0, 4)
    return None


def token_structs(token: str) -> frozenset[tuple[int, int, int, int]] | None:
    """Every (dynamic extents, their width, dynamic strides, their width) a tensor's part of the name
    can be read as (a width is 0 when there are none); None when it is not a fake tensor's part."""
    found = layout_words(token)
    if found is None:
        return None
    words, layout = found
    # The words after a tensor may be the next argument's (a constexpr `_128`): the longest run of
    # layout words that reads as a shape and a stride of one rank is the tensor's.
    for end in range(layout, -1, -1):
        structs = _structs("_".join(words[:end]))
        if structs:
            return structs
    return None


def layout_words(token: str) -> tuple[list[str], int] | None:
    """A fake tensor's part of the name after its dtype, cut at "_", and how many leading words are layout words
    (`div<N>`, `i64`, numbers); None when it is not a fake tensor's part."""
    body = token.rstrip("_")
    if not body.startswith("FakeTensor"):
        return None
    body = body[len("FakeTensor"):]
    dtype = max((d for d in DTYPES if body.startswith(d)), key=len, default=None)
    if dtype is None:
        return None
    words = body[len(dtype):].lstrip("_").split("_")
    layout = 0
    while layout < len(words) and _LAYOUT_WORD.fullmatch(words[layout]):
        layout += 1
    return words, layout


def _structs(text: str) -> frozenset[tuple[int, int, int, int]]:
    structs = set()
    for elements in _readings(text):
        if len(elements) % 2:
            continue
        rank = len(elements) // 2
        halves = (elements[:rank], elements[rank:])
        widths = [{8 if e == "D" else 4 for e in half if e != "s"} for half in halves]
        if any(len(w) > 1 for w in widths):
            continue                         # one width per array: the header declares one type each
        counts = [sum(1 for e in half if e != "s") for half in halves]
        structs.add((counts[0], min(widths[0], default=0), counts[1], min(widths[1], default=0)))
    return frozenset(structs)


@lru_cache(maxsize=256)
def _readings(text: str) -> frozenset[str]:
    """Each way `text` splits into modes: "d" a 32-bit dynamic, "D" a 64-bit dynamic, "s" a static."""
    if not text:
        return frozenset({""})
    if text[0] == "_":
        return _readings(text[1:])
    out: set[str] = set()
    wide = text.startswith("i64")
    rest = text[3:].lstrip("_") if wide else text
    if rest.startswith("div"):
        digits = _digit_run(rest[3:])
        for end in range(1, len(digits) + 1):
            if digits[0] != "0":
                out.update(("D" if wide else "d") + tail for tail in _readings(rest[3 + end:]))
    elif not wide and text[0].isdigit():
        digits = _digit_run(text)
        for end in range(1, len(digits) + 1):
            if end == 1 or digits[0] != "0":
                out.update("s" + tail for tail in _readings(text[end:]))
    if len(out) > MAX_READINGS:
        return frozenset()
    return frozenset(out)


def _digit_run(text: str) -> str:
    end = 0
    while end < len(text) and text[end].isdigit():
        end += 1
    return text[:end]
