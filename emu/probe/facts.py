"""The probe's facts as pydantic models (team contract 3) and the reader that validates a facts file.

One JSON object a line; `kind` tells which model.  The six kinds of the contract are what the CUDA
model is tested against; `load_step`, `get_kernel`, `wrapper_return`, `execution` and `harness_exit` are the
probe's own detail and bookkeeping (documented in tests/data/facts/h200/README.md) and can be ignored;
`cluster_occupancy` is the probe's own measurement, not yet in the contract (emu/cuda/cluster_occupancy.py models it).
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError


class _Fact(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    object: str | None
    sha256: str | None


class DeviceFact(_Fact):
    kind: Literal["device"]
    device: int
    name: str
    driver: int
    runtime: int
    attributes: dict[str, int]      # cudaDeviceAttr number -> value


class LoadFact(_Fact):
    kind: Literal["load"]
    result: int                     # first cudaError of the header's load path (0: loaded)


class KernelAttributeFact(_Fact):
    kind: Literal["kernel_attribute"]
    kernel: str
    device: int
    attribute: int                  # CUfunction_attribute 0-17
    result: int                     # CUresult of cuKernelGetAttribute
    value: int | None


class OccupancyFact(_Fact):
    kind: Literal["occupancy"]
    kernel: str
    block_size: int
    dynamic_smem: int
    carveout: int | None            # attribute 9 set before the query, None: as loaded
    result: int
    num_blocks: int | None


class SetterFact(_Fact):
    kind: Literal["setter"]
    kernel: str
    api: Literal["cudaFuncSetAttribute", "cudaKernelSetAttributeForDevice"]
    attribute: int
    value: int
    device: int
    result: int


class LaunchAttribute(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: int
    value: int | tuple[int, int, int]   # ProgrammaticEvent (7): [has event, flags, triggerAtBlockStart]


class LaunchConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_smem: int
    attrs: list[LaunchAttribute]


class LaunchFact(_Fact):
    kind: Literal["launch"]
    kernel: str
    via: Literal["cudaLaunchKernelEx", "wrapper"]
    config: LaunchConfig
    pre: dict[str, int]             # kernel attributes set (device 0) before the launch
    result: int                     # the launch call's cudaError (-1: not run again after a restart)


class ClusterOccupancyFact(_Fact):
    kind: Literal["cluster_occupancy"]
    kernel: str
    config: LaunchConfig            # the cudaLaunchConfig_t asked about; attrs: the cluster dimension (4), or none
    result: int                     # cudaOccupancyMaxActiveClusters
    num_clusters: int | None


class LoadStepFact(_Fact):
    kind: Literal["load_step"]
    index: int                      # the header's CUTE_DSL_CUDA_ERROR_CHECK calls in order (4.4 and later:
    result: int                     # 0 init, 1 cudaGetDeviceCount, 2 + d load_to_device(d))


class GetKernelFact(_Fact):
    kind: Literal["get_kernel"]
    kernel: str
    result: int                     # cudaLibraryGetKernel


class WrapperReturnFact(_Fact):
    kind: Literal["wrapper_return"]
    result: int | None              # what the header's wrapper returned (None: the header has none)


class ExecutionFact(_Fact):
    kind: Literal["execution"]
    seq: int                        # the line number (from 0) of the launch that failed while running
    result: int


class HarnessExitFact(_Fact):
    kind: Literal["harness_exit"]
    result: int                     # the harness process's exit status (it stopped early)


CONTRACT_KINDS = ("device", "load", "kernel_attribute", "occupancy", "setter", "launch")
Fact = Annotated[Union[DeviceFact, LoadFact, KernelAttributeFact, OccupancyFact, SetterFact, LaunchFact, ClusterOccupancyFact,
                       LoadStepFact, GetKernelFact, WrapperReturnFact, ExecutionFact, HarnessExitFact], Field(discriminator="kind")]
_ADAPTER = TypeAdapter(Fact)


class FactsError(ValueError):
    """A facts file has a line that is not JSON or not one of the fact kinds."""


def parse_fact(line: str, where: str = "<line>"):
    try:
        return _ADAPTER.validate_json(line)
    except ValidationError as error:
        first = error.errors()[0]
        raise FactsError(f"{where}: not a probe fact: {first['msg']} at {'.'.join(map(str, first['loc']))}") from None


def read_facts(path: str | Path, kinds: tuple[str, ...] | None = None) -> list:
    """Every fact of a JSONL file, plain or gzipped (`.jsonl.gz`), validated; optionally only some kinds."""
    facts = []
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            fact = parse_fact(line, f"{path}:{number}")
            if kinds is None or fact.kind in kinds:
                facts.append(fact)
    return facts


def fact_files(folder: str | Path) -> list[Path]:
    """The facts files of a folder (tests/data/facts/h200/ stores them as <name>.jsonl.gz)."""
    folder = Path(folder)
    return sorted([*folder.glob("*.jsonl"), *folder.glob("*.jsonl.gz")])


def dump_fact(fact) -> str:
    """The line the probe would have written for this fact (key order as the harness writes it)."""
    fields = fact.model_dump(mode="json")
    ordered = {"kind": fields.pop("kind"), "object": fields.pop("object"), "sha256": fields.pop("sha256"), **fields}
    return json.dumps(ordered, separators=(",", ":"))
