"""Copy each export's args_spec (and its fatbin) into the test data, with expectations.

Run with the DSL's Python (it unpickles our own freshly made exports to get the ground truth):
  .venv-dsl-4.8.0/bin/python tests/data/args_spec/extract_samples.py OBJ...     # from the repository root
Writes tests/data/args_spec/<prefix>.b64 + <prefix>.expected.json and tests/data/fatbin/<prefix>.fatbin.
"""
import base64
import inspect
import json
import pickle
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def symbols(elf: bytes):
    """(name, bytes) for every sized or args_spec symbol of an ELF64 LE relocatable object."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    for sec in secs:
        if sec[1] != 2:  # SHT_SYMTAB
            continue
        strtab = secs[sec[6]]
        for off in range(sec[4], sec[4] + sec[5], 24):
            name_off, _info, _other, shndx, value, size = struct.unpack_from("<IBBHQQ", elf, off)
            end = elf.index(b"\0", strtab[4] + name_off)
            name = elf[strtab[4] + name_off:end].decode()
            if 0 < shndx < shnum and secs[shndx][1] != 8:
                start = secs[shndx][4] + value
                yield name, elf[start:start + size]


def render(obj):
    if obj is inspect.Parameter.empty:
        return None
    if isinstance(obj, str):
        return obj
    return f"{obj.__module__}.{obj.__qualname__}" if isinstance(obj, type) else repr(obj)


def main(paths):
    for path in map(Path, paths):
        syms = dict(symbols(path.read_bytes()))
        spec_name = next(n for n in syms if n.endswith("_args_spec"))
        prefix = spec_name[: -len("_args_spec")]
        text = syms[spec_name]
        sig = pickle.loads(base64.b64decode(text.rstrip(b"\0")))  # trusted: our own export
        expected = {
            "parameters": [
                {"name": p.name, "kind": p.kind.name, "annotation": render(p.annotation),
                 "default": None if p.default is inspect.Parameter.empty else repr(p.default)}
                for p in sig.parameters.values()],
            "return_annotation": render(sig.return_annotation),
        }
        (HERE / f"{prefix}.b64").write_bytes(text)
        (HERE / f"{prefix}.expected.json").write_text(json.dumps(expected, indent=1) + "\n")
        (HERE.parent / "fatbin" / f"{prefix}.fatbin").write_bytes(syms["kernels_binary"])
        print(prefix, len(text), len(syms["kernels_binary"]))


if __name__ == "__main__":
    main(sys.argv[1:])
