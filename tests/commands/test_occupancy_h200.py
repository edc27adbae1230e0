"""`emu occupancy` against the H200: every `cudaOccupancyMaxActiveBlocksPerMultiprocessor` answer the probe
measured (tests/data/facts/h200/*.jsonl.gz, emu/probe/probe_runtime.h: after the header's module load, block
sizes x dynamic shared memory as loaded and with carveouts 0-100 set) for the sm_90a exports of the committed
corpus, reproduced by the command's own function (emu.commands.occupancy.occupancy_object)."""
from __future__ import annotations

import gzip
import hashlib
import json
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import pytest
from emu.cache.loaded import load_image
from emu.commands.occupancy import occupancy_object
from emu.cuda.loading import library_image
from emu.errors import BadInput
from tests import oracles

ROOT = Path(__file__).resolve().parent.parent.parent
FACTS = ROOT / "tests" / "data" / "facts" / "h200"


@lru_cache(maxsize=None)
def sm_90a(path: str) -> bool:
    """Whether every export of the object holds an sm_90a cubin (the H200's own binary)."""
    image, exports = load_image(str(ROOT / path))
    binaries = [library_image(image, export.binary) for export in exports]
    return all(b is not None and any(e.kind == "elf" and e.sm_arch == "sm_90a" for e in b.entries) for b in binaries)


def occupancy_facts() -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    """object path -> its occupancy facts, and -> its cluster_occupancy facts, for the committed sm_90a exports the
    facts name."""
    found = {"occupancy": defaultdict(list), "cluster_occupancy": defaultdict(list)}
    for path in sorted(FACTS.glob("*.jsonl.gz")):
        for line in gzip.decompress(path.read_bytes()).decode().splitlines():
            fact = json.loads(line)
            if fact["kind"] in found and fact["object"].endswith(".o") and sm_90a(fact["object"]):
                found[fact["kind"]][fact["object"]].append(fact)
    return dict(found["occupancy"]), dict(found["cluster_occupancy"])


OBJECTS, CLUSTER_OBJECTS = occupancy_facts()


def _gpu_binary(path: str) -> tuple:
    """What decides the H200's occupancy answers for an object: its exports' GPU binaries (every fatbin entry and
    payload) and kernels; the host code around them does not enter."""
    image, exports = load_image(str(ROOT / path))
    return tuple((tuple(export.kernels), library_image(image, export.binary).entries,
                  library_image(image, export.binary).payloads) for export in exports)


def committed_sm_90a() -> list[str]:
    """Every committed export under tests/ (fixtures and test data; not the objects that are no export, or are
    broken on purpose) whose exports all hold an sm_90a cubin."""
    found = []
    for path in sorted(ROOT.glob("tests/**/*.o")):
        obj = str(path.relative_to(ROOT))
        try:
            if sm_90a(obj):
                found.append(obj)
        except BadInput:
            continue
    return found


def twins() -> tuple[dict[str, str], list[str]]:
    """Each committed sm_90a object without facts of its own -> a measured object with the same GPU binaries
    (an AArch64 or host-CPU export holds the cubin its x86-64 twin holds: emu/probe/README.md); and the objects
    that have neither."""
    measured = {}
    for obj in sorted(OBJECTS):
        measured.setdefault(_gpu_binary(obj), obj)
    found, unmeasured = {}, []
    for obj in committed_sm_90a():
        if obj not in OBJECTS:
            twin = measured.get(_gpu_binary(obj))
            if twin is not None:
                found[obj] = twin
            else:
                unmeasured.append(obj)
    return found, unmeasured


TWINS, UNMEASURED = twins()


def test_the_facts_cover_the_corpus_sm_90a_exports():
    kernels = {(obj, f["kernel"]) for obj, facts in OBJECTS.items() for f in facts}
    assert len(OBJECTS) >= 110 and len(kernels) >= 130
    assert UNMEASURED == []          # every committed sm_90a object: measured itself, or through its twin
    assert all(f["result"] == 0 for facts in OBJECTS.values() for f in facts)
    for obj, facts in OBJECTS.items():         # measured on this very object, not an earlier build of it
        assert {f["sha256"] for f in facts} == {hashlib.sha256((ROOT / obj).read_bytes()).hexdigest()}, obj


@pytest.mark.oracle(oracles.H200)
@pytest.mark.parametrize("obj", sorted(OBJECTS) + sorted(TWINS))
def test_occupancy_reproduces_every_measured_answer(obj):
    """On the measured object, or on an object holding the same GPU binaries, run through its own loaders."""
    by_carveout = defaultdict(list)
    for fact in OBJECTS[TWINS.get(obj, obj)]:
        by_carveout[fact["carveout"]].append(fact)
    wrong, compared = [], 0
    for carveout, facts in by_carveout.items():
        blocks = sorted({f["block_size"] for f in facts})
        smem = sorted({f["dynamic_smem"] for f in facts})
        result = occupancy_object(str(ROOT / obj), block_sizes=blocks, dynamic_smem=smem, carveout=carveout)
        answers = {}
        for export in result.exports:
            assert (export.profile, export.measured) == ("h200", True)
            for kernel in export.kernels:
                for answer in kernel.answers:
                    answers[kernel.kernel, answer.block_size, answer.dynamic_smem] = answer.blocks
        for fact in facts:
            got = answers.get((fact["kernel"], fact["block_size"], fact["dynamic_smem"]))
            compared += 1
            if got != fact["num_blocks"]:
                wrong.append((fact["kernel"], fact["block_size"], fact["dynamic_smem"], carveout, fact["num_blocks"], got))
    assert compared == len(OBJECTS[TWINS.get(obj, obj)]) and wrong == []


def test_the_twins_cover_the_other_hosts():
    """The AArch64 and host-CPU builds of measured exports are checked through their x86-64 twins' facts."""
    hosts = {Path(obj).parent.name for obj in TWINS}
    assert {"aarch64", "native"} <= hosts and len(TWINS) >= 100, (len(TWINS), sorted(hosts))


def refused_loads() -> list[str]:
    """The committed objects whose header load the H200 refused (no occupancy was then measured)."""
    refused = []
    for path in sorted(FACTS.glob("*.jsonl.gz")):
        for line in gzip.decompress(path.read_bytes()).decode().splitlines():
            fact = json.loads(line)
            if fact["kind"] == "load" and fact["result"] != 0 and (ROOT / fact["object"]).exists():
                refused.append((fact["object"], fact["result"]))
    return refused


@pytest.mark.oracle(oracles.H200)
def test_a_kernel_the_h200_cannot_load_gets_the_load_error_and_no_numbers():
    refused = refused_loads()
    assert len(refused) >= 10 and {result for _obj, result in refused} == {209}
    for obj, _result in refused:
        result = occupancy_object(str(ROOT / obj), block_sizes=[128], dynamic_smem=[0], profile="h200")
        kernels = [k for export in result.exports for k in export.kernels]
        assert kernels and all("(209)" in k.load_error and not k.answers for k in kernels), obj


def _asked_cluster(fact: dict) -> tuple[int, int, int] | None:
    return next((tuple(a["value"]) for a in fact["config"]["attrs"] if a["id"] == 4), None)


def _command_answer(kernel, answer) -> tuple[int, int | None]:
    """The command's cluster answer as the fact's (result, num_clusters): no cluster asked and none compiled in is
    what the driver answers with 0 clusters (emu.cuda.cluster_occupancy.NO_CLUSTER), whatever the export's launch
    asks for (the command's default then)."""
    if kernel.cluster is None or kernel.cluster_source == "launch":
        return 0, 0
    if kernel.cluster_error is not None:
        return int(kernel.cluster_error.split()[0]), None
    return (0, answer.clusters) if kernel.cluster_unknown is None else (None, None)


CLUSTER_TWINS = {obj: twin for obj, twin in TWINS.items() if twin in CLUSTER_OBJECTS}


@pytest.mark.oracle(oracles.H200)
@pytest.mark.parametrize("obj", sorted(CLUSTER_OBJECTS) + sorted(CLUSTER_TWINS))
def test_occupancy_reproduces_every_measured_cluster_answer(obj):
    """Every cudaOccupancyMaxActiveClusters the probe measured on a real export (its own launch's configuration,
    the sweep of shapes, and no cluster attribute), through the command's own function with --cluster."""
    by_cluster = defaultdict(list)
    for fact in CLUSTER_OBJECTS[CLUSTER_TWINS.get(obj, obj)]:
        assert fact["config"]["block"][1:] == [1, 1]
        by_cluster[_asked_cluster(fact)].append(fact)
    wrong, compared = [], 0
    for cluster, facts in by_cluster.items():
        blocks = sorted({f["config"]["block"][0] for f in facts})
        smem = sorted({f["config"]["dynamic_smem"] for f in facts})
        result = occupancy_object(str(ROOT / obj), block_sizes=blocks, dynamic_smem=smem, cluster=cluster)
        answers = {(k.kernel, a.block_size, a.dynamic_smem): _command_answer(k, a)
                   for export in result.exports for k in export.kernels for a in k.answers}
        for fact in facts:
            config = fact["config"]
            compared += 1
            got = answers.get((fact["kernel"], config["block"][0], config["dynamic_smem"]))
            if got != (fact["result"], fact["num_clusters"]):
                wrong.append((fact["kernel"][:40], config, fact["result"], fact["num_clusters"], got))
    assert compared == len(CLUSTER_OBJECTS[CLUSTER_TWINS.get(obj, obj)]) and wrong == []


def test_the_cluster_facts_cover_the_real_exports():
    assert sum(map(len, CLUSTER_OBJECTS.values())) == 418 and len(CLUSTER_OBJECTS) == 15     # 19 kernels x 22
    assert {"aarch64", "native"} <= {Path(obj).parent.name for obj in CLUSTER_TWINS}, sorted(CLUSTER_TWINS)
    assert {"aarch64", "native"} <= {Path(obj).parent.name for obj in SAME_EXPORTS} and len(SAME_EXPORTS) >= 10


# the same export built for another host (a twin by name too): the same launch; other twins share only the GPU binary
SAME_EXPORTS = {obj: twin for obj, twin in CLUSTER_TWINS.items() if Path(obj).name == Path(twin).name}


@pytest.mark.oracle(oracles.H200)
@pytest.mark.parametrize("obj", sorted(CLUSTER_OBJECTS) + sorted(SAME_EXPORTS))
def test_the_default_cluster_is_the_one_the_exports_launch_asked_for(obj):
    """The probe's first cluster_occupancy line of a kernel is the configuration the export's own launch passed
    (emu/probe/README.md): the command's default cluster is that launch's."""
    launched = {}
    for fact in CLUSTER_OBJECTS[CLUSTER_TWINS.get(obj, obj)]:
        launched.setdefault(fact["kernel"], _asked_cluster(fact))
    result = occupancy_object(str(ROOT / obj), block_sizes=[128], dynamic_smem=[0])
    got = {k.kernel: (k.cluster, k.cluster_source) for export in result.exports for k in export.kernels}
    assert got == {kernel: (cluster, "launch") for kernel, cluster in launched.items()}
