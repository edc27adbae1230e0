"""Export one BuildSpec inside a fresh DSL process: `python -m emu.build.worker < request.json`.

The DSL reads CUTE_DSL_ARCH once, at import, and a compile may leave state behind, so each
build gets its own interpreter with the environment a GPU-less compile needs. The request
is plain JSON (the spec, the absolute module path, the output folder); nothing from an
object file is involved here: this process only runs the user's own kernel source.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from .spec import BuildSpec


def fake_arguments(spec: BuildSpec) -> list:
    """The cute.compile arguments the spec describes: fake tensors, a fake stream, scalars, constants."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

    extents: dict[str, object] = {}

    def extent(value):
        if isinstance(value, int):
            return value
        if value not in extents:
            declared = spec.symbols.get(value)
            width = declared.width if declared else 32
            divisibility = declared.divisibility if declared else 1
            extents[value] = cute.sym_int(width, divisibility=divisibility, symbol=value)
        return extents[value]

    def numeric(name: str):
        dtype = getattr(cutlass, name, None)
        if dtype is None:
            raise ValueError(f"cutlass has no numeric type {name!r}")
        return dtype

    values = []
    for arg in spec.args:
        if arg.tensor is not None:
            t = arg.tensor
            values.append(make_fake_compact_tensor(
                numeric(t.dtype), tuple(extent(e) for e in t.shape),
                stride_order=tuple(t.stride_order) if t.stride_order is not None else None,
                assumed_align=t.align, use_32bit_stride=t.stride_32bit))
        elif arg.stream:
            values.append(make_fake_stream())
        elif arg.scalar is not None:
            values.append(numeric(arg.scalar.dtype)(arg.scalar.value))
        else:
            values.append(arg.value)
    return values


def load_function(module_path: str, name: str):
    spec = importlib.util.spec_from_file_location(f"emu_build_{Path(module_path).stem}", module_path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{module_path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(Path(module_path).parent))   # the kernel file may import its neighbours
    spec.loader.exec_module(module)
    function = getattr(module, name, None)
    if function is None:
        raise ValueError(f"{module_path} defines no {name!r}")
    return function


def build(request: dict) -> None:
    import cutlass.cute as cute

    spec = BuildSpec.model_validate(request["spec"])
    out_dir = Path(request["out_dir"])
    function = load_function(request["module_path"], spec.function)
    compiled = cute.compile(function, *fake_arguments(spec), options=spec.options.compile_options())
    prefix = spec.export_prefix()
    compiled.export_to_c(str(out_dir), prefix, prefix)
    (out_dir / f"{prefix}.kernel_info.json").write_text(json.dumps(compiled.kernel_info, indent=2) + "\n")


if __name__ == "__main__":
    build(json.loads(sys.stdin.read()))
