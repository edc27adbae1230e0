"""emu.dsl.header.parse: the launch signature read from export_to_c headers with a C parser, laid out as C compilers do.

Layouts are checked against the real compilers: for every committed export header (and a hand-written
one with every parameter kind the DSL's generator emits), each struct's size and each field's offset
as emu computes them are written as `_Static_assert`s next to the header and compiled with cc (x86-64)
and aarch64-linux-gnu-gcc (AArch64), against stand-in CUDA headers.  A wrong offset fails to compile.
"""
import shutil
import subprocess
from pathlib import Path

import pytest

from emu.dsl.header.c_source import strip_preprocessor
from emu.dsl.header.parse import HeaderError, parse_header
from emu.dsl.launch.signature import from_header
from tests import oracles

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parents[1] / "data" / "export"
HEADERS = sorted(ROOT.glob("tests/fixtures/cutlass-dsl-*/*/*.h")) + [DATA / "rich.h"]
COMPILERS = {"x86_64": "cc", "aarch64": "aarch64-linux-gnu-gcc"}


def _asserts(path: Path, arch: str) -> list[str]:
    signature = parse_header(path.read_text(), str(path), arch)
    lines = []
    for param in signature.params:
        if param.struct is None:
            continue
        name = param.ctype.rstrip(" *")
        lines.append(f"_Static_assert(sizeof({name}) == {param.struct.size}, \"{name} size\");")
        for field in param.struct.fields:
            lines.append(f"_Static_assert(offsetof({name}, {field.name}) == {field.offset}, \"{name}.{field.name}\");")
            lines.append(f"_Static_assert(sizeof((({name} *)0)->{field.name}) == {field.size}, \"{name}.{field.name} size\");")
    return lines


def _distinct(headers: list[Path]) -> list[Path]:
    """One header per distinct set of struct layouts (the committed fixtures repeat the seed's)."""
    seen, out = set(), []
    for header in headers:
        key = tuple(_asserts(header, "x86_64"))
        key = tuple(line.split("(", 1)[1].split("_", 1)[-1] for line in key)     # without the prefix
        if key not in seen:
            seen.add(key)
            out.append(header)
    return out


@pytest.mark.oracle(oracles.CC)
@pytest.mark.parametrize("arch", sorted(COMPILERS))
def test_layouts_equal_the_c_compilers(arch, tmp_path):
    compiler = COMPILERS[arch]
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} not installed")
    checked = 0
    for index, header in enumerate(_distinct(HEADERS)):      # one translation unit each: prefixes repeat
        asserts = _asserts(header, arch)
        checked += len(asserts)
        source = tmp_path / f"h{index}.c"
        source.write_text("\n".join(["#include <stddef.h>", f'#include "{header}"'] + asserts) + "\n")
        done = subprocess.run([compiler, "-fsyntax-only", "-I", str(DATA / "fake_cuda"), str(source)],
                              capture_output=True, text=True)
        assert done.returncode == 0, f"{header}: {done.stderr}"
    assert checked >= 40


def test_rich_header_every_parameter_kind():
    sig = parse_header((DATA / "rich.h").read_text(), "rich.h")
    kinds = {p.name: (p.kind, p.element) for p in sig.params}
    assert kinds == {"a": ("tensor", None), "b": ("tensor", None), "xs": ("tensor_list", None), "c": ("tensor", None),
                     "flag": ("scalar", "uint8_t"), "h": ("scalar", "__half_raw"), "bf": ("scalar", "__nv_bfloat16"),
                     "alpha": ("scalar", "double"), "n": ("scalar", "int64_t"), "shape": ("array", "int32_t"),
                     "ptr": ("pointer", None), "stream": ("stream", None)}
    assert sig.wrapper == "cute_dsl_rich_wrapper" and sig.launch_function == "_mlir_rich__mlir_ciface_cutlass_rich"
    assert [(s.param, s.how, s.index) for s in sig.slots][:6] == [
        ("a", "value", 0), ("b", "value", 0), ("xs", "list_element", 0), ("xs", "list_element", 1),
        ("xs", "list_element", 2), ("c", "value", 0)]
    assert sig.slots[-1].how == "ret"
    launch = from_header(sig, "rich.h")
    a = launch.param("a").tensor
    assert (a.shape_count, a.shape_width, a.stride_count, a.stride_width, a.size) == (3, 8, 2, 8, 48)
    xs = launch.param("xs")
    assert (xs.count, xs.tensor.size, xs.list_size) == (3, 32, 104)
    assert launch.param("shape").count == 2


def test_void_pointer_data_is_eight_bytes_and_later_fields_follow():
    """The regex reader took `void *data;` as a 4-byte `void` named `*data` and shifted every later field."""
    text = (ROOT / "tests/fixtures/cutlass-dsl-4.8.0/x86_64/carveout_25.h").read_text()
    text = text.replace("    void *data;\n", "    void *data;\n    int32_t dynamic_shapes[2];\n    int64_t dynamic_strides[1];\n")
    fields = parse_header(text, "h").params[0].struct.fields
    assert [(f.name, f.offset, f.size) for f in fields] == [("data", 0, 8), ("dynamic_shapes", 8, 8), ("dynamic_strides", 16, 8)]


def _wrap(body: str) -> str:
    return ("typedef struct {\n" + body + "\n} p_Tensor_x_t;\n"
            "void _mlir_p__mlir_ciface_f(void **args, int32_t n);\n"
            "static inline int32_t cute_dsl_p_wrapper(void *module, p_Tensor_x_t *x) {\n"
            "    int32_t ret = 0;\n    void *args[2] = {x, &ret};\n    _mlir_p__mlir_ciface_f(args, 2);\n    return ret;\n}\n")


@pytest.mark.parametrize("body, message", [
    ("    void data;", "a field or argument of type void"),
    ("    void *data;\n    int32_t dynamic_shapes[1099511627776];", "array length"),
    ("    void *data;\n    mystery_t dynamic_shapes[2];", "unknown type mystery_t"),
    ("    void *data;\n    int32_t dynamic_shapes[n];", "not an integer constant"),
    ("    void *data\n    int32_t x;", "line 3, column 5"),
])
def test_bad_headers_are_refused_with_the_line(body, message):
    with pytest.raises(HeaderError, match=message.replace("[", r"\[")):
        parse_header(_wrap(body), "bad.h")


def test_undeclared_type_names_in_header_code_are_opaque():
    """4.3 headers use driver types (CUdevice) in Kernel_Metadata_Load: they parse, and nothing is laid out from them."""
    text = "static void load(void) { CUdevice device; CUkernel *kernels = 0; }\n" + _wrap("    void *data;")
    assert parse_header(text, "h").params[0].struct.size == 8


def test_nothing_is_preprocessed_or_included():
    text = '#include "/etc/shadow"\n#define void int\n#if 0\nnot C at all {\n#endif\n' + _wrap("    void *data;")
    sig = parse_header(text, "h")
    assert sig.params[0].struct.fields[0].size == 8      # `#define void int` was not applied


def test_cplusplus_blocks_are_dropped_and_comments_and_strings_survive():
    text, _ = strip_preprocessor('#ifdef __cplusplus\nextern "C" {\n#else\nint c;\n#endif\nchar *s = "// not a comment"; /* a\ncomment */ int x;\n')
    assert 'extern "C"' not in text and "int c;" in text and '"// not a comment"' in text and "comment */" not in text
    assert text.count("\n") == 7


def test_packed_attribute_is_honoured():
    sig = parse_header(_wrap("    void *data;\n    int32_t dynamic_shapes[1];\n    int64_t dynamic_strides[1];").replace(
        "typedef struct {", "typedef struct __attribute__((packed)) {"), "h")
    fields = sig.params[0].struct.fields
    assert [f.offset for f in fields] == [0, 8, 12] and sig.params[0].struct.size == 20


def test_a_header_without_a_launch_wrapper_gives_none():
    assert parse_header("typedef struct { int x; } t;\n", "h") is None
