"""The Apache TVM-FFI export form: `__tvm_ffi_<name>` entries, found (`export.py`), described (`signature.py`,
the compiled signature the entry quotes in its errors) and given arguments (`arguments.py`, the one argument
form of scenarios, `trace --args` and the API; `dlpack.py`, the DLPack codes those arguments carry)."""
