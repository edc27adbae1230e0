"""The CUDA runtime model the stubs act on, as state plus behaviours.

- `runtime.py`: the state of one object run (`CudaRuntime`) and the typed snapshot it leaves
  (`RuntimeSnapshot`, the trace's `state`).
- `behaviours/`: what each wrapper does, one module per area (device, library, attributes, launch,
  resources) and one table, `BEHAVIOURS`, from symbol to behaviour.
- `loading.py`: which image of the export's fatbin a device runs, as the driver picks it;
  `kernel_attributes.py`: a loaded kernel's attributes from its cubin (emu/gpu_binary/cubin.py);
  `launch_checks.py`: the driver's launch checks; `occupancy.py`: the occupancy calculation;
  `cluster_occupancy.py`: cudaOccupancyMaxActiveClusters from the profile's measured table;
  `kernel_images.py`: what `inspect` shows of each kernel.
- `profile.py`, `profiles/`: device profiles (h200 measured and rebuilt by `profiles/build.py`;
  a100 and b200 from cited figures); `config.py`: what a scenario may configure.
"""
