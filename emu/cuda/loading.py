"""Which image of the export's fatbin a device runs, as the driver picks it.

CUDA C++ Programming Guide, "Binary Compatibility" and "PTX Compatibility" (and, for the `a` and
`f` targets, "Feature Availability"): a cubin for sm_XY runs on devices of compute capability
X.Z with Z >= Y; an architecture-specific cubin (sm_90a) only on exactly X.Y; a family-specific
one (sm_100f) on the devices of its family with a minor version >= Y. PTX for compute_XY is
JIT-compiled for any device of compute capability >= X.Y (`a` PTX only for X.Y). The driver
prefers a cubin it can run over PTX. Measured on the H200 (FIELD_NOTES section 7): an export
whose only cubin is sm_80 or sm_100a does not load there (cudaErrorNoKernelImageForDevice).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..gpu_binary.cubin import CubinInfo, CubinKernel, parse_cubin
from ..gpu_binary.fatbin import FatbinEntry, FatbinError, entry_payload, parse_fatbin
from .profile import PROFILES, DeviceProfile, load_profile

BINARY_SYMBOL = "kernels_binary"


@dataclass(frozen=True)
class LibraryImage:
    """The fatbin an export hands to cudaLibraryLoadData, decoded once per object."""

    entries: tuple[FatbinEntry, ...] = ()
    payloads: tuple[bytes | None, ...] = ()      # None: compressed in a form emu cannot decompress
    error: str | None = None                     # why the container could not be decoded
    verdicts: dict = field(default_factory=dict, compare=False, repr=False)   # profile name -> load_verdict
    cubins: dict = field(default_factory=dict, compare=False, repr=False)     # entry offset -> CubinInfo or why unreadable
    running: list = field(default_factory=list, compare=False, repr=False)    # [profiles_running's answer], once asked


@dataclass(frozen=True)
class KernelFacts:
    """What the chosen image says about one kernel: its cubin entry, or only the PTX target."""

    cubin: CubinKernel | None
    binary_version: int | None
    ptx_version: int | None
    unknown_reason: str | None = None            # why the cubin-derived attributes are not known
    derived: dict = field(default_factory=dict, compare=False, repr=False)   # profile name -> KernelAttributes


@dataclass(frozen=True)
class _Target:
    number: int          # 90 for sm_90a
    suffix: str          # "", "a" or "f"

    @classmethod
    def parse(cls, arch: str | None) -> "_Target | None":
        if not arch or not arch.startswith("sm_"):
            return None
        digits = arch[3:].rstrip("af")
        return cls(int(digits), arch[3 + len(digits):]) if digits.isdigit() else None


def runs_on(entry: FatbinEntry, capability: int) -> bool:
    """Whether the driver can run this entry on a device of compute capability `capability` (90 for 9.0)."""
    target = _Target.parse(entry.sm_arch)
    if target is None:
        return False
    if target.suffix == "a":
        return target.number == capability
    same_family = target.number // 10 == capability // 10 and target.number % 10 <= capability % 10
    if entry.kind == "elf":
        return same_family
    return same_family if target.suffix == "f" else target.number <= capability


_CACHE: dict[bytes, LibraryImage] = {}
_BY_OBJECT: dict[tuple[str, int | None], LibraryImage | None] = {}
_CACHE_MAX = 1024


def library_image(image, address: int | None) -> LibraryImage | None:
    """The fatbin at `address` in the laid-out image (an export's GPU binary, emu.dsl.exports), or None
    without one.

    Kept per object digest and address: every run of an object asks again, and the answer cannot change.
    """
    key = (image.obj.sha256, address)
    if key in _BY_OBJECT:
        return _BY_OBJECT[key]
    binary = _read_library(image, address)
    if len(_BY_OBJECT) < _CACHE_MAX:
        _BY_OBJECT[key] = binary
    return binary


def _read_library(image, address: int | None) -> LibraryImage | None:
    binary = _decode_from_image(image, address)
    if binary is not None:
        stored = image.extras.get("cubins", {}).get(str(address), {})      # what the image store kept (stored_cubins)
        for offset, known in stored.items():
            try:
                binary.cubins.setdefault(int(offset), CubinInfo.model_validate(known["info"]) if "info" in known
                                         else str(known["error"]))
            except (ValueError, TypeError, KeyError):
                pass            # a spoilt entry: the cubin is read again
    return binary


def _decode_from_image(image, address: int | None) -> LibraryImage | None:
    if address is None:
        return None
    for segment in image.segments:
        start = address - segment.address
        if 0 <= start < len(segment.data):
            header = segment.data[start:start + 16]
            if len(header) < 16:
                return LibraryImage(error=f"{BINARY_SYMBOL} is cut short by its segment")
            size = 16 + struct.unpack_from("<Q", header, 8)[0]
            return decode_library(bytes(segment.data[start:start + size]))
    return None


def decode_library(data: bytes) -> LibraryImage:
    cached = _CACHE.get(data)
    if cached is None:
        try:
            info = parse_fatbin(data)
            cached = LibraryImage(tuple(info.entries), tuple(entry_payload(data, e) for e in info.entries))
        except FatbinError as error:
            cached = LibraryImage(error=str(error))
        if len(_CACHE) < _CACHE_MAX:
            _CACHE[data] = cached
    return cached


def load_verdict(binary: LibraryImage | None, profile: DeviceProfile) -> tuple[str | None, dict[str, KernelFacts]]:
    """(why the driver refuses the binary or None, the facts of each kernel in the image it runs)."""
    if binary is None:
        return None, {}
    verdict = binary.verdicts.get(profile.name)
    if verdict is None:
        verdict = binary.verdicts[profile.name] = _verdict(binary, profile)
    return verdict


def _verdict(binary: LibraryImage, profile: DeviceProfile) -> tuple[str | None, dict[str, KernelFacts]]:
    if binary.error is not None:
        return f"the GPU binary is not a valid fatbin: {binary.error}", {}
    capability = profile.compute_capability
    runnable = [(e, p) for e, p in zip(binary.entries, binary.payloads) if runs_on(e, capability)]
    cubins = sorted(((e, p) for e, p in runnable if e.kind == "elf"), key=lambda ep: _Target.parse(ep[0].sm_arch).number)
    if cubins:
        entry, payload = cubins[-1]
        return None, _cubin_facts(binary, entry, payload)
    ptx = [e for e, _p in runnable if e.kind == "ptx"]
    if ptx:
        target = _Target.parse(ptx[-1].sm_arch)
        return None, {"*": KernelFacts(None, capability, target.number if target else None,
                                       f"PTX for {ptx[-1].sm_arch} would be JIT-compiled for sm_{capability}; "
                                       "its registers, memory sizes and limits are known only after compilation")}
    held = ", ".join(f"{e.sm_arch} ({'cubin' if e.kind == 'elf' else e.kind})" for e in binary.entries) or "nothing"
    others = [name for name in profiles_running(binary) if name != profile.name]
    hint = f"; profile {' or '.join(others)} would run it (--profile / runtime.profile)" if others else \
        "; no profile emu has would run it"
    return (f"the GPU binary holds {held}, which the {profile.device_name} of profile {profile.name} (sm_{capability}) cannot run: the driver "
            f"answers cudaErrorNoKernelImageForDevice (209){hint}"), {}


def _cubin_facts(binary: LibraryImage, entry: FatbinEntry, payload: bytes | None) -> dict[str, KernelFacts]:
    target = _Target.parse(entry.sm_arch)
    if payload is None:
        return {"*": KernelFacts(None, target.number, None, f"the {entry.sm_arch} cubin is compressed in a form emu "
                                 "cannot decompress")}
    info = binary.cubins.get(entry.offset)
    if info is None:
        info = binary.cubins[entry.offset] = _read_cubin(payload)
    if isinstance(info, str):
        return {"*": KernelFacts(None, target.number, None, f"the {entry.sm_arch} cubin cannot be read: {info}")}
    return cubin_kernel_facts(info)


def _read_cubin(payload: bytes) -> CubinInfo | str:
    """The cubin's facts, or why it cannot be read."""
    try:
        return parse_cubin(payload)
    except ValueError as error:          # CubinError, or a field no cubin of nvcc's would hold
        return str(error)


def stored_cubins(image, addresses) -> dict[str, dict]:
    """What each cubin of each GPU binary at `addresses` says, as the image store keeps it with the image.

    Reading a cubin needs LIEF, whose import costs a process more than the rest of a run:
    the image store keeps these facts (binary address -> entry offset -> `{"info": CubinInfo}` or
    `{"error": why}`) so that a later process runs the object without importing it.
    """
    stored = {}
    for address in addresses:
        binary = _decode_from_image(image, address)
        if binary is None or binary.error is not None:
            continue
        cubins = stored[str(address)] = {}
        for entry, payload in zip(binary.entries, binary.payloads):
            if entry.kind == "elf" and payload is not None:
                info = _read_cubin(payload)
                cubins[str(entry.offset)] = {"error": info} if isinstance(info, str) else {"info": info.model_dump(mode="json")}
    return stored


def cubin_kernel_facts(info: CubinInfo) -> dict[str, KernelFacts]:
    """Each kernel's facts in a cubin the device runs."""
    # ABI 8 cubins do not record their virtual architecture; the H200 reports PTX_VERSION 90 for
    # nvcc 13's ABI 8 sm_90a cubins, their SM number (tests/data/cubin/measured_h200.jsonl)
    ptx = info.virtual_version or info.binary_version
    return {k.name: KernelFacts(k, info.binary_version, ptx) for k in info.kernels}



def profiles_running(binary: LibraryImage | None) -> list[str]:
    """The profiles (h200 first) whose devices run some image of this binary.

    Kept with the binary (decoded once per object): `check` asks for every object it checks, and the answer
    reads every entry's architecture once per profile.
    """
    if binary is None or binary.error is not None:
        return list(PROFILES)
    if not binary.running:
        binary.running.append(tuple(name for name in PROFILES
                                    if any(runs_on(e, load_profile(name).compute_capability) for e in binary.entries)))
    return list(binary.running[0])
