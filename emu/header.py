"""Read the launch signature from the C header `export_to_c` writes, with a real C parser.

The header is untrusted text: it is never preprocessed or compiled.  Comments and
preprocessor lines are removed here (blocks under `#ifdef __cplusplus` dropped, every
other conditional kept), blocks under `#if 0` too, `__attribute__((...))` is cut out (a `packed` one is honoured),
and the rest is parsed by pycparser after a prelude that declares the CUDA and
<stdint.h> types the DSL's headers use.  Struct layouts then follow the C rules of the
object's data model (x86-64 and AArch64 are both LP64: the types a header can use have
the same sizes and alignments on both).

The wrapper is found by what it does, not by its name (4.3 calls it `<prefix>_wrapper`,
later releases `cute_dsl_<prefix>_wrapper`): the function that fills `void *args[N]` and
passes it to `_mlir_<prefix>__mlir_ciface_<fn>`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pycparser import c_ast
from pycparser.c_parser import CParser

try:
    from pycparser.c_parser import ParseError          # pycparser 3
except ImportError:                                      # pragma: no cover - pycparser 2
    from pycparser.plyparser import ParseError

from .errors import ObjectFormatError

MAX_HEADER_BYTES = 4 << 20
MAX_OPAQUE_TYPES = 32

PRELUDE = """
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;
typedef unsigned long uint64_t; typedef unsigned long size_t; typedef long intptr_t; typedef unsigned long uintptr_t;
typedef struct CUstream_st *cudaStream_t; typedef struct CUstream_st *CUstream;
typedef struct CUlib_st *cudaLibrary_t; typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *cudaKernel_t; typedef struct CUkern_st *CUkernel;
typedef struct CUmod_st *CUmodule; typedef struct CUfunc_st *CUfunction;
typedef int cudaError_t; typedef int CUresult;
typedef struct { unsigned short x; } __half_raw;
typedef struct { unsigned short __x; } __half;
typedef struct { unsigned short x; } __nv_bfloat16_raw;
typedef struct { unsigned short __x; } __nv_bfloat16;
"""
PRELUDE_LINES = PRELUDE.count("\n")

# (size, alignment) of C's base types in the LP64 data model of x86-64 SysV and AArch64 AAPCS64.
LP64 = {"char": (1, 1), "short": (2, 2), "int": (4, 4), "long": (8, 8), "long long": (8, 8),
        "float": (4, 4), "double": (8, 8), "long double": (16, 16), "_Bool": (1, 1), "pointer": (8, 8)}
DATA_MODELS = {"x86_64": LP64, "aarch64": LP64}

# Scalar C types a launch argument can have, by the name the header uses: (struct format, kind).
SCALAR_TYPES = {"int8_t": ("b", "int"), "int16_t": ("h", "int"), "int32_t": ("i", "int"), "int64_t": ("q", "int"),
                "uint8_t": ("B", "int"), "uint16_t": ("H", "int"), "uint32_t": ("I", "int"), "uint64_t": ("Q", "int"),
                "float": ("f", "float"), "double": ("d", "float"), "__half_raw": ("e", "float"),
                "__half": ("e", "float"), "__nv_bfloat16": ("bf16", "float"), "__nv_bfloat16_raw": ("bf16", "float")}


class HeaderError(ObjectFormatError):
    """The header beside the object cannot be read as the launch signature export_to_c writes."""


@dataclass(frozen=True)
class CField:
    name: str
    ctype: str               # the element type as the header spells it (int32_t, void *, a struct name)
    offset: int
    size: int                # of the whole field (all elements of an array)
    count: int | None        # array length, None for a plain field
    struct: "CStruct | None" = None

    @property
    def element_size(self) -> int:
        return self.size // (self.count or 1)


@dataclass(frozen=True)
class CStruct:
    name: str
    size: int
    align: int
    fields: tuple[CField, ...]

    def field(self, name: str) -> CField | None:
        return next((f for f in self.fields if f.name == name), None)


@dataclass(frozen=True)
class HeaderParam:
    """One parameter of the wrapper, after the module: `<prefix>_Tensor_a_t *a`, `int32_t n`, `cudaStream_t s`."""
    name: str
    ctype: str               # as spelled, without the name: "add_Tensor_a_t *", "int32_t", "cudaStream_t"
    kind: str                # "tensor", "tensor_list", "scalar", "stream", "pointer", "array"
    struct: CStruct | None = None      # the pointee struct of a tensor or tensor list
    element: str | None = None         # the scalar type of a scalar, or of an array's elements


@dataclass(frozen=True)
class PackedSlot:
    """One entry of `void *args[]`: which parameter, and how the header takes its address."""
    param: str
    how: str                 # "value" (a), "address" (&a), "element" (&a[i]), "list_element" (&a->elements[i]), "ret"
    index: int = 0


@dataclass(frozen=True)
class HeaderSignature:
    wrapper: str
    launch_function: str
    params: tuple[HeaderParam, ...]
    slots: tuple[PackedSlot, ...]
    return_type: str


def parse_header(text: str, path: str, arch: str = "x86_64") -> HeaderSignature | None:
    """The launch signature of the header's wrapper; None when the header has no launch wrapper."""
    if len(text) > MAX_HEADER_BYTES:
        raise HeaderError(f"header of {len(text)} bytes is larger than {MAX_HEADER_BYTES}", path=path)
    source, packed = strip_preprocessor(text)
    unit = _parse(source, path)
    layout = _Layout(DATA_MODELS[arch], path, packed)
    wrapper = None
    for node in unit.ext:
        if isinstance(node, c_ast.Typedef):
            layout.typedefs[node.name] = node.type
        elif isinstance(node, c_ast.FuncDef) and _packed_args(node) is not None:
            if wrapper is not None:
                raise HeaderError(f"two launch wrappers ({wrapper.decl.name}, {node.decl.name})", path=path)
            wrapper = node
    if wrapper is None:
        return None
    return _signature(wrapper, layout, path)


def _parse(source: str, path: str) -> c_ast.FileAST:
    """Parse, declaring as opaque any type name the header's code uses but the prelude lacks.

    Header code beyond the wrapper (4.3's Kernel_Metadata_Load uses `CUdevice`, driver enums)
    may name CUDA types the prelude does not declare; C cannot be parsed without knowing a
    name is a type.  Each such name becomes an incomplete struct: code may declare one, but
    a struct that holds one has no size, so a launch argument's layout never rests on a guess.
    """
    opaque: list[str] = _undeclared_type_names(source)
    for _ in range(MAX_OPAQUE_TYPES + 1):
        prelude = PRELUDE[:-1] + "".join(f" typedef struct __emu_opaque_{n} {n};" for n in opaque) + "\n"   # same lines
        try:
            return CParser().parse(prelude + source, filename=path)
        except ParseError as error:
            name = _unknown_type_name(prelude + source, str(error), path)
            if name is None or name in opaque:
                raise HeaderError(f"not C that emu can read: {_shift_line(str(error), path)}", path=path) from None
            opaque.append(name)
        except (AssertionError, RecursionError) as error:   # pycparser's own checks
            raise HeaderError(f"not C that emu can read ({type(error).__name__})", path=path) from None
    raise HeaderError(f"not C that emu can read: more than {MAX_OPAQUE_TYPES} undeclared type names", path=path)


_C_WORDS = frozenset("auto break case char const continue default do double else enum extern float for goto if inline int "
                     "long register restrict return short signed sizeof static struct switch typedef union unsigned void "
                     "volatile while _Bool".split())


_DECLARATION = re.compile(r"^\s*(?:const\s+)?([A-Za-z_]\w*)(?:\s+|\s*\*+\s*)[A-Za-z_]\w*\s*(?:\[[^\]]*\])?\s*[;=,)]", re.M)
_TYPEDEF_NAME = re.compile(r"\btypedef\b[^;{]*?\b([A-Za-z_]\w*)\s*;")
_STRUCT_TYPEDEF_NAME = re.compile(r"}\s*([A-Za-z_]\w*)\s*;")


def _undeclared_type_names(source: str) -> list[str]:
    """Names that start a declaration (`CUdevice device;`) but no typedef declares (pycparser's errors
    do not always say where)."""
    known = (_C_WORDS | set(_TYPEDEF_NAME.findall(PRELUDE)) | set(_TYPEDEF_NAME.findall(source))
             | set(_STRUCT_TYPEDEF_NAME.findall(PRELUDE + source)) | {"return"})
    names = [n for n in dict.fromkeys(_DECLARATION.findall(source)) if n not in known]
    return names[:MAX_OPAQUE_TYPES]


def _unknown_type_name(text: str, message: str, path: str) -> str | None:
    """The identifier just before where pycparser stopped, when it stands where a type name would."""
    match = re.search(r":(\d+):(\d+)", message[len(path):] if message.startswith(path) else message)
    if match is None:
        return None
    lines = text.split("\n")
    line, column = int(match.group(1)), int(match.group(2))
    if not 0 < line <= len(lines):
        return None
    before = re.search(r"(?:^\s*|[;{}(,]\s*|\b(?:const|static)\s+)([A-Za-z_]\w*)\s*\**\s*$", lines[line - 1][:column - 1])
    name = before.group(1) if before else None
    return name if name and name not in _C_WORDS and not name.startswith("__emu_") else None


# -- text clean-up ---------------------------------------------------------------------------------
_LITERAL_OR_COMMENT = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S)
_ATTRIBUTE = re.compile(r"__attribute__\s*\(\(")


def strip_preprocessor(text: str) -> tuple[str, set[int]]:
    """The header without comments, preprocessor lines and attributes (lines kept, so errors name the right one).

    Returns the text and the lines that carried `__attribute__((packed))`.
    """
    text = _LITERAL_OR_COMMENT.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else
                                   "\n" * m.group(0).count("\n") or " ", text.replace("\r\n", "\n"))
    out, skipping, stack, continued = [], 0, [], False
    for line in text.split("\n"):
        stripped = line.strip()
        directive = continued or stripped.startswith("#")
        continued = directive and stripped.endswith("\\")
        if directive:
            words = stripped.lstrip("#").split()
            word = words[0] if words else ""
            if word in ("if", "ifdef", "ifndef"):
                cplusplus = (word == "ifdef" and words[1:2] == ["__cplusplus"]) or (word == "if" and words[1:] == ["0"])
                stack.append(cplusplus)
                skipping += cplusplus
            elif word in ("else", "elif") and stack and stack[-1]:
                skipping -= 1
                stack[-1] = False
            elif word == "endif" and stack:
                skipping -= stack.pop()
            out.append("")
        else:
            out.append("" if skipping else line)
    text = "\n".join(out)
    return _strip_attributes(text)


def _strip_attributes(text: str) -> tuple[str, set[int]]:
    packed: set[int] = set()
    while (match := _ATTRIBUTE.search(text)) is not None:
        depth, end = 2, match.end()
        while depth and end < len(text):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        if "packed" in text[match.end():end]:
            packed.add(text.count("\n", 0, match.start()) + 1 + PRELUDE_LINES)
        text = text[:match.start()] + " " * (end - match.start()) + text[end:]
    return text, packed


def _shift_line(message: str, path: str) -> str:
    """pycparser counts lines from the prelude's start; name the header's own line and column."""
    message = message[len(path):].lstrip(":") if message.startswith(path) else message
    match = re.match(r"(\d+):(\d+):?\s*(.*)", message, re.S)
    if match is None:
        return message.strip()
    line = int(match.group(1)) - PRELUDE_LINES
    return f"line {line}, column {match.group(2)}: {match.group(3).strip()}" if line > 0 else match.group(3).strip()


# -- layout -----------------------------------------------------------------------------------------
class _Layout:
    """Sizes, alignments and spellings of the types the header declares."""

    def __init__(self, model: dict[str, tuple[int, int]], path: str, packed_lines: set[int]):
        self.model = model
        self.path = path
        self.packed_lines = packed_lines
        self.typedefs: dict[str, c_ast.Node] = {}
        self.structs: dict[str, CStruct] = {}

    def fail(self, what: str, node: c_ast.Node | None = None) -> HeaderError:
        line = getattr(getattr(node, "coord", None), "line", None)
        where = f" (line {line - PRELUDE_LINES})" if line and line > PRELUDE_LINES else ""
        return HeaderError(f"{what}{where}", path=self.path)

    def size_align(self, node: c_ast.Node, depth: int = 0) -> tuple[int, int]:
        if depth > 64:
            raise self.fail("types nest more than 64 deep", node)
        if isinstance(node, c_ast.PtrDecl):
            return self.model["pointer"]
        if isinstance(node, c_ast.ArrayDecl):
            size, align = self.size_align(node.type, depth + 1)
            return size * self.array_length(node), align
        if isinstance(node, c_ast.TypeDecl):
            return self.size_align(node.type, depth + 1)
        if isinstance(node, c_ast.Struct):
            struct = self.struct(node, depth + 1)
            return struct.size, struct.align
        if isinstance(node, c_ast.Enum):
            return self.model["int"]
        if isinstance(node, c_ast.IdentifierType):
            return self.base(node, depth)
        raise self.fail(f"unsupported type {type(node).__name__}", node)

    def base(self, node: c_ast.IdentifierType, depth: int) -> tuple[int, int]:
        names = [n for n in node.names if n not in ("signed", "unsigned", "const", "volatile")]
        if len(names) == 1 and names[0] in self.typedefs:
            return self.size_align(self.typedefs[names[0]], depth + 1)
        key = " ".join(n for n in names if n != "int") if len(names) > 1 else (names[0] if names else "int")
        if key == "void":
            raise self.fail("a field or argument of type void", node)
        if key not in self.model:
            raise self.fail(f"unknown type {' '.join(node.names)}", node)
        return self.model[key]

    def array_length(self, node: c_ast.ArrayDecl) -> int:
        dim = node.dim
        if not isinstance(dim, c_ast.Constant) or dim.type != "int":
            raise self.fail("an array whose length is not an integer constant", node)
        value = int(dim.value.rstrip("uUlL"), 0)
        if not 0 < value <= 1 << 20:
            raise self.fail(f"array length {value} is out of range", node)
        return value

    def struct(self, node: c_ast.Struct, depth: int = 0) -> CStruct:
        if node.decls is None:                       # a reference to a named struct
            known = self.structs.get(node.name or "")
            if known is None and (node.name or "").startswith("__emu_opaque_"):
                raise self.fail(f"unknown type {node.name[len('__emu_opaque_'):]} (not a type export_to_c writes)", node)
            if known is None:
                raise self.fail(f"struct {node.name} is used but not defined", node)
            return known
        packed = getattr(node.coord, "line", -1) in self.packed_lines
        offset, align, fields = 0, 1, []
        for decl in node.decls:
            size, field_align = self.size_align(decl.type, depth + 1)
            field_align = 1 if packed else field_align
            offset = (offset + field_align - 1) // field_align * field_align
            count = self.array_length(decl.type) if isinstance(decl.type, c_ast.ArrayDecl) else None
            element = decl.type.type if count is not None else decl.type
            inner = self.struct_of(element)
            fields.append(CField(decl.name, spell(element), offset, size, count, inner))
            offset += size
            align = max(align, field_align)
        result = CStruct(node.name or "", (offset + align - 1) // align * align, align, tuple(fields))
        if node.name:
            self.structs[node.name] = result
        return result

    def struct_of(self, node: c_ast.Node) -> CStruct | None:
        """The struct a (typedef'd) type names, or None."""
        for _ in range(64):
            if isinstance(node, c_ast.TypeDecl):
                node = node.type
            elif isinstance(node, c_ast.IdentifierType) and len(node.names) == 1 and node.names[0] in self.typedefs:
                node = self.typedefs[node.names[0]]
            elif isinstance(node, c_ast.Struct):
                return self.struct(node)
            else:
                return None
        raise self.fail("typedefs nest more than 64 deep", node)


def spell(node: c_ast.Node) -> str:
    """A type as C spells it: `int32_t`, `void *`, `add_Tensor_a_t *`."""
    if isinstance(node, c_ast.PtrDecl):
        return spell(node.type) + " *"
    if isinstance(node, c_ast.ArrayDecl):
        return spell(node.type) + "[]"
    if isinstance(node, c_ast.TypeDecl):
        return spell(node.type)
    if isinstance(node, c_ast.IdentifierType):
        return " ".join(node.names)
    if isinstance(node, c_ast.Struct):
        return f"struct {node.name or '{...}'}"
    if isinstance(node, c_ast.Enum):
        return f"enum {node.name or '{...}'}"
    return type(node).__name__


# -- the wrapper ------------------------------------------------------------------------------------
def _packed_args(func: c_ast.FuncDef) -> c_ast.InitList | None:
    """The initializer of `void *args[N] = {...}` in a function that passes it to an `_mlir_..._ciface_` function."""
    init = None
    calls_launch = False
    for item in func.body.block_items or ():
        if (isinstance(item, c_ast.Decl) and item.name == "args" and isinstance(item.type, c_ast.ArrayDecl)
                and isinstance(item.init, c_ast.InitList)):
            init = item.init
        if isinstance(item, c_ast.FuncCall) and _launch_name(item) is not None:
            calls_launch = True
    return init if calls_launch else None


def _launch_name(call: c_ast.FuncCall) -> str | None:
    name = call.name.name if isinstance(call.name, c_ast.ID) else ""
    return name if name.startswith("_mlir_") and "__mlir_ciface_" in name else None


def _signature(func: c_ast.FuncDef, layout: _Layout, path: str) -> HeaderSignature:
    decl_params = func.decl.type.args.params if func.decl.type.args else []
    if not decl_params:
        raise layout.fail(f"the wrapper {func.decl.name} has no parameters", func)
    params = [_param(p, layout) for p in decl_params[1:]]                 # the first is the kernel module
    by_name = {p.name: p for p in params}
    locals_ = {item.name for item in func.body.block_items or () if isinstance(item, c_ast.Decl)}
    slots = [_slot(expr, by_name, locals_, layout) for expr in _packed_args(func).exprs]
    launch = next(_launch_name(i) for i in func.body.block_items if isinstance(i, c_ast.FuncCall) and _launch_name(i))
    used = {s.param for s in slots}
    unused = [p.name for p in params if p.name not in used]
    if unused:
        raise layout.fail(f"the wrapper never passes its parameter(s) {', '.join(unused)} to {launch}", func)
    return HeaderSignature(func.decl.name, launch, tuple(params), tuple(slots), spell(func.decl.type.type))


def _param(node: c_ast.Node, layout: _Layout) -> HeaderParam:
    if not isinstance(node, c_ast.Decl) or not node.name:
        raise layout.fail("a wrapper parameter without a name", node)
    ctype = spell(node.type)
    if isinstance(node.type, c_ast.PtrDecl):
        pointee = node.type.type
        struct = layout.struct_of(pointee)
        if struct is not None:
            elements = struct.field("elements")
            if elements is not None and elements.struct is not None:
                return HeaderParam(node.name, ctype, "tensor_list", struct)
            if struct.fields and struct.fields[0].name == "data":
                return HeaderParam(node.name, ctype, "tensor", struct)
            raise layout.fail(f"parameter {node.name} points to a struct that is neither a tensor nor a tensor list", node)
        base = spell(pointee)
        if base == "void":
            return HeaderParam(node.name, ctype, "pointer")
        if base in SCALAR_TYPES:
            return HeaderParam(node.name, ctype, "array", element=base)
        raise layout.fail(f"parameter {node.name} has unsupported type {ctype}", node)
    if ctype in ("cudaStream_t", "CUstream"):
        return HeaderParam(node.name, ctype, "stream")
    if ctype in SCALAR_TYPES:
        return HeaderParam(node.name, ctype, "scalar", element=ctype)
    raise layout.fail(f"parameter {node.name} has unsupported type {ctype}", node)


def _slot(expr: c_ast.Node, params: dict[str, HeaderParam], locals_: set[str], layout: _Layout) -> PackedSlot:
    """One `args[]` entry: `a`, `&a`, `&a[i]`, `&a->elements[i]`, or `&ret`."""
    if isinstance(expr, c_ast.ID) and expr.name in params:
        return PackedSlot(expr.name, "value")
    if isinstance(expr, c_ast.UnaryOp) and expr.op == "&":
        inner = expr.expr
        if isinstance(inner, c_ast.ID):
            if inner.name in params:
                return PackedSlot(inner.name, "address")
            if inner.name in locals_:
                return PackedSlot(inner.name, "ret")
        if isinstance(inner, c_ast.ArrayRef) and isinstance(inner.subscript, c_ast.Constant):
            index = int(inner.subscript.value, 0)
            if isinstance(inner.name, c_ast.ID) and inner.name.name in params:
                return PackedSlot(inner.name.name, "element", index)
            base = inner.name
            if (isinstance(base, c_ast.StructRef) and base.type == "->" and base.field.name == "elements"
                    and isinstance(base.name, c_ast.ID) and base.name.name in params):
                return PackedSlot(base.name.name, "list_element", index)
    raise layout.fail("an args[] entry emu does not understand", expr)
