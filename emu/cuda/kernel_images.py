"""What `inspect` shows of each kernel in an export's GPU binary: its cubin-derived attributes.

For the first profile whose device runs the binary (h200 first), each kernel's attributes as
cuKernelGetAttribute would answer them right after load, which of them emu cannot know (PTX to be
JIT-compiled, an unreadable cubin), and why the other profiles' devices refuse the binary.
"""
from __future__ import annotations

from pydantic import Field

from stub_models.enums import FuncAttribute

from ..gpu_binary.cubin import CubinKernel
from ..support.model import Model
from .kernel_attributes import kernel_attributes
from .loading import decode_library, load_verdict, profiles_running
from .profile import PROFILES, load_profile


class KernelImage(Model):
    kernel: str = Field(description="the kernel's name in the cubin ('*' for every kernel of a PTX-only image)")
    attributes: dict[str, int] = Field(description="CUfunction_attribute name -> value after load, on `profile`")
    unknown: list[str] = Field(description="attributes emu cannot know for it (their values above are the "
                               "profile's defaults)")
    unknown_reason: str | None = Field(default=None, description="why they are unknown")
    cubin: CubinKernel | None = Field(description="what the cubin declares, where there is one")


class KernelImages(Model):
    profile: str | None = Field(description="the first profile (h200 first) whose device runs the binary; null: none")
    refused_by: dict[str, str] = Field(description="profile -> why its device refuses the binary, as the driver would")
    kernels: list[KernelImage] = Field(description="each kernel of the image `profile`'s device runs")


def kernel_images(fatbin: bytes) -> KernelImages:
    binary = decode_library(fatbin)
    refused = {name: load_verdict(binary, load_profile(name))[0] for name in PROFILES}
    running = profiles_running(binary)
    if not running or binary.error is not None:
        return KernelImages(profile=None, refused_by={n: e for n, e in refused.items() if e}, kernels=[])
    profile = load_profile(running[0])
    _error, facts = load_verdict(binary, profile)
    kernels = []
    for name, fact in facts.items():
        derived = kernel_attributes(fact, profile, profile.device_attributes, {})
        kernels.append(KernelImage(kernel=name, attributes={FuncAttribute(a).name: v for a, v in derived.values.items()},
                                   unknown=sorted(FuncAttribute(a).name for a in derived.unknown),
                                   unknown_reason=fact.unknown_reason, cubin=fact.cubin))
    return KernelImages(profile=profile.name, refused_by={n: e for n, e in refused.items() if e}, kernels=kernels)


def kernel_image_lines(images: KernelImages) -> list[str]:
    """`inspect`'s lines: one per kernel with its attributes, then each refusing profile."""
    lines = [f"    kernels as the {images.profile} profile's device loads them:" if images.profile
             else "    no profile's device runs this binary"]
    short = {"MAX_THREADS_PER_BLOCK": "max_threads", "NUM_REGS": "regs", "SHARED_SIZE_BYTES": "shared",
             "CONST_SIZE_BYTES": "const", "LOCAL_SIZE_BYTES": "local", "PTX_VERSION": "ptx",
             "BINARY_VERSION": "binary", "CLUSTER_SIZE_MUST_BE_SET": "cluster_must_be_set",
             "REQUIRED_CLUSTER_WIDTH": "cluster_x", "REQUIRED_CLUSTER_HEIGHT": "cluster_y",
             "REQUIRED_CLUSTER_DEPTH": "cluster_z", "CACHE_MODE_CA": "cache_ca"}
    for image in images.kernels:
        values = ", ".join(f"{label}={'?' if name in image.unknown else image.attributes[name]}"
                           for name, label in short.items() if name in image.attributes)
        lines.append(f"      {image.kernel}: {values}")
        if image.unknown_reason:
            lines.append(f"        unknown: {image.unknown_reason}")
    lines += [f"    {name}: {error}" for name, error in images.refused_by.items()]
    return lines
