"""Untrusted C header text made parseable by pycparser, with nothing preprocessed or run.

Comments and preprocessor lines are removed (blocks under `#ifdef __cplusplus` or `#if 0`
dropped, every other conditional kept), `__attribute__((...))` is cut out (the lines of a
`packed` one are reported), and a prelude declares the CUDA and <stdint.h> types export_to_c
headers use.  Type names the header's code uses but nothing declares (4.3's `CUdevice`)
become incomplete structs, so they parse and nothing can be laid out from them.
"""
from __future__ import annotations

import re

from pycparser import c_ast
from pycparser.c_parser import CParser

try:
    from pycparser.c_parser import ParseError          # pycparser 3
except ImportError:                                      # pragma: no cover - pycparser 2
    from pycparser.plyparser import ParseError

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


class CSourceError(ValueError):
    """The text is not C pycparser can read; the message names the header's line and column."""


def parse_c(source: str, path: str) -> c_ast.FileAST:
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
                raise CSourceError(f"not C that emu can read: {_shift_line(str(error), path)}") from None
            opaque.append(name)
        except (AssertionError, RecursionError) as error:   # pycparser's own checks
            raise CSourceError(f"not C that emu can read ({type(error).__name__})") from None
    raise CSourceError(f"not C that emu can read: more than {MAX_OPAQUE_TYPES} undeclared type names")


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
