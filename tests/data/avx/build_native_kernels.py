"""Export a few upstream CuTe DSL kernels for the build machine's CPU, to see which VEX forms host code uses.

These objects feed the VEX mnemonic list (`vex_mnemonics.py`) and are not committed (the
real-world corpus in tests/fixtures/realworld/ is, with its own build script), except
host_fma_math, committed in tests/data/avx/host_fma/ with its native run.

Command (nvidia-cutlass-dsl 4.8.0, no GPU; CUTLASS examples from a checkout of NVIDIA/cutlass):
    CUDA_VISIBLE_DEVICES='' CUTE_DSL_ARCH=sm_90a CUTE_DSL_NO_CACHE=1 \\
        python tests/data/avx/build_native_kernels.py <cutlass>/examples/python/CuTeDSL OUT_DIR [--host native|x86_64]

`native` passes no `--host-target` (what users ship: the loaders use this CPU's features);
`x86_64` builds the portable twin of each kernel.  Each kernel is built in its own process.
"""
import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

HOST_TARGETS = {"native": "", "x86_64": "--host-target 'llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64'"}
KERNELS = ("hopper_dense_gemm", "hopper_fmha", "host_float_math", "host_fma_math")


def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(kernel: str, examples: Path, out: Path, host: str) -> None:
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    from cutlass.cute.typing import sym_int

    options = f"--gpu-arch sm_90a {HOST_TARGETS[host]}".strip()
    dyn = lambda: sym_int(divisibility=16)   # noqa: E731
    sys.path.insert(0, str(examples))
    if kernel == "hopper_dense_gemm":
        gemm = _module(examples / "cute/hopper/kernel/dense_gemm/dense_gemm.py", "dense_gemm")
        op = gemm.HopperWgmmaGemmKernel(cutlass.Float32, (128, 128), (1, 1))
        a = make_fake_compact_tensor(cutlass.Float16, (dyn(), dyn(), dyn()), stride_order=(1, 0, 2), assumed_align=16)
        b = make_fake_compact_tensor(cutlass.Float16, (dyn(), dyn(), dyn()), stride_order=(1, 0, 2), assumed_align=16)
        c = make_fake_compact_tensor(cutlass.Float16, (dyn(), dyn(), dyn()), stride_order=(1, 0, 2), assumed_align=16)
        compiled = cute.compile(op, a, b, c, make_fake_stream(), options=options)
    elif kernel == "hopper_fmha":
        fmha = _module(examples / "cute/hopper/kernel/attention/fmha.py", "fmha")
        op = fmha.HopperFusedMultiHeadAttentionForward(cutlass.Float32, cutlass.Float32, (64, 128, 128), False,
                                                       fmha.fmha_utils.MaskEnum.WINDOW_MASK)
        # (s, d, h_r, h_k, b) as the example permutes (b, s, h_k, h_r, d)
        def qkvo(d=128):
            return make_fake_compact_tensor(cutlass.Float16, (dyn(), d, dyn(), dyn(), dyn()),
                                            stride_order=(3, 0, 1, 2, 4), assumed_align=16)
        lse = make_fake_compact_tensor(cutlass.Float32, (dyn(), 1, dyn(), dyn(), dyn()),
                                       stride_order=(3, 0, 1, 2, 4), assumed_align=16)
        compiled = cute.compile(op, qkvo(), qkvo(), qkvo(), qkvo(), lse, cutlass.Float32(0.125 * 1.4427),
                                cutlass.Float32(0.125), cutlass.Float32(1.0), None, None, make_fake_stream(),
                                options=options)
    elif kernel == "host_fma_math":
        compiled = _host_fma_math(options)
    else:
        compiled = _host_float_math(options)
    compiled.export_to_c(str(out), kernel, kernel)
    (out / f"{kernel}.kernel_info.json").write_text(json.dumps(compiled.kernel_info, indent=2) + "\n")


def _host_float_math(options: str):
    """A launch whose host code does the float scalar math attention launches do (scales, ceil of ratios)."""
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    from cutlass.cute.typing import sym_int

    @cute.kernel
    def scale(x: cute.Tensor, factor: cutlass.Float32, bias: cutlass.Float32):
        tid = cute.arch.thread_idx()[0]
        x[tid] = x[tid] * factor + bias

    @cute.jit
    def launch(x: cute.Tensor, softmax_scale: cutlass.Float32, ratio: cutlass.Float64, stream: cuda.CUstream):
        log2_scale = softmax_scale * cutlass.Float32(1.4426950408889634)
        rows = cutlass.Int32(cutlass.Float64(x.shape[0]) * ratio)
        half = cutlass.Float32(x.shape[0]) / softmax_scale
        scale(x, log2_scale, half).launch(grid=(rows // 128 + 1, 1, 1), block=(128, 1, 1), stream=stream)

    x = make_fake_compact_tensor(cutlass.Float32, (sym_int(divisibility=16),), assumed_align=16)
    return cute.compile(launch, x, cutlass.Float32(0.5), cutlass.Float64(1.5), make_fake_stream(), options=options)


def _host_fma_math(options: str):
    """A launch whose host code uses fused multiply-adds (vfmadd* on an FMA CPU, fmaf/fma calls on x86-64).

    The grid shows the fused results' low bits: grid.x holds the fraction bits of a binary32
    fma of the extent, grid.y those of a binary64 one, so a result off by one ulp changes it.
    The committed object and the native run it is compared with: tests/data/avx/host_fma/.
    """
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    from cutlass.cute.typing import sym_int

    @cute.kernel
    def scale(x: cute.Tensor, factor: cutlass.Float32, bias: cutlass.Float32):
        tid = cute.arch.thread_idx()[0]
        x[tid] = x[tid] * factor + bias

    @cute.jit
    def launch(x: cute.Tensor, a: cutlass.Float32, b: cutlass.Float32, c: cutlass.Float32, d: cutlass.Float64,
               e: cutlass.Float64, stream: cuda.CUstream):
        n = cutlass.Float32(x.shape[0])
        s = cute.math.fma(a, b, c)
        g = cute.math.fma(n, cutlass.Float32(0.3), cutlass.Float32(1.7)) + s
        h = cute.math.fma(cutlass.Float64(g), cutlass.Float64(1.0 / 3.0), d) + e
        gx = cutlass.Int64((g - cutlass.Float32(cutlass.Int32(g))) * cutlass.Float32(16777216.0))
        hx = cutlass.Int64((h - cutlass.Float64(cutlass.Int64(h))) * cutlass.Float64(4503599627370496.0))
        grid = (cutlass.Int32(gx % 60000 + 1), cutlass.Int32(hx % 60000 + 1), 1)
        scale(x, s, g).launch(grid=grid, block=(128, 1, 1), stream=stream)

    x = make_fake_compact_tensor(cutlass.Float32, (sym_int(divisibility=16),), assumed_align=16)
    return cute.compile(launch, x, cutlass.Float32(0.5), cutlass.Float32(1.5), cutlass.Float32(2.0),
                        cutlass.Float64(1.25), cutlass.Float64(3.0), make_fake_stream(), options=options)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", type=Path, help="examples/python/CuTeDSL of a NVIDIA/cutlass checkout")
    parser.add_argument("out", type=Path)
    parser.add_argument("--host", choices=sorted(HOST_TARGETS), default="native")
    parser.add_argument("--kernel", choices=KERNELS, help="build one kernel in this process")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.kernel:
        build(args.kernel, args.examples.resolve(), args.out, args.host)
        return 0
    failed = 0
    for kernel in KERNELS:
        done = subprocess.run([sys.executable, __file__, str(args.examples), str(args.out), "--host", args.host,
                               "--kernel", kernel])
        print(f"{kernel}: {'ok' if done.returncode == 0 else 'FAILED'}", flush=True)
        failed += done.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
