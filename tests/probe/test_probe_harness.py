"""The generated harness calls each export only through its own header, and compiles where CUDA's
headers are installed (the probe's build machine); its structure is checked everywhere."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from emu.probe.build import RUNTIME_HEADER, TOY_SOURCE
from emu.probe.command import export_target, facts_name, kernel_slot_names, object_label
from emu.probe.harness import cuda_kernel_names, export_harness, fatbin_harness
from emu.probe.header import parse_header

ROOT = Path(__file__).resolve().parents[2]
OBJECTS = sorted(p for p in (ROOT / "tests" / "fixtures").glob("cutlass-dsl-*/*/*.o") if p.parent.name != "aarch64")


def _generate(path: Path, args=None, sweep=False) -> str:
    header = parse_header(path.with_suffix(".h"))
    return export_harness(header, path.with_suffix(".h").name, "tests/x.o", "ab" * 32, kernel_slot_names(path), args, sweep)


@pytest.mark.parametrize("path", OBJECTS, ids=lambda p: "/".join(p.parts[-3:]))
def test_harness_uses_the_header(path):
    prefix = path.stem
    source = _generate(path)
    old = "cutlass-dsl-4.3." in str(path)
    assert f'#include "{prefix}.h"' in source
    assert source.index("#define CUTE_DSL_CUDA_ERROR_CHECK") < source.index(f'#include "{prefix}.h"')
    assert f"{prefix}_Kernel_{'Metadata' if old else 'Module'}_Load(&module);" in source
    wrapper = f"{prefix}_wrapper(&module, &arg_x, (CUstream)0);" if old else f"cute_dsl_{prefix}_wrapper(&module, &arg_x, (cudaStream_t)0);"
    assert wrapper in source
    assert "arg_x.data = (void *)probe_alloc(268435456ull);" in source
    names = re.search(r"KERNEL_NAMES\[\] = \{(.*)\};", source).group(1)
    kernels = kernel_slot_names(path)
    assert kernels and all(k.startswith("kernel_cutlass_") for k in kernels)
    assert names == ", ".join(f'"{k}"' for k in kernels)
    assert "probe_library_rest(kernels, false);" in source


def test_harness_of_dsl_4_3(tmp_path):
    shutil.copy(ROOT / "tests/fixtures/cutlass-dsl-4.3.5/native/plain.h", tmp_path / "plain.h")
    shutil.copy(ROOT / "tests/fixtures/cutlass-dsl-4.8.0/x86_64/plain.o", tmp_path / "plain.o")
    source = export_target(tmp_path / "plain.o", sweep=False).source
    assert "plain_Kernel_Metadata_t module;" in source and "plain_Kernel_Metadata_Load(&module);" in source
    assert "plain_wrapper(&module, &arg_x, (CUstream)0);" in source
    assert "probe_library_attributes((cudaLibrary_t)module.module" in source


def test_two_kernels_are_both_named():
    path = ROOT / "tests/fixtures/cutlass-dsl-4.8.0/x86_64/two_kernels.o"
    assert [k.split("_tensor")[0] for k in kernel_slot_names(path)] == ["kernel_cutlass_rotate", "kernel_cutlass_negate"]


def test_arguments_from_args_json_size_the_buffers(tmp_path):
    src = ROOT / "tests/fixtures/cutlass-dsl-4.8.0/x86_64/plain.o"
    text = src.with_suffix(".h").read_text().replace(
        "    void *data;\n", "    void *data;\n    int32_t dynamic_shapes[2];\n    int64_t dynamic_strides[1];\n")
    text = text.replace("cudaStream_t stream)", "int32_t n, float alpha, cudaStream_t stream)")
    (tmp_path / "plain.h").write_text(text)
    shutil.copy(src, tmp_path / "plain.o")
    (tmp_path / "plain.args.json").write_text(
        '{"args": {"x": {"data": 1, "dynamic_shapes": [4096, 8192], "dynamic_strides": [4096]}, "n": 7, "alpha": 0.5}}')
    source = export_target(tmp_path / "plain.o", sweep=True).source
    assert "arg_x.dynamic_shapes[0] = (int32_t)4096;" in source
    assert "arg_x.dynamic_shapes[1] = (int32_t)8192;" in source
    assert "arg_x.dynamic_strides[0] = (int64_t)4096;" in source
    assert f"probe_alloc({16 * 4096 * 8192 * 2}ull)" in source      # 16-byte elements, twice the span
    assert "(int32_t)(7), (float)(0.5), (cudaStream_t)0" in source
    assert "probe_library_rest(kernels, true);" in source


def test_missing_header_is_bad_input(tmp_path, cli):
    shutil.copy(ROOT / "tests/fixtures/cutlass-dsl-4.8.0/x86_64/plain.o", tmp_path / "lonely.o")
    result = cli("probe", str(tmp_path / "lonely.o"), "--out", str(tmp_path / "out"), "--build-only", "--no-toys")
    assert result.code == 2
    assert "lonely.o: no header lonely.h next to it" in result.err


def test_labels_and_names():
    path = ROOT / "tests/fixtures/cutlass-dsl-4.8.0/x86_64/plain.o"
    assert object_label(path).endswith("tests/fixtures/cutlass-dsl-4.8.0/x86_64/plain.o")
    assert facts_name("tests/fixtures/cutlass-dsl-4.8.0/x86_64/plain.o") == "cutlass-dsl-4.8.0.x86_64.plain"
    assert facts_name("tests/fixtures/realworld/x86_64/gemm.o") == "realworld.x86_64.gemm"
    assert facts_name("tests/data/facts/h200/toys/sweep_kernels.sm_90a.fatbin") == "toys.sweep_kernels.sm_90a.fatbin"


def test_toy_kernel_names():
    names = cuda_kernel_names(TOY_SOURCE.read_text())
    assert names[0] == "toy_small"
    assert {"toy_regs_max", "toy_bounds_256", "toy_static_smem", "toy_cluster_2", "toy_cluster_4x2"} <= set(names)
    source = fatbin_harness(b"\x50\xed\x55\xba", "t.fatbin", "00", names, sweep=True)
    assert "FATBIN[] = {80,237,85,186};" in source
    assert "cudaLibraryLoadData(&lib, FATBIN" in source and "PROBE_EXPORT" not in source


def _cuda_include() -> Path | None:
    from emu.probe.build import BuildError, cuda_home, nvcc_path
    try:
        return cuda_home(nvcc_path()) / "include"
    except BuildError:
        return None


CUDA_INCLUDE = _cuda_include()


@pytest.mark.skipif(CUDA_INCLUDE is None or shutil.which("c++") is None, reason="needs CUDA's headers (the probe's build machine)")
@pytest.mark.parametrize("path", [p for p in OBJECTS if p.stem in ("plain", "mixed", "sm80_carveout_25")][:6],
                         ids=lambda p: "/".join(p.parts[-3:]))
def test_harness_compiles(path, tmp_path):
    _assert_compiles(_generate(path, sweep=True), path, tmp_path)


def _assert_compiles(source: str, path: Path, folder: Path) -> None:
    (folder / "h.cpp").write_text(source)
    shutil.copy(RUNTIME_HEADER, folder)
    done = subprocess.run(["c++", "-std=c++17", "-fsyntax-only", f"-I{CUDA_INCLUDE}", f"-I{folder}", f"-I{path.parent}",
                           str(folder / "h.cpp")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


# Real-world exports whose wrappers take a list of tensors (a header struct of structs) or a raw fp16 scalar.
LISTS_AND_HALVES = [ROOT / "tests" / "fixtures" / "realworld" / "x86_64" / f"{name}.o"
                    for name in ("h2_elementwise_apply", "h3_two_lists", "h2_mixed_scalars")]


def test_a_list_of_tensors_gets_each_element_and_its_count():
    source = _generate(LISTS_AND_HALVES[0])
    for i in (0, 1):
        assert f"arg_inputs.elements[{i}].data = (void *)probe_alloc(" in source
        assert f"arg_inputs.elements[{i}].dynamic_shapes[1] = (int32_t)128;" in source
    assert "arg_inputs.count = 2;" in source and "(h2_elementwise_apply_Tensor_inputs_t)" not in source


def test_a_raw_fp16_scalar_gets_its_bits():
    from emu.probe.harness import _raw_16bit
    source = _generate(LISTS_AND_HALVES[2], {"h": 0.5})
    assert "[] { __half_raw raw; raw.x = 0x3800; return raw; }()" in source       # 0.5 in binary16
    assert _raw_16bit("__half_raw", -2.0).endswith("raw.x = 0xc000; return raw; }()")
    assert "raw.x = 0x3f80;" in _raw_16bit("__nv_bfloat16_raw", 1.0)              # bfloat16: float32's upper half
    assert "raw.x = 0x3f81;" in _raw_16bit("__nv_bfloat16_raw", 1.0 + 3 * 2 ** -9)  # rounded to nearest even


@pytest.mark.skipif(CUDA_INCLUDE is None or shutil.which("c++") is None, reason="needs CUDA's headers (the probe's build machine)")
@pytest.mark.parametrize("path", LISTS_AND_HALVES, ids=lambda p: p.stem)
def test_harnesses_of_lists_and_raw_halves_compile(path, tmp_path):
    _assert_compiles(_generate(path), path, tmp_path)
