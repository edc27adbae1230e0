"""Write emu/cuda/behaviours/error_text.py: what the CUDA runtime's cudaGetErrorName and cudaGetErrorString answer.

Run with a Python that has the CUDA runtime library (no GPU needed; nvidia-cuda-runtime 13.0's libcudart.so.13,
as torch installs it):  python tests/cuda/native_library_once/cudart_error_text.py path/to/libcudart.so.13
"""
import ctypes
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from stub_models.enums import CudaError  # noqa: E402

UNKNOWN = 0x7FFF_FFFF        # a value no release defines: the runtime's answer for every such code

lib = ctypes.CDLL(sys.argv[1])
lib.cudaGetErrorName.restype = lib.cudaGetErrorString.restype = ctypes.c_char_p
version = ctypes.c_int()
lib.cudaRuntimeGetVersion(ctypes.byref(version))
rows = [(int(error), lib.cudaGetErrorName(int(error)).decode(), lib.cudaGetErrorString(int(error)).decode()) for error in CudaError]
lines = [f'"""What cudaGetErrorName and cudaGetErrorString answer, by cudaError_t (CUDA runtime {version.value // 1000}.'
         f'{version.value % 1000 // 10}).', "",
         "Written by tests/cuda/native_library_once/cudart_error_text.py from the runtime library itself; a code not listed",
         f'gets UNRECOGNIZED from both.', '"""', "",
         f"UNRECOGNIZED = {lib.cudaGetErrorName(UNKNOWN).decode()!r}", "",
         "# code: (name, description)", "ERROR_TEXT: dict[int, tuple[str, str]] = {"]
lines += [f"    {code}: ({name!r}, {text!r})," for code, name, text in rows]
lines.append("}")
target = Path(__file__).resolve().parents[3] / "emu/cuda/behaviours/error_text.py"
target.write_text("\n".join(lines) + "\n")
print(f"{len(rows)} codes written to {target}")
