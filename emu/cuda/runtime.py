"""The CUDA runtime's state for one object run, and the typed snapshot a run leaves.

`CudaRuntime` holds what the driver would hold: the device profile, the current device, the
loaded libraries and their kernels (each kernel's attributes per device, first derived from
its cubin by `kernel_attributes`), the launches that were accepted and every live handle.
Behaviours (emu/cuda/behaviours/) change it only through the public methods here; the
attribute setters' rules are in `set_attribute` because a scenario's overrides and both
setter wrappers share them. `snapshot()` is the `RuntimeSnapshot` that traces carry and that
`check` and scenario expectations read.
"""
from __future__ import annotations

from dataclasses import dataclass, field


from stub_models.enums import SETTABLE_FUNC_ATTRIBUTES, CudaError, DeviceAttribute, FuncAttribute

from ..support.hotpath import build_record
from ..run.state import KernelState, LaunchRecord, RuntimeSnapshot

from .config import RuntimeConfig
from .kernel_attributes import KernelAttributes, kernel_attributes
from .launch_checks import NO_LIMITS, LaunchLimits, launch_limits
from .loading import LibraryImage, load_verdict
from .profile import load_profile

A = FuncAttribute
D = DeviceAttribute
E = CudaError
_ATTRIBUTE_NAMES = {int(a): a.name for a in FuncAttribute}
_name_of = _ATTRIBUTE_NAMES.__getitem__      # a snapshot names every attribute of every kernel: mapped in C
_NO_IMAGE: dict[str, KernelAttributes] = {}     # profile name -> attributes of a kernel without a cubin
Result = tuple[int, dict[str, int]]      # what a behaviour returns: the error code, values for out-parameters
_NONNEGATIVE = frozenset({A.REQUIRED_CLUSTER_WIDTH, A.REQUIRED_CLUSTER_HEIGHT, A.REQUIRED_CLUSTER_DEPTH})
# What set_attribute reads on every setter call, as module names (a class attribute of an enum costs several look-ups)
_SUCCESS, _INVALID_VALUE = E.SUCCESS, E.INVALID_VALUE
_MAX_DYNAMIC_SHARED, _SHARED_SIZE, _CARVEOUT = A.MAX_DYNAMIC_SHARED_SIZE_BYTES, A.SHARED_SIZE_BYTES, A.PREFERRED_SHARED_MEMORY_CARVEOUT
_MUST_BE_SET, _SCHEDULING_POLICY = A.CLUSTER_SIZE_MUST_BE_SET, A.CLUSTER_SCHEDULING_POLICY_PREFERENCE
_OPTIN_SHARED = D.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN


@dataclass
class Kernel:
    name: str
    handle: int
    library: int
    attributes: dict[int, dict[int, int]]   # device -> attribute -> value
    unknown: frozenset[int] = frozenset()
    limits: LaunchLimits = NO_LIMITS        # what the cubin fixes about its launches (.reqntid, .maxclusterrank)


@dataclass
class CudaRuntime:
    config: RuntimeConfig
    kernel_names: list[str]
    binary: LibraryImage | None = None
    current_device: int = 0
    libraries: dict[int, list[str]] = field(default_factory=dict)
    kernels: dict[int, Kernel] = field(default_factory=dict)
    launches: list[LaunchRecord] = field(default_factory=list)
    next_handle: int = 0x10000
    used_libraries: set[int] = field(default_factory=set)   # loaded by cudaLibraryLoadData or asked for a kernel
    resources: dict[str, dict[int, dict]] = field(default_factory=lambda: {
        "stream": {}, "event": {}, "device_memory": {}, "host_memory": {}})   # live handles by kind

    def __post_init__(self) -> None:
        self.profile = load_profile(self.config.profile)
        self.device_attributes = {**self.profile.device_attributes, **self.config.device_attributes}
        self.current_device = self.config.current_device
        self.load_error, self._kernel_facts = load_verdict(self.binary, self.profile)
        self._kernel_by_name: dict[tuple[int, str], Kernel] = {}
        self.register_library(self.config.library_handle, first_kernel=self.config.first_kernel_handle)

    # -- devices ----------------------------------------------------------------
    def valid_device(self, device: int) -> bool:
        return 0 <= device < self.config.device_count

    def device_attribute(self, attribute: DeviceAttribute) -> int:
        return self.device_attributes[attribute]

    def fresh_handle(self) -> int:
        self.next_handle += 0x10
        return self.next_handle

    # -- libraries and kernels ----------------------------------------------------
    def register_library(self, handle: int, first_kernel: int | None = None) -> None:
        """A library of the export's kernels; without kernels when no image runs on the profile's devices
        (the H200 loads such a library lazily and fails each kernel lookup: measured_h200_loading.jsonl)."""
        names = list(self.kernel_names) if self.load_error is None else []
        self.libraries[handle] = names
        for offset, name in enumerate(names):
            kernel_handle = first_kernel + offset if first_kernel is not None else self.fresh_handle()
            initial = self.initial_attributes(name)
            facts = self._kernel_facts.get(name) or self._kernel_facts.get("*")
            kernel = Kernel(name, kernel_handle, handle, {d: dict(initial.values) for d in range(self.config.device_count)},
                            initial.unknown, launch_limits(facts.cubin if facts is not None else None))
            self.kernels[kernel_handle] = kernel
            self._kernel_by_name[(handle, name)] = kernel

    def initial_attributes(self, name: str) -> KernelAttributes:
        overrides = {**self.config.kernel_attributes.get("*", {}), **self.config.kernel_attributes.get(name, {})}
        facts = self._kernel_facts.get(name) or self._kernel_facts.get("*")
        if overrides or self.config.device_attributes:
            return kernel_attributes(facts, self.profile, self.device_attributes, overrides)
        derived = facts.derived if facts is not None else _NO_IMAGE    # the common case: once per image and profile
        attributes = derived.get(self.profile.name)
        if attributes is None:
            attributes = derived[self.profile.name] = kernel_attributes(facts, self.profile, self.device_attributes, {})
        return attributes

    def load_library(self) -> int:
        """A fresh library of the export's kernels."""
        handle = self.fresh_handle()
        self.register_library(handle)
        self.used_libraries.add(handle)
        return handle

    def kernel(self, handle: int) -> Kernel | None:
        return self.kernels.get(handle)

    def kernel_in(self, library: int, name: str) -> Kernel | None:
        self.used_libraries.add(library)
        return self._kernel_by_name.get((library, name))

    def unload_library(self, library: int) -> bool:
        if library not in self.libraries:
            return False
        del self.libraries[library]
        for handle in [h for h, k in self.kernels.items() if k.library == library]:
            del self.kernels[handle]
        self.used_libraries.discard(library)
        return True

    # -- the attribute rules, as the H200 answered (FIELD_NOTES section 5, tests/data/facts/h200) ----
    def set_attribute(self, kernel: Kernel, attr: int, value: int, device: int) -> CudaError:
        """CLUSTER_SIZE_MUST_BE_SET is refused whatever the value; NON_PORTABLE_CLUSTER_SIZE_ALLOWED takes any."""
        if attr not in SETTABLE_FUNC_ATTRIBUTES or attr == _MUST_BE_SET:
            return _INVALID_VALUE
        attributes = kernel.attributes[device]
        if attr == _MAX_DYNAMIC_SHARED:
            limit = self.device_attributes.get(_OPTIN_SHARED, 0) - attributes[_SHARED_SIZE]
            if not 0 <= value <= limit:
                return _INVALID_VALUE
        elif attr == _CARVEOUT and not -1 <= value <= 100:
            return _INVALID_VALUE
        elif attr == _SCHEDULING_POLICY and not 0 <= value <= 2:
            return _INVALID_VALUE
        elif attr in _NONNEGATIVE and (value < 0 or kernel.limits.fixed_cluster and value != attributes[attr]):
            return _INVALID_VALUE                      # a cluster shape compiled into the cubin cannot be changed
        attributes[attr] = value
        return _SUCCESS

    # -- launches and other resources ------------------------------------------------
    def record_launch(self, launch: LaunchRecord) -> None:
        self.launches.append(launch)

    def create(self, kind: str, values: dict) -> int:
        handle = self.fresh_handle()
        self.resources[kind][handle] = values
        return handle

    def destroy(self, kind: str, handle: int) -> bool:
        return self.resources[kind].pop(handle, None) is not None

    def snapshot(self) -> RuntimeSnapshot:
        """The state a scenario can assert on."""
        # built without re-validation (every value comes from this state): a snapshot ends every run
        return build_record(RuntimeSnapshot, dict(
            profile=self.profile.name, device_count=self.config.device_count, current_device=self.current_device,
            libraries={str(h): names for h, names in self.libraries.items()}, load_error=self.load_error,
            kernels=[build_record(KernelState, dict(name=k.name, handle=k.handle, library=k.library,
                                                    devices={str(d): dict(zip(map(_name_of, attrs), attrs.values()))
                                                             for d, attrs in k.attributes.items()},
                                                    unknown=sorted(_ATTRIBUTE_NAMES[a] for a in k.unknown) if k.unknown else []))
                     for k in self.kernels.values() if k.library in self.used_libraries],
            launches=self.launches,
            live={kind: [f"{h:#x}" for h in handles] for kind, handles in self.resources.items() if handles}))
