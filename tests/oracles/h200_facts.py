"""Compare the CUDA model with probe facts (team contract 3), field by field.

    python tests/oracles/h200_facts.py tests/data/facts/h200 [OBJECT_ROOT...]   # per fact file, fields reproduced

For every export a facts file names, the model runs the header's load path (`module_load`; a TVM-FFI object:
its entry's lazy load, as the probe's harness replays it) on the h200 profile, then answers each fact's question from the state it left: the load's first error,
cuKernelGetAttribute of every attribute, occupancy (with the fact's carveout set first), setter
results and launch verdicts (for the wrapper's own launches, the configuration the wrapper passed).
"""
from __future__ import annotations

import gzip
import json
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from emu.cuda.cluster_occupancy import max_active_clusters  # noqa: E402
from emu.cuda.config import RuntimeConfig  # noqa: E402
from emu.cuda.launch_checks import NO_LIMITS, LaunchLimits, LaunchRequest, check_launch, launch_limits  # noqa: E402
from emu.cuda.kernel_attributes import kernel_attributes  # noqa: E402
from emu.cuda.loading import decode_library, library_image, load_verdict  # noqa: E402
from emu.cuda.occupancy import max_active_blocks  # noqa: E402
from emu.cuda.profile import load_profile  # noqa: E402
from emu.cuda.runtime import CudaRuntime, Kernel  # noqa: E402
from emu.dsl.entries import EntrySpec  # noqa: E402
from emu.cache.loaded import load_image  # noqa: E402
from emu.probe.tvm_ffi import TRACE_RUNTIME, lazy_load_error  # noqa: E402
from emu.run.session import run_object  # noqa: E402
from stub_models.enums import CudaError, FuncAttribute  # noqa: E402

H200 = load_profile("h200")
COMPARED = ("load", "kernel_attribute", "occupancy", "setter", "launch", "cluster_occupancy")


OBJECT_ROOTS = [ROOT]      # where the facts' repository-relative object paths are looked up


def object_path(path: str) -> Path | None:
    return next((root / path for root in OBJECT_ROOTS if (root / path).exists()), None)


@lru_cache(maxsize=None)
def after_load(path: str) -> tuple[int, dict[str, dict[int, int]], dict[str, LaunchLimits], dict[str, frozenset[int]]]:
    """(the load path's first error, kernel name -> attributes on device 0, kernel name -> launch limits, kernel
    name -> the attributes the model does not know: a kernel without a cubin's).

    An export runs its header's load path, a TVM-FFI object its entry (whose first call loads the library); a bare
    fatbin (the probe's toys) is loaded as cudaLibraryLoadData loads it, each of its kernels then looked up."""
    found = object_path(path)
    if found.suffix == ".fatbin":
        error, facts = load_verdict(decode_library(found.read_bytes()), H200)
        derived = {} if error else {name: kernel_attributes(fact, H200, H200.device_attributes, {}) for name, fact in facts.items()}
        return (0, {name: dict(d.values) for name, d in derived.items()},
                {name: launch_limits(fact.cubin) for name, fact in facts.items()}, {name: d.unknown for name, d in derived.items()})
    image, (export,) = load_image(str(found))
    if export.ffi_name:         # a TVM-FFI object: the lazy load its entry makes, which the probe's harness replays
        run = run_object(str(found), RuntimeConfig(**TRACE_RUNTIME), [EntrySpec(name="tvm_ffi")])
        first = lazy_load_error(run)
    else:
        run = run_object(str(found), RuntimeConfig(), [EntrySpec(name="module_load")])
        first = next((e.returned for e in run.entries if e.returned), 0)
    kernels = {k.name: {int(FuncAttribute[n]): v for n, v in k.devices.get("0", {}).items()} for k in run.state.kernels}
    unknown = {k.name: frozenset(int(FuncAttribute[n]) for n in k.unknown) for k in run.state.kernels}
    _error, facts = load_verdict(library_image(image, export.binary), H200)
    limits = {name: launch_limits(fact.cubin) for name, fact in facts.items()}
    return first, kernels, limits, unknown


def model_answer(fact: dict):
    """What the model answers for the fact's question, shaped like the fact's answer."""
    loaded, kernels, limits, unknown = after_load(fact["object"])
    if fact["kind"] == "load":
        return loaded
    attributes = kernels.get(fact["kernel"], kernels.get("*"))   # "*": a PTX image's every kernel
    if fact["kind"] == "kernel_attribute":
        if attributes is None:
            return (int(CudaError.INVALID_RESOURCE_HANDLE), None)
        return (0, attributes[fact["attribute"]]) if fact["attribute"] in attributes else (1, None)
    if attributes is None:
        return int(CudaError.INVALID_RESOURCE_HANDLE if fact["kind"] == "setter" else CudaError.INVALID_DEVICE_FUNCTION)
    if fact["kind"] == "occupancy":
        carveout = fact["carveout"]
        barriers = limits.get(fact["kernel"], limits.get("*", NO_LIMITS)).barriers
        return (0, max_active_blocks(attributes, fact["block_size"], fact["dynamic_smem"], H200, H200.device_attributes,
                                     carveout, barriers=barriers))
    if fact["kind"] == "cluster_occupancy":
        config, kernel_limits = fact["config"], limits.get(fact["kernel"], limits.get("*", NO_LIMITS))
        cluster = next((tuple(a["value"]) for a in config["attrs"] if a["id"] == 4), None)
        result, clusters, _why = max_active_clusters(attributes, config["block"][0], config["dynamic_smem"], cluster,
                                                     H200, H200.device_attributes, barriers=kernel_limits.barriers,
                                                     limits=kernel_limits, grid=tuple(config["grid"]),
                                                     unknown=unknown.get(fact["kernel"], unknown.get("*", frozenset())))
        return (None if result is None else int(result), clusters)
    if fact["kind"] == "setter":
        runtime = CudaRuntime(RuntimeConfig(), [])
        if not runtime.valid_device(fact["device"]):
            return int(CudaError.INVALID_DEVICE)
        kernel = Kernel(fact["kernel"], 0, 0, {fact["device"]: dict(attributes)},
                        limits=limits.get(fact["kernel"], limits.get("*", NO_LIMITS)))
        return int(runtime.set_attribute(kernel, fact["attribute"], fact["value"], fact["device"]))
    config = fact["config"]
    attrs = {a["id"]: tuple(a["value"]) if isinstance(a["value"], list) else a["value"] for a in config["attrs"]}
    state = {**attributes, **{int(k): v for k, v in fact["pre"].items()}}
    request = LaunchRequest(tuple(config["grid"]), tuple(config["block"]), config["dynamic_smem"], attrs)
    return int(check_launch(request, state, H200, H200.device_attributes, limits.get(fact["kernel"], NO_LIMITS)))


def measured_answer(fact: dict):
    if fact["kind"] == "kernel_attribute":
        return (fact["result"], fact["value"])
    if fact["kind"] == "occupancy":
        return (fact["result"], fact["num_blocks"])
    if fact["kind"] == "cluster_occupancy":
        return (fact["result"], fact["num_clusters"])
    return fact["result"]


def compared_facts(path: Path) -> list[dict]:
    """The facts of a file the model answers (launches the probe did not run again, result -1, left out)."""
    text = gzip.decompress(path.read_bytes()).decode() if path.name.endswith(".gz") else path.read_text()
    facts = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [f for f in facts if f["kind"] in COMPARED and f.get("object") and f.get("result") != -1
            and object_path(f["object"]) is not None]


def fact_files(folder: Path) -> list[Path]:
    return sorted([*folder.glob("*.jsonl"), *folder.glob("*.jsonl.gz")])


def compare(path: Path) -> list[tuple[dict, object, object]]:
    return [(fact, measured_answer(fact), model_answer(fact)) for fact in compared_facts(path)]


def main(folder: str, roots: list[str]) -> None:
    OBJECT_ROOTS.extend(Path(r) for r in roots)
    print("| facts file | load | attributes | occupancy | setters | launches | clusters | all |")
    print("|---|---|---|---|---|---|---|---|")
    for path in fact_files(Path(folder)):
        rows = compare(path)
        cells = []
        for kind in COMPARED + (None,):
            chosen = [(m, g) for f, m, g in rows if kind in (None, f["kind"])]
            cells.append(f"{sum(m == g for m, g in chosen)}/{len(chosen)}")
        print(f"| {path.name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    # python tests/oracles/h200_facts.py [FACTS_DIR [OBJECT_ROOT...]]: extra roots hold objects not in this checkout
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "tests" / "data" / "facts" / "h200"), sys.argv[2:])
