"""Describe the GPU binary a CuTe DSL export embeds as `kernels_binary`.

`P_cuda_init` hands this blob to `cudaLibraryLoadData`; without a driver the emulator can still
say what it holds (which SM architectures, cubin or PTX, compressed or not) and reject garbage.
Layout: NVIDIA's undocumented fatbin container, as reverse-engineered in public code
(n-eiling/cuda-fatbin-decompression, jiegec/fatbinary), checked field by field against
nvidia-cutlass-dsl 4.8.0 exports for sm_80/90/90a/100a/100f/120a:

    header (16 bytes): u32 magic 0xBA55ED50, u16 version 1, u16 header size 16,
                       u64 bytes of entries that follow
    entry (>= 64 bytes, then its payload): u16 kind (1 PTX, 2 ELF), u16 0x0101, u32 header size,
        u64 payload size, u32 compressed size, u32 options offset, u16 minor, u16 major, u32 arch,
        u32 name offset, u32 name length, u64 flags, u64 0, u64 decompressed size, then the
        object name ("kernels") and, from sm_100 on, an options block inside the header.
Flags seen: 0x1 64-bit, 0x10 Linux host, 0x100000 arch-specific ("sm_90a"), 0x200000
family-specific ("sm_100f"), 0x1000000 with the sm_100+ options block. 0x2000 (LZ4-style) and
0x8000 (ZSTD) mark compression according to those projects; the DSL's cubins are uncompressed.
"""
from __future__ import annotations

import struct

from pydantic import BaseModel, ConfigDict, Field

FATBIN_MAGIC = 0xBA55ED50
HEADER = struct.Struct("<IHHQ")
ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")  # 64 bytes

FLAG_64BIT = 0x1
FLAG_DEBUG = 0x2
FLAG_HOST_LINUX = 0x10
FLAG_HOST_MAC = 0x20
FLAG_HOST_WINDOWS = 0x40
FLAG_COMPRESSED_LZ4 = 0x2000
FLAG_COMPRESSED_ZSTD = 0x8000
FLAG_ARCH_SPECIFIC = 0x100000
FLAG_FAMILY_SPECIFIC = 0x200000
KINDS = {1: "ptx", 2: "elf"}
EM_CUDA = 190


class FatbinError(ValueError):
    """The bytes are not a well-formed fatbin container."""


class FatbinEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    offset: int = Field(description="Offset of this entry's header from the start of the fatbin.")
    kind: str = Field(description="'elf' (a cubin), 'ptx', or 'unknown_<code>'.")
    kind_code: int = Field(description="Raw kind field: 1 PTX, 2 ELF.")
    header_size: int = Field(description="Entry header size in bytes (72 for the DSL's pre-sm_100 cubins, "
                             "104 with the sm_100+ options block).")
    flags: int = Field(description="Raw 64-bit entry flags.")
    sm_arch: str | None = Field(description="Target like 'sm_90a' from the arch field and the "
                                "arch/family-specific flags; None when the arch field is 0.")
    code_version: str = Field(description="major.minor from the entry header: the PTX ISA version for PTX, "
                              "the cubin ABI version (1.7, 1.8) for ELF.")
    ptx_version: str | None = Field(description="PTX ISA version for PTX entries, else None.")
    object_name: str | None = Field(description="Object name stored in the header (the DSL writes 'kernels').")
    host: str | None = Field(description="'linux', 'mac' or 'windows' from the flags, or None.")
    address_bits: int = Field(description="64 when the 64-bit flag is set, else 32.")
    debug: bool = Field(description="Whether the debug-info flag is set.")
    options_hex: str | None = Field(description="Hex of the options block the header points to "
                                    "(sm_100+ cubins carry 16 opaque bytes), or None.")
    payload_offset: int = Field(description="Offset of the payload from the start of the fatbin.")
    payload_size: int = Field(description="Payload bytes stored in the container.")
    compressed: bool = Field(description="Whether a compression flag is set.")
    compressed_size: int = Field(description="Raw compressed-size field (0 when uncompressed).")
    decompressed_size: int = Field(description="Raw decompressed-size field (0 when uncompressed).")
    payload_format: str = Field(description="What the payload bytes start with: 'elf', 'zstd', 'text' or 'unknown'.")
    elf_sm_arch: str | None = Field(description="SM target read from an uncompressed CUDA ELF's e_flags "
                                    "(a cross-check of sm_arch; family 'f' is not recorded there), else None.")


class FatbinInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    size: int = Field(description="Total bytes the header declares: header plus entries.")
    version: int = Field(description="Container version (1).")
    header_size: int = Field(description="Container header size (16).")
    entries: list[FatbinEntry] = Field(description="Entries in container order.")
    trailing_bytes: int = Field(description="Bytes given beyond the declared size (ignored).")


def _fail(what: str, offset: int) -> FatbinError:
    return FatbinError(f"{what} at offset {offset} of the fatbin.")


def _sm_arch(arch: int, flags: int) -> str | None:
    if arch == 0:
        return None
    suffix = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY_SPECIFIC else ""
    return f"sm_{arch}{suffix}"


def _host(flags: int) -> str | None:
    for bit, name in ((FLAG_HOST_LINUX, "linux"), (FLAG_HOST_MAC, "mac"), (FLAG_HOST_WINDOWS, "windows")):
        if flags & bit:
            return name
    return None


def _payload_format(payload: bytes) -> str:
    if payload.startswith(b"\x7fELF"):
        return "elf"
    if payload.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    head = payload[:64].lstrip()
    if head[:2] == b"//" or head[:1] == b".":
        return "text"
    return "unknown"


def elf_sm_arch(image: bytes) -> str | None:
    """SM target from a CUDA ELF's e_flags: ABI 7 keeps it in bits 0-7 ('a' = 0x800), ABI 8 in 8-15 ('a' = 0x8)."""
    if len(image) < 52 or not image.startswith(b"\x7fELF") or image[5] != 1:
        return None
    (machine,) = struct.unpack_from("<H", image, 18)
    (flags,) = struct.unpack_from("<I", image, 48)
    if machine != EM_CUDA:
        return None
    if image[8] >= 8:
        sm, accel = (flags >> 8) & 0xFF, flags & 0x8
    else:
        sm, accel = flags & 0xFF, flags & 0x800
    return f"sm_{sm}{'a' if accel else ''}" if sm else None


def _name(data: bytes, entry: int, header_size: int, name_off: int, name_len: int) -> str | None:
    if name_off == 0:
        return None
    if name_off + name_len > header_size:
        raise _fail(f"object name ({name_len} bytes at +{name_off}) lies outside the {header_size}-byte "
                    "entry header", entry + 0x20)
    return data[entry + name_off:entry + name_off + name_len].rstrip(b"\0").decode("ascii", "replace")


def _options(data: bytes, entry: int, header_size: int, opt_off: int) -> str | None:
    if opt_off == 0:
        return None
    if opt_off + 8 > header_size:
        raise _fail(f"options pointer at +{opt_off} lies outside the {header_size}-byte entry header", entry + 0x14)
    block_off, block_len = struct.unpack_from("<II", data, entry + opt_off)
    if block_off == 0:
        return None
    if block_off + block_len > header_size:
        raise _fail(f"options block ({block_len} bytes at +{block_off}) lies outside the {header_size}-byte "
                    "entry header", entry + opt_off)
    return data[entry + block_off:entry + block_off + block_len].hex()


def _entry(data: bytes, off: int, end: int) -> FatbinEntry:
    if off + ENTRY.size > end:
        raise _fail(f"entry header needs {ENTRY.size} bytes but only {end - off} remain", off)
    (kind, _one, hsize, size, csize, opt_off, minor, major, arch, name_off, name_len, flags, _zero,
     dsize) = ENTRY.unpack_from(data, off)
    if not ENTRY.size <= hsize <= end - off:
        raise _fail(f"entry header size {hsize} is below {ENTRY.size} or runs past the end ({end})", off + 4)
    payload = off + hsize
    if size > end - payload:
        raise _fail(f"payload of {size} bytes starting at {payload} runs past the end ({end})", off + 8)
    head = bytes(data[payload:payload + min(size, 64)])     # all the format checks read (a cubin can be megabytes)
    fmt = _payload_format(head)
    version = f"{major}.{minor}"
    return FatbinEntry(
        offset=off, kind=KINDS.get(kind, f"unknown_{kind}"), kind_code=kind, header_size=hsize, flags=flags,
        sm_arch=_sm_arch(arch, flags), code_version=version, ptx_version=version if kind == 1 else None,
        object_name=_name(data, off, hsize, name_off, name_len), host=_host(flags),
        address_bits=64 if flags & FLAG_64BIT else 32, debug=bool(flags & FLAG_DEBUG),
        options_hex=_options(data, off, hsize, opt_off), payload_offset=payload, payload_size=size,
        compressed=bool(flags & (FLAG_COMPRESSED_LZ4 | FLAG_COMPRESSED_ZSTD)), compressed_size=csize,
        decompressed_size=dsize, payload_format=fmt, elf_sm_arch=elf_sm_arch(head) if fmt == "elf" else None)


def container_at(read, address: int) -> bytes:
    """The whole fatbin container laid out at `address`: its 16-byte header, then the size the header gives.
    `read(address, size)` reads the laid-out binary (emu.binary.image.LoadedBinary.read), which raises
    ValueError when the bytes are not inside one segment."""
    return read(address, HEADER.size + HEADER.unpack(read(address, HEADER.size))[3])


def parse_fatbin(data: bytes | bytearray | memoryview) -> FatbinInfo:
    """Validate the container header and walk every entry, reading only bytes in range.

    Raises FatbinError naming the offending offset. Bytes beyond the declared size are ignored.
    """
    data = bytes(data)
    if len(data) < HEADER.size:
        raise _fail(f"only {len(data)} bytes, shorter than the {HEADER.size}-byte header", 0)
    magic, version, header_size, body = HEADER.unpack_from(data, 0)
    if magic != FATBIN_MAGIC:
        raise _fail(f"magic 0x{magic:08X} is not 0x{FATBIN_MAGIC:08X}", 0)
    if version != 1:
        raise _fail(f"unsupported container version {version}", 4)
    if header_size != HEADER.size:
        raise _fail(f"header size {header_size} is not {HEADER.size}", 6)
    if body > len(data) - header_size:
        raise _fail(f"header declares {body} bytes of entries but only {len(data) - header_size} follow", 8)
    end = header_size + body
    entries, off = [], header_size
    while off < end:
        entry = _entry(data, off, end)
        entries.append(entry)
        off = entry.payload_offset + entry.payload_size
    return FatbinInfo(size=end, version=version, header_size=header_size, entries=entries,
                      trailing_bytes=len(data) - end)


def lz4_block_decompress(data: bytes, size: int) -> bytes:
    """An LZ4 block (the format fatbin's 0x2000 flag names) expanded to `size` bytes.

    Sequences of a token (literal length high nibble, match length low nibble), literals and
    a 16-bit match offset; a nibble of 15 continues in bytes of 255 (LZ4 block format spec).
    """
    out, i, n = bytearray(), 0, len(data)
    while i < n:
        token = data[i]
        i += 1
        literal = token >> 4
        if literal == 15:
            while i < n:
                literal += data[i]
                i += 1
                if data[i - 1] != 255:
                    break
        out += data[i:i + literal]
        i += literal
        if i >= n or len(out) >= size:
            break
        if i + 2 > n:
            raise FatbinError(f"LZ4 block ends inside a match offset at byte {i}")
        offset = data[i] | data[i + 1] << 8
        i += 2
        match = (token & 15) + 4
        if token & 15 == 15:
            while i < n:
                match += data[i]
                i += 1
                if data[i - 1] != 255:
                    break
        if offset == 0 or offset > len(out):
            raise FatbinError(f"LZ4 match offset {offset} reaches before the start of the output at byte {i}")
        for _ in range(match):
            out.append(out[-offset])
    if len(out) != size:
        raise FatbinError(f"LZ4 block expands to {len(out)} bytes, the entry says {size}")
    return bytes(out)


def entry_payload(data: bytes, entry: FatbinEntry) -> bytes | None:
    """The entry's code, decompressed where emu can (LZ4); None for ZSTD, which needs a library emu lacks."""
    body = bytes(data[entry.payload_offset:entry.payload_offset + entry.payload_size])
    if entry.flags & FLAG_COMPRESSED_LZ4:
        stored = body[:entry.compressed_size] if entry.compressed_size else body
        return lz4_block_decompress(stored, entry.decompressed_size)
    if entry.flags & FLAG_COMPRESSED_ZSTD:
        return None
    return body
