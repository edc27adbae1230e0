"""What each kernel of a CUDA cubin declares: registers, memory sizes, launch bounds, clusters.

The driver reads these facts from the cubin when it loads a library and answers
`cuKernelGetAttribute` from them (emu/cuda/kernel_attributes.py turns them into attribute
values for a device). Read here with LIEF, from:
- the ELF header: the SM target and, for ABI 7, the virtual architecture (e_flags);
- `.nv.info`: EIATTR_REGCOUNT, FRAME_SIZE, MIN_STACK_SIZE, MAX_STACK_SIZE keyed by the kernel's
  symbol index; `.nv.info.<kernel>`: launch bounds, cluster shape, parameter size and more
  (records walked by emu/gpu_binary/cubin_info.py);
- section sizes: `.nv.shared.<kernel>` (static shared memory; from sm_90 on it starts with the
  block's reserved window, marked by `.nv.reservedSmem.*` symbols), `.nv.constant0.<kernel>` (the
  parameters and driver values), `.nv.constant3` (the module's `__constant__` data, which a real
  H200 reports as every kernel's CONST_SIZE_BYTES; printf's `.nv.constant4` is not counted);
- the `.text.<kernel>` section's sh_info: its top byte is the register count on older ABIs.
A cubin is untrusted input: a malformed one raises CubinError naming the section.
"""
from __future__ import annotations

import struct
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from .cubin_info import EIATTR, NvInfoError, nv_info_records, u32s
from .fatbin import elf_sm_arch
from ..binary.elf.reader import lief_parse

USER_CONSTANT_BANK = ".nv.constant3"   # __constant__ data; bank 4 (printf's addresses) does not count on the H200
RESERVED_SMEM_PREFIX = ".nv.reservedSmem."     # symbols that mark the block's reserved window (sm_90 on)


class CubinError(ValueError):
    """The cubin cannot be read."""


# A kernel's named-barrier count: ABI 8 cubins (nvcc 13) write EIATTR_NUM_BARRIERS; the DSL's ABI 7
# sm_90a cubins write it into the .text section's sh_flags, bits 20-26 (hopper_fmha and fa4_forward_sm90
# hold 16 there, the GEMMs 2). tests/data/cubin/barriers/ has one of each kind.
TEXT_BARRIER_SHIFT, TEXT_BARRIER_MASK = 20, 0x7F


class CubinKernel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="the kernel's symbol name")
    registers: int = Field(description="registers per thread (EIATTR_REGCOUNT, else the .text section's sh_info top byte)")
    shared_section_bytes: int = Field(description="size of .nv.shared.<kernel> (0 when absent)")
    reserved_window: bool = Field(description="whether the cubin lays out the block's reserved shared memory at the "
                                  "start of the kernel's window (`.nv.reservedSmem.*` symbols, sm_90 on): "
                                  "then .nv.shared.<kernel> includes it")
    const_bytes: int = Field(description="bytes of the module's `.nv.constant3`: the user's __constant__ data, which "
                             "every kernel of the module reports (other module banks, e.g. printf's bank 4, do not count)")
    param_bytes: int | None = Field(description="parameter bytes (EIATTR_CBANK_PARAM_SIZE)")
    frame_bytes: int = Field(description="per-thread frame (EIATTR_FRAME_SIZE)")
    min_stack_bytes: int = Field(description="per-thread stack without recursion (EIATTR_MIN_STACK_SIZE)")
    max_stack_bytes: int | None = Field(description="per-thread stack with recursion (EIATTR_MAX_STACK_SIZE), if given")
    max_threads: tuple[int, int, int] | None = Field(description=".maxntid (EIATTR_MAX_THREADS)")
    required_threads: tuple[int, int, int] | None = Field(description=".reqntid (EIATTR_REQNTID)")
    max_registers: int | None = Field(description="register cap from launch bounds or .maxnreg (EIATTR_MAXREG_COUNT)")
    cluster_dims: tuple[int, int, int] | None = Field(description=".reqnctapercluster (EIATTR_CTA_PER_CLUSTER)")
    explicit_cluster: bool = Field(description=".explicitcluster (EIATTR_EXPLICIT_CLUSTER)")
    max_cluster_rank: int | None = Field(description=".maxclusterrank (EIATTR_MAX_CLUSTER_RANK)")
    explicit_caching: bool = Field(description="EIATTR_EXPLICIT_CACHING present (compiled with an explicit cache mode)")
    cuda_api_version: int | None = Field(description="EIATTR_CUDA_API_VERSION as stored")
    attributes: list[str] = Field(description="every EIATTR number in .nv.info.<kernel>, as hex, in order")
    barriers: int = Field(default=0, description="named barriers the kernel uses (EIATTR_NUM_BARRIERS, else bits "
                          "20-26 of its .text section's sh_flags)")


class CubinInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    sm_arch: str | None = Field(description="the SM target from e_flags, e.g. sm_90a")
    binary_version: int | None = Field(description="the SM number the code is for (90 for sm_90a)")
    virtual_version: int | None = Field(description="the virtual architecture it was compiled from (ABI 7 e_flags), "
                                        "null where the ABI does not record it")
    abi_version: int = Field(description="e_ident[EI_ABIVERSION]: 7 before sm_100, 8 from sm_100")
    kernels: list[CubinKernel] = Field(description="every kernel (.text.<name> with a global FUNC symbol)")


def _virtual_version(image: bytes) -> int | None:
    if image[8] >= 8:
        return None
    (flags,) = struct.unpack_from("<I", image, 48)
    return (flags >> 16) & 0xFF or None


_SYMBOL = struct.Struct("<IBBHQQ")     # Elf64_Sym: name, info, other, shndx, value, size
class _Section:
    __slots__ = ("name", "size", "information", "flags", "content")

    def __init__(self, name: str, size: int, information: int, flags: int, content: bytes):
        self.name, self.size, self.information, self.flags, self.content = name, size, information, flags, content


def _symbol_names(symtab: _Section | None, strtab: _Section | None) -> list[tuple[str, int]]:
    """(name, section index) of every symbol, from the raw .symtab and its string table."""
    if symtab is None or strtab is None:
        return []
    strings, names = strtab.content, []
    for offset in range(0, len(symtab.content) - _SYMBOL.size + 1, _SYMBOL.size):
        name, _info, _other, shndx, _value, _size = _SYMBOL.unpack_from(symtab.content, offset)
        end = strings.find(b"\0", name)
        names.append((strings[name:end if end >= 0 else len(strings)].decode("utf-8", "replace"), shndx))
    return names


@lru_cache(maxsize=256)
def parse_cubin(image: bytes) -> CubinInfo:
    """The kernels of one ELF cubin (cached by content: a process sees the same cubins again)."""
    if not image.startswith(b"\x7fELF") or len(image) < 64 or image[4] != 2:
        raise CubinError("the cubin is not a 64-bit ELF image")
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
    if shoff + shentsize * shnum > len(image):
        raise CubinError(f"the section header table ({shnum} entries at {shoff}) runs past the {len(image)}-byte cubin")
    elf = lief_parse(image)   # the object parser's LIEF setup: headers and sections only
    if elf is None:
        raise CubinError("LIEF cannot parse the cubin's ELF headers")
    sections: dict[str, _Section] = {}
    for index, section in enumerate(elf.sections):
        # sh_type from the header itself: LIEF's enum warns on stderr about a type it does not name
        nobits = index < shnum and shentsize >= 8 and struct.unpack_from("<I", image, shoff + index * shentsize + 4)[0] == 8
        start, size = section.file_offset, section.size
        if not nobits and start + size > len(image):
            raise CubinError(f"section {section.name!r} ({size} bytes at {start}) runs past the {len(image)}-byte cubin")
        name = section.name if isinstance(section.name, str) else bytes(section.name).decode("utf-8", "replace")
        sections[name] = _Section(name, size, section.information, int(section.flags),
                                  b"" if nobits else image[start:start + size])
    symbols = _symbol_names(sections.get(".symtab"), sections.get(".strtab"))
    index_by_name = {name: i for i, (name, _shndx) in enumerate(symbols)}
    reserved = any(name.startswith(RESERVED_SMEM_PREFIX) for name, _shndx in symbols)
    per_symbol: dict[int, dict[int, int]] = {}
    if ".nv.info" in sections:
        for _fmt, attribute, value in _records(sections[".nv.info"]):
            if isinstance(value, bytes) and len(value) >= 8:
                symbol, number = u32s(value[:8])
                per_symbol.setdefault(symbol, {})[attribute] = number
    kernels = []
    for name, section in sections.items():
        if not name.startswith(".text."):
            continue
        kernel = name[len(".text."):]
        symbol = index_by_name.get(kernel)
        if symbol is None:
            continue
        kernels.append(_kernel(kernel, section, sections, per_symbol.get(symbol, {}), reserved))
    arch = elf_sm_arch(image)
    return CubinInfo(sm_arch=arch, binary_version=_sm_number(arch), virtual_version=_virtual_version(image),
                     abi_version=image[8], kernels=kernels)


def _sm_number(arch: str | None) -> int | None:
    return int(arch[3:].rstrip("af")) if arch else None


def _records(section) -> list:
    try:
        return nv_info_records(section.content)
    except NvInfoError as error:
        raise CubinError(f"section {section.name}: {error}") from None


def _dims(value) -> tuple[int, int, int] | None:
    if not isinstance(value, bytes) or len(value) < 12:
        return None
    x, y, z = u32s(value[-12:])
    return (x, y, z)


def _kernel(name: str, text, sections: dict, global_attrs: dict[int, int], reserved: bool) -> CubinKernel:
    info = sections.get(f".nv.info.{name}")
    records = _records(info) if info is not None else []
    local = {attribute: value for _fmt, attribute, value in records}
    shared = sections.get(f".nv.shared.{name}")
    const = sections[USER_CONSTANT_BANK].size if USER_CONSTANT_BANK in sections else 0
    registers = global_attrs.get(EIATTR.REGCOUNT, (text.information >> 24) & 0xFF)
    rank = local.get(EIATTR.MAX_CLUSTER_RANK)
    return CubinKernel(
        name=name, registers=registers, shared_section_bytes=shared.size if shared is not None else 0,
        reserved_window=reserved, const_bytes=const,
        param_bytes=local.get(EIATTR.CBANK_PARAM_SIZE) if isinstance(local.get(EIATTR.CBANK_PARAM_SIZE), int) else None,
        frame_bytes=global_attrs.get(EIATTR.FRAME_SIZE, 0), min_stack_bytes=global_attrs.get(EIATTR.MIN_STACK_SIZE, 0),
        max_stack_bytes=global_attrs.get(EIATTR.MAX_STACK_SIZE),
        max_threads=_dims(local.get(EIATTR.MAX_THREADS)), required_threads=_dims(local.get(EIATTR.REQNTID)),
        max_registers=local.get(EIATTR.MAXREG_COUNT) if isinstance(local.get(EIATTR.MAXREG_COUNT), int) else None,
        cluster_dims=_dims(local.get(EIATTR.CTA_PER_CLUSTER)), explicit_cluster=EIATTR.EXPLICIT_CLUSTER in local,
        max_cluster_rank=u32s(rank)[-1] if isinstance(rank, bytes) and len(rank) >= 4 else rank,
        explicit_caching=EIATTR.EXPLICIT_CACHING in local,
        cuda_api_version=u32s(local[EIATTR.CUDA_API_VERSION])[0] if isinstance(local.get(EIATTR.CUDA_API_VERSION), bytes) else None,
        attributes=[f"{attribute:#04x}" for _fmt, attribute, _value in records],
        barriers=_barriers(local, text))


def _barriers(local: dict, text) -> int:
    count = local.get(EIATTR.NUM_BARRIERS)
    if isinstance(count, int):
        return count
    return (text.flags >> TEXT_BARRIER_SHIFT) & TEXT_BARRIER_MASK
