"""Native ground truth for nvidia-cutlass-dsl 4.3 exports: the harness, called as a 4.3 header calls them.

tests/oracles/native_harness.py writes harnesses for the 4.4-and-later header (`<P>_Kernel_Module_t`,
`cute_dsl_<P>_wrapper`, loaders that take a pointer to the library slot).  A 4.3 export differs
(emu/dsl/generations.py): `P_cuda_load(CUlibrary lib)` and `P_cuda_load_to_device(CUlibrary lib, int)` take
the handle itself, `_mlir_P_cuda_load{,_to_device}` get the handle's address in their packed
arguments, the header declares `<P>_Kernel_Metadata_t` and `<P>_wrapper`, and its
Kernel_Metadata_Load runs `_mlir_P_cuda_init` and then `_mlir_P_cuda_load` (stopping on an error:
its error check exits) before driver calls of its own.  This harness makes every entry call that
way, reusing ground_truth.py's stubs, tables, answers and comparison; `module_load` is the
header's object calls (init, then load), since the header's own driver calls are not in the object.
"""
from __future__ import annotations

import json
from pathlib import Path

from tests.oracles import native_harness as gt

HERE = Path(__file__).resolve().parent


def wrapped_symbols(fixture: gt.Fixture) -> list[str]:
    p = fixture.prefix
    return [f"_mlir_{p}_cuda_init", f"_mlir_{p}_cuda_load", f"_mlir_{p}_cuda_load_to_device",
            gt.launch_symbol(fixture.header.read_text())]


def _launch_lines(prefix: str, header_text: str) -> list[str]:
    """ground_truth's launch statements (tensor structs, stream), calling the 4.3 wrapper `<P>_wrapper`."""
    old, new = f"int32_t {prefix}_wrapper(", f"int32_t cute_dsl_{prefix}_wrapper("
    if old not in header_text:
        raise ValueError(f"no {prefix}_wrapper in the 4.3 header")
    _, lines = gt._launch_call(header_text.replace(old, new))
    return [line.replace(f"cute_dsl_{prefix}_wrapper(", f"{prefix}_wrapper(") for line in lines]


def _wrapper(symbol: str, entry: str, device_index: int | None, ret_index: int) -> list[str]:
    args = ('char args_[32]; snprintf(args_, sizeof args_, "{\\"device\\": %d}", *(int32_t *)packed[' + str(device_index) + ']);'
            if device_index is not None else 'const char *args_ = "{}";')
    return [f"void __real_{symbol}(void **packed);",
            f"void __wrap_{symbol}(void **packed) {{",
            f'    const char *saved = gt_enter("{entry}"); {args}',
            f"    *(int32_t *)packed[{ret_index}] = -1; __real_{symbol}(packed);",
            f"    gt_leave(saved, args_, *(int32_t *)packed[{ret_index}]);", "}"]


def harness_source(fixture: gt.Fixture) -> str:
    p, header_text = fixture.prefix, fixture.header.read_text()
    names = list(fixture.kernel_names)
    launch = gt.launch_symbol(header_text)
    out = ["#include <stdio.h>", "#include <stdint.h>", "#include <string.h>", '#include "cuda.h"', '#include "stubs.h"',
           f"const int gt_kernel_count = {len(names)};",
           "const char *const gt_kernel_names[] = {" + ", ".join(json.dumps(n) for n in names) + "};",
           "const int64_t gt_kernel_defaults[][NUM_FUNC_ATTRIBUTES] = {"
           + ", ".join("{" + ", ".join(map(str, gt.kernel_defaults(gt.static_smem(i)))) + "}" for i in range(len(names))) + "};"]
    out += gt.function_table(fixture.functions, set(wrapped_symbols(fixture)))
    out += ["#define CUTE_DSL_CUDA_ERROR_CHECK(err) { CUresult status_ = (err); (void)status_; }",
            f'#include "{fixture.header.name}"', f"static {p}_Kernel_Metadata_t module;"]
    out += _wrapper(f"_mlir_{p}_cuda_init", "mlir_cuda_init", None, 1)
    out += _wrapper(f"_mlir_{p}_cuda_load", "mlir_cuda_load", None, 1)
    out += _wrapper(f"_mlir_{p}_cuda_load_to_device", "mlir_cuda_load_to_device", 1, 2)
    out += [f"void __real_{launch}(void **args, int32_t num_args);",
            f"void __wrap_{launch}(void **args, int32_t num_args) {{",
            '    const char *saved = gt_enter("launch"); char args_[32];',
            '    snprintf(args_, sizeof args_, "{\\"num_args\\": %d}", num_args);',
            f"    *(int32_t *)args[num_args - 1] = -1; __real_{launch}(args, num_args);",
            "    gt_leave(saved, args_, *(int32_t *)args[num_args - 1]);", "}",
            f"int {p}_cuda_init(void **); int {p}_cuda_load(void *); int {p}_cuda_load_to_device(void *, int);",
            f"void _mlir_{p}_cuda_load_to_device(void **);",
            "int main(int argc, char **argv) {",
            "    for (int i = 1; i < argc; i++) gt_parse_injection(argv[i]);",
            f"    module.module = (CUlibrary)(uintptr_t){gt.LIBRARY_HANDLE:#x};",
            f"    gt_register_library({gt.LIBRARY_HANDLE:#x}, {gt.FIRST_KERNEL_HANDLE:#x});",
            "    CUlibrary *libraryPtr = &module.module;",
            "    int32_t ret, device_id; const char *saved;",
            "    setvbuf(stdout, NULL, _IOFBF, 1 << 16);"]
    for spec in gt.entry_specs(has_mlir_cuda_load=True):
        name, device = spec.name, spec.device or 0
        if name == "cuda_init":
            out.append(f'    saved = gt_enter("cuda_init"); ret = {p}_cuda_init((void **)&module.module); gt_leave(saved, "{{}}", ret);')
        elif name == "cuda_load":
            out.append(f'    saved = gt_enter("cuda_load"); ret = {p}_cuda_load(module.module); gt_leave(saved, "{{}}", ret);')
        elif name == "cuda_load_to_device":
            out.append(f'    saved = gt_enter("cuda_load_to_device"); ret = {p}_cuda_load_to_device(module.module, {device});'
                       f' gt_leave(saved, "{{\\"device\\": {device}}}", ret);')
        elif name == "mlir_cuda_init":        # the header's initArgs
            out.append(f"    {{ void *packed[2] = {{&libraryPtr, &ret}}; _mlir_{p}_cuda_init(packed); }}")
        elif name == "mlir_cuda_load":        # the header's loadArgs: the handle's address
            out.append(f"    {{ void *packed[2] = {{libraryPtr, &ret}}; _mlir_{p}_cuda_load(packed); }}")
        elif name == "mlir_cuda_load_to_device":
            out.append(f"    {{ device_id = {device}; void *packed[3] = {{libraryPtr, &device_id, &ret}};"
                       f" _mlir_{p}_cuda_load_to_device(packed); }}")
        elif name == "module_load":           # Kernel_Metadata_Load's calls into the object
            out.append(f'    saved = gt_enter("module_load");'
                       f" {{ void *init[2] = {{&libraryPtr, &ret}}; _mlir_{p}_cuda_init(init); }}"
                       f" if (ret == 0) {{ void *load[2] = {{libraryPtr, &ret}}; _mlir_{p}_cuda_load(load); }}"
                       " gt_current_entry = saved;")
        else:
            out += ["    {"] + ["        " + line for line in _launch_lines(p, header_text)] + ["    }"]
    out += ["    return 0;", "}"]
    return "\n".join(out) + "\n"


def build(fixture: gt.Fixture, tools: gt.Toolchain, work: Path, stubs: Path) -> Path:
    """Write the 4.3 harness for `fixture`, link it with the stubs and the object, return the executable."""
    work.mkdir(parents=True, exist_ok=True)
    source, exe = work / "harness.c", work / "harness"
    source.write_text(harness_source(fixture))
    wraps = [f"-Wl,--wrap={symbol}" for symbol in wrapped_symbols(fixture)]
    gt._compile([tools.compiler, *tools.flags, "-O0", "-w", "-I", str(HERE / "native_43_include"), "-I", str(gt.NATIVE / "include"),
                 "-I", str(gt.NATIVE), "-I", str(fixture.header.parent), "-o", str(exe), str(source), str(stubs),
                 str(fixture.obj), *wraps], f"linking the 4.3 harness for {fixture.obj}")
    return exe
