"""Whether each known device profile would accept a launch the wrapper made: `launch_feasibility`.

One launch (the `_cudaLaunchKernelEx` or `_cudaLaunchKernel` call the run recorded) is judged on every
profile of PROFILES by the one launch validation (launch_checks.explain_launch), with the kernel's
attributes on that profile:
- the run's own profile: the runtime's kernel as it stands after the launch entry (the attributes the
  launch behaviour itself judged, scenario overrides included);
- another profile: the refusal of the binary when its device runs no image of it (209, with why), else
  the kernel as that device loads it (kernel_attributes, from the image it runs), with the settable
  attributes the loaders changed on the run's device set again through CudaRuntime.set_attribute (a set
  the device refuses is the answer). MAX_DYNAMIC_SHARED_SIZE_BYTES set to the run device's largest value
  (opt-in limit less static shared memory, as the CuTe DSL loaders set it from the queried opt-in) is set
  to that device's largest value. A scenario's device attribute overrides apply to the run's profile only.
"""
from __future__ import annotations

from stub_models.enums import SETTABLE_FUNC_ATTRIBUTES, CudaError, DeviceAttribute, FuncAttribute

from .config import RuntimeConfig
from .kernel_attributes import NO_CUBIN
from .launch_checks import LaunchRequest, explain_launch, launch_attributes
from .profile import PROFILES, load_profile
from .runtime import CudaRuntime

A = FuncAttribute
E = CudaError
OPTIN = DeviceAttribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
LAUNCH_SYMBOLS = frozenset({"_cudaLaunchKernelEx", "_cudaLaunchKernel"})


def launch_request(symbol: str, args: dict) -> tuple[int, LaunchRequest] | None:
    """(the kernel handle, the request) of a recorded launch call, or None where its config was not readable."""
    if symbol == "_cudaLaunchKernel":
        return args["func"], LaunchRequest((args["gridDimX"], args["gridDimY"], args["gridDimZ"]),
                                           (args["blockDimX"], args["blockDimY"], args["blockDimZ"]), args["sharedMem"])
    config = args.get("config")
    if not isinstance(config, dict):
        return None
    return args["func"], LaunchRequest(tuple(config["gridDim"]), tuple(config["blockDim"]), config["dynamicSmemBytes"],
                                       launch_attributes(config.get("attrs", [])))


def launch_feasibility(runtime: CudaRuntime, symbol: str, args: dict) -> list[dict] | None:
    """Per profile: {profile, device_name, measured, accepted, error, error_name, reason, caveat}; None for an
    unreadable call."""
    found = launch_request(symbol, args)
    if found is None:
        return None
    func, request = found
    kernel = runtime.kernel(func)
    name = kernel.name if kernel is not None else (runtime.kernel_names[0] if len(runtime.kernel_names) == 1 else None)
    verdicts = []
    for profile_name in PROFILES:
        caveat = None
        if profile_name == runtime.profile.name:
            error, reason, unknown = _on_run_profile(runtime, kernel, request)
        else:
            error, reason, unknown = _on_profile(runtime, kernel, name, profile_name, request)
            if kernel is None and error is not E.NO_KERNEL_IMAGE_FOR_DEVICE:
                caveat = (f"the run's profile {runtime.profile.name} did not load the kernel, so what the loaders set "
                          f"on it is not known: judged with its attributes as loaded; run with --profile {profile_name} "
                          "for the loaders' own answer")
        if unknown:
            caveat = "; ".join(filter(None, (caveat, _unknown_caveat(unknown))))
        profile = load_profile(profile_name)
        verdicts.append(dict(profile=profile_name, device_name=profile.device_name, measured=profile.measured,
                             accepted=error is E.SUCCESS, error=int(error), error_name=_name(error), reason=reason,
                             caveat=caveat))
    return verdicts


_CONFIGS: dict[str, RuntimeConfig] = {}


def _config(profile_name: str) -> RuntimeConfig:
    config = _CONFIGS.get(profile_name)
    if config is None:
        config = _CONFIGS[profile_name] = RuntimeConfig(profile=profile_name)
    return config


def _name(error: CudaError) -> str:
    """cudaErrorInvalidClusterSize for INVALID_CLUSTER_SIZE."""
    return "cudaSuccess" if error is E.SUCCESS else "cudaError" + error.name.title().replace("_", "")


def _unknown_caveat(unknown: frozenset[int]) -> str:
    """A verdict that rests on attributes emu does not know (kernel_attributes.NO_CUBIN)."""
    return (f"judged with the profile's defaults for attributes emu does not know for this kernel ({NO_CUBIN}): "
            f"{', '.join(A(a).name for a in sorted(unknown))}; the device's answer may differ")


# (the launch's answer, why, the kernel's attributes emu does not know)
Verdict = tuple[CudaError, str | None, frozenset[int]]


def _on_run_profile(runtime: CudaRuntime, kernel, request: LaunchRequest) -> Verdict:
    if kernel is None:
        if runtime.load_error is not None:
            return E.NO_KERNEL_IMAGE_FOR_DEVICE, runtime.load_error, frozenset()
        return E.INVALID_DEVICE_FUNCTION, "the launched function is not a kernel the runtime loaded", frozenset()
    return (*explain_launch(request, kernel.attributes[runtime.current_device], runtime.profile,
                            runtime.device_attributes, kernel.limits), kernel.unknown)


def _on_profile(runtime: CudaRuntime, kernel, name: str | None, profile_name: str, request: LaunchRequest) -> Verdict:
    """Judged once per GPU binary, profile, kernel, the loaders' changes and launch: every run of an object asks again."""
    changes = _changes(runtime, kernel) if kernel is not None else ()
    key = (profile_name, name, changes, request.grid, request.block, request.dynamic_smem,
           tuple(sorted(request.attrs.items())))
    held = _JUDGED.get(id(runtime.binary))
    if held is None or held[0] is not runtime.binary:
        if len(_JUDGED) >= _JUDGED_MAX:
            _JUDGED.clear()
        held = _JUDGED[id(runtime.binary)] = (runtime.binary, {})
    verdict = held[1].get(key)
    if verdict is None:
        verdict = held[1][key] = _judge(runtime.binary, name, profile_name, changes, request)
    return verdict


_JUDGED: dict[int, tuple[object, dict]] = {}     # id of a GPU binary -> (the binary, key -> verdict)
_JUDGED_MAX = 256


def _changes(runtime: CudaRuntime, kernel) -> tuple[tuple[int, int, bool], ...]:
    """(attribute, value, set to the device's largest value) for each settable attribute the loaders changed."""
    now = kernel.attributes[runtime.current_device]
    initial = runtime.initial_attributes(kernel.name).values     # what the run's kernel was loaded with
    largest = runtime.device_attributes.get(OPTIN, 0) - now.get(A.SHARED_SIZE_BYTES, 0)
    return tuple((attr, now[attr], attr == A.MAX_DYNAMIC_SHARED_SIZE_BYTES and now[attr] == largest)
                 for attr in sorted(SETTABLE_FUNC_ATTRIBUTES) if attr in now and now[attr] != initial.get(attr))


def _judge(binary, name: str | None, profile_name: str, changes, request: LaunchRequest) -> Verdict:
    other = CudaRuntime(_config(profile_name), [name] if name else [], binary)
    if other.load_error is not None:
        return E.NO_KERNEL_IMAGE_FOR_DEVICE, other.load_error, frozenset()
    loaded = other.kernel_in(other.config.library_handle, name) if name else None
    if loaded is None:
        return E.INVALID_DEVICE_FUNCTION, "the launched function is not a kernel of the export", frozenset()
    for attr, value, at_largest in changes:
        if at_largest:                 # set from the queried opt-in limit: that device's largest value
            value = other.device_attributes.get(OPTIN, 0) - loaded.attributes[0][A.SHARED_SIZE_BYTES]
        error = other.set_attribute(loaded, attr, value, 0)
        if error is not E.SUCCESS:
            return error, (f"setting {A(attr).name} to {value}, as the loaders did on the run's device, fails there "
                           f"({_name(error)}); the loaders would not reach the launch"), loaded.unknown
    return (*explain_launch(request, loaded.attributes[0], other.profile, other.device_attributes, loaded.limits),
            loaded.unknown)
