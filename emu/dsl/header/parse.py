"""Read the launch signature from the C header `export_to_c` writes, with a real C parser.

The header is untrusted text: it is never preprocessed or compiled (emu.dsl.header.c_source makes it
parseable: comments, preprocessor lines and attributes out, a prelude of the CUDA types in).
Struct layouts then follow the C rules of the object's data model (x86-64 and AArch64 are both LP64: the types a header can use have
the same sizes and alignments on both).

The wrapper is found by what it does, not by its name (4.3 calls it `<prefix>_wrapper`,
later releases `cute_dsl_<prefix>_wrapper`): the function that fills `void *args[N]` and
passes it to `_mlir_<prefix>__mlir_ciface_<fn>`.
"""
from __future__ import annotations

from functools import lru_cache

from pycparser import c_ast

from .c_source import PRELUDE_LINES, CSourceError, parse_c, strip_preprocessor
from .types import SCALAR_TYPES, CField, CStruct, HeaderError, HeaderParam, HeaderSignature, PackedSlot

MAX_HEADER_BYTES = 4 << 20

# (size, alignment) of C's base types in the LP64 data model of x86-64 SysV and AArch64 AAPCS64.
LP64 = {"char": (1, 1), "short": (2, 2), "int": (4, 4), "long": (8, 8), "long long": (8, 8),
        "float": (4, 4), "double": (8, 8), "long double": (16, 16), "_Bool": (1, 1), "pointer": (8, 8)}
DATA_MODELS = {"x86_64": LP64, "aarch64": LP64}


def parse_header(text: str, path: str, arch: str = "x86_64") -> HeaderSignature | None:
    """The launch signature of the header's wrapper; None when the header has no launch wrapper.

    Parsing costs about 20 ms for a real header, ten times a whole loader run: the answer (immutable)
    is kept per header text, path and architecture, for the processes that trace an object many times.
    """
    return _parse_header(text, path, arch)


@lru_cache(maxsize=64)
def _parse_header(text: str, path: str, arch: str) -> HeaderSignature | None:
    if len(text) > MAX_HEADER_BYTES:
        raise HeaderError(f"header of {len(text)} bytes is larger than {MAX_HEADER_BYTES}", path=path)
    source, packed = strip_preprocessor(text)
    try:
        unit = parse_c(source, path)
    except CSourceError as error:
        raise HeaderError(str(error), path=path) from None
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
