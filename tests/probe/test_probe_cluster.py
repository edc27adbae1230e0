"""The harness's cluster occupancy sweep (probe_runtime.h), run on the CPU: the real C++ of the harness, compiled
with the host compiler against CUDA's headers, with the few CUDA calls it makes answered by a stand-in that
echoes the configuration it was asked about.  Every line it writes must be a valid `cluster_occupancy` fact,
the first of each sweep the configuration exactly as launched, and kernels launched without a cluster get none."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from emu.probe.build import RUNTIME_HEADER
from emu.probe.facts import dump_fact, parse_fact
from tests.probe.test_probe_harness import CUDA_INCLUDE

# Kernel handles: 0x10 launched with a 2x1x1 cluster (as the TVM-FFI hopper_gemm's traced launch), 0x20 launched
# without one, 0x30 never launched but with a compile-time 2x2x1 cluster (attributes 11-13), as the toy kernels.
DRIVER = r"""
#include "probe_runtime.h"
static int attribute(CUkernel k, int a) {
  if (a == 0) return 1024;
  if (a == 8) return 232448;
  if (k == (CUkernel)0x30 && (a == 11 || a == 12)) return 2;
  if (k == (CUkernel)0x30 && a == 13) return 1;
  return 0;
}
extern "C" {
CUresult CUDAAPI cuKernelGetAttribute(int *v, CUfunction_attribute a, CUkernel k, CUdevice) { *v = attribute(k, (int)a); return CUDA_SUCCESS; }
cudaError_t CUDARTAPI cudaGetLastError(void) { return cudaSuccess; }
cudaError_t CUDARTAPI cudaLibraryGetKernel(cudaKernel_t *k, cudaLibrary_t, const char *name) {
  *k = (cudaKernel_t)(name[0] == 'a' ? 0x10 : name[0] == 'b' ? 0x20 : 0x30); return cudaSuccess;
}
// An answer that shows what was asked: the cluster's x plus 10 times its y; a cluster over 8 blocks is refused
// (912, as a stand-in for the device's verdict).
cudaError_t CUDARTAPI cudaOccupancyMaxActiveClusters(int *n, const void *, const cudaLaunchConfig_t *c) {
  unsigned x = 1, y = 1, z = 1;
  for (unsigned i = 0; i < c->numAttrs; i++)
    if (c->attrs[i].id == cudaLaunchAttributeClusterDimension) {
      x = c->attrs[i].val.clusterDim.x; y = c->attrs[i].val.clusterDim.y; z = c->attrs[i].val.clusterDim.z;
    }
  if (x * y * z > 8) return (cudaError_t)912;
  *n = (int)(x + 10 * y);
  return cudaSuccess;
}
}
int main() {
  g_object = "\"a.o\""; g_sha = "\"00\"";
  probe_traced_launch((cudaLibrary_t)1, "a", 2, 1, 128, 256, 1, 1, 197632, 1, 2, 1, 1);
  probe_traced_launch((cudaLibrary_t)1, "b", 64, 1, 1, 128, 1, 1, 0, 0, 0, 0, 0);
  probe_cluster_occupancy((CUkernel)0x10, "a");
  probe_cluster_occupancy((CUkernel)0x20, "b");
  probe_cluster_occupancy((CUkernel)0x30, "c");
  return 0;
}
"""


@pytest.fixture(scope="module")
def cluster_lines(tmp_path_factory) -> list:
    folder = tmp_path_factory.mktemp("cluster")
    shutil.copy(RUNTIME_HEADER, folder)
    (folder / "driver.cpp").write_text(DRIVER)
    binary = folder / "driver"
    built = subprocess.run(["c++", "-std=c++17", "-O1", f"-I{CUDA_INCLUDE}", f"-I{folder}", "-o", str(binary),
                            str(folder / "driver.cpp")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    ran = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    return [parse_fact(line) for line in ran.stdout.splitlines()]


needs_cuda_headers = pytest.mark.skipif(CUDA_INCLUDE is None or shutil.which("c++") is None,
                                        reason="needs CUDA's headers (the probe's build machine)")


def _cluster(fact):
    given = [a.value for a in fact.config.attrs if a.id == 4]
    return given[0] if given else None


@needs_cuda_headers
def test_every_line_is_a_cluster_occupancy_fact_in_the_committed_format(cluster_lines):
    assert cluster_lines and {f.kind for f in cluster_lines} == {"cluster_occupancy"}
    assert {f.kernel for f in cluster_lines} == {"a", "c"}          # b launched without a cluster: none
    for fact in cluster_lines:
        assert dump_fact(fact) == dump_fact(parse_fact(dump_fact(fact)))
        assert (fact.result == 0) == (fact.num_clusters is not None)


@needs_cuda_headers
def test_the_sweep_starts_from_the_launch_as_made(cluster_lines):
    a = [f for f in cluster_lines if f.kernel == "a"]
    first = a[0].config
    assert (first.grid, first.block, first.dynamic_smem, _cluster(a[0])) == ((2, 1, 128), (256, 1, 1), 197632, (2, 1, 1))
    assert a[0].num_clusters == 12                                   # the stand-in echoes x + 10 y of a 2x1x1 cluster
    shapes = [_cluster(f) for f in a if f.config.block == (256, 1, 1) and f.config.dynamic_smem == 197632]
    assert {(1, 1, 1), (4, 1, 1), (8, 1, 1), (16, 1, 1), (2, 2, 1), (2, 1, 2)} <= set(shapes) and None in shapes
    assert [f.result for f in a if _cluster(f) == (16, 1, 1)] == [912]
    smem = {f.config.dynamic_smem for f in a if _cluster(f) == (2, 1, 1) and f.config.block == (256, 1, 1)}
    assert smem == {0, 1024, 49152, 100000, 197632, 232448, 232449}
    blocks = {f.config.block[0] for f in a if _cluster(f) == (2, 1, 1) and f.config.dynamic_smem == 197632}
    assert blocks == {32, 64, 128, 256, 384, 512, 1024}
    assert all(f.config.grid == (2, 1, 1) for f in a[1:] if _cluster(f) == (2, 1, 1))   # a multiple of the cluster


@needs_cuda_headers
def test_a_compile_time_cluster_is_measured_without_a_cluster_attribute_first(cluster_lines):
    c = [f for f in cluster_lines if f.kernel == "c"]
    assert (c[0].config.grid, c[0].config.block, c[0].config.dynamic_smem, _cluster(c[0])) == ((2, 2, 1), (128, 1, 1), 0, None)


def test_a_hand_written_line_in_the_harness_format_is_read():
    line = ('{"kind":"cluster_occupancy","object":"tests/fixtures/tvm_ffi/realworld/hopper_gemm.o","sha256":"00",'
            '"kernel":"k","config":{"grid":[2,1,128],"block":[256,1,1],"dynamic_smem":197632,"attrs":[{"id":4,'
            '"value":[2,1,1]}]},"result":0,"num_clusters":66}')
    fact = parse_fact(line)
    assert (fact.num_clusters, fact.config.attrs[0].value, fact.config.grid) == (66, (2, 1, 1), (2, 1, 128))
    assert dump_fact(fact) == line
    refused = parse_fact(line.replace('"result":0,"num_clusters":66', '"result":912,"num_clusters":null'))
    assert refused.result == 912 and refused.num_clusters is None


def test_the_store_keeps_cluster_lines_and_the_occupancy_reader_skips_them(tmp_path):
    from emu.probe.facts import read_facts
    from emu.probe.store import store
    raw = tmp_path / "raw"
    raw.mkdir()
    occupancy = ('{"kind":"occupancy","object":"a.o","sha256":"00","kernel":"k","block_size":128,"dynamic_smem":0,'
                 '"carveout":null,"result":0,"num_blocks":3}')
    cluster = ('{"kind":"cluster_occupancy","object":"a.o","sha256":"00","kernel":"k","config":{"grid":[2,1,1],'
               '"block":[128,1,1],"dynamic_smem":0,"attrs":[]},"result":0,"num_clusters":132}')
    (raw / "a.jsonl").write_text(f"{occupancy}\n{cluster}\n")
    assert store(raw, tmp_path / "out") == [("a", 2, 0)]
    assert [f.kind for f in read_facts(tmp_path / "out" / "a.jsonl.gz")] == ["occupancy", "cluster_occupancy"]
    assert [f.kind for f in read_facts(tmp_path / "out" / "a.jsonl.gz", kinds=("occupancy",))] == ["occupancy"]
    assert Path(tmp_path / "out" / "a.jsonl.gz").exists()
