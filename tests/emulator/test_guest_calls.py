"""A stub that calls guest code (emu.emulator.guest_calls): the calls run within one Machine.call, with the
calling convention kept, and what goes wrong inside them is a fault that names the stub.

The C objects call cuda_dialect_init_library_once (emu.cuda.behaviours.helpers), the one stub that calls back,
with callbacks of their own; compiled for x86-64 and AArch64 with the real compilers.
"""
from __future__ import annotations

import pytest

from emu.binary.memory_map import GUEST_CALL_RESUME
from emu.cuda.config import RuntimeConfig
from tests import oracles
from tests.emulator.guest_run import COMPILERS, GuestRun, compile_c

ARCHS = sorted(COMPILERS)
PRELUDE = """
typedef int (*load_fn)(void **);
typedef int (*load_to_device_fn)(void **, int);
typedef void (*set_error_fn)(const char *, const char *);
int cuda_dialect_init_library_once(void **slot, load_fn load, load_to_device_fn per_device, set_error_fn set_error);
int puts(const char *s);
int printf(const char *format, ...);
static void *slot, *other_slot;
int t_cuda_init(void *library) { return 0; }      /* what makes the object an export emu loads */
int t_cuda_load(void *library) { return 0; }
"""

# Callee-saved registers and the stack survive a calling-back stub; each callee gets its arguments and a
# frame aligned as the ABI says (frame address 16-aligned with frame pointers on both architectures).
ABI = PRELUDE + """
static unsigned long misaligned, seen_devices;
__attribute__((noinline)) static int load(void **library) {
    misaligned |= (unsigned long)__builtin_frame_address(0) & 15;
    *library = (void *)0x1000;
    return 0;
}
__attribute__((noinline)) static int per_device(void **library, int device) {
    misaligned |= (unsigned long)__builtin_frame_address(0) & 15;
    seen_devices = seen_devices * 10 + device + 1;
    return *library == (void *)0x1000 ? 0 : 1;
}
__attribute__((noinline)) static void set_error(const char *kind, const char *message) { }
long keeps(long a, long b, long c, long d, long e, long f, long g, long h) {
    /* values live across the call in callee-saved registers and on the stack */
    long x = a * 3, y = b * 5, z = c * 7, w = d * 11, v = e * 13, u = f * 17, t = g * 19, s = h * 23;
    int status = cuda_dialect_init_library_once(&slot, load, per_device, set_error);
    return (x + y + z + w + v + u + t + s) * 1000000 + status * 100000 + (slot == (void *)0x1000) * 10000
           + seen_devices * 10 + misaligned;
}
"""


def _abi_expected(devices: int) -> int:
    values = [1, 2, 3, 4, 5, 6, 7, 8]
    weighted = sum(v * w for v, w in zip(values, (3, 5, 7, 11, 13, 17, 19, 23)))
    seen = int("".join(str(d + 1) for d in range(devices)) or 0)
    return weighted * 1000000 + 10000 + seen * 10


@pytest.mark.oracle(oracles.CC)
@pytest.mark.parametrize("flags", [("-O2", "-fno-pic", "-fno-omit-frame-pointer"), ("-O1", "-fPIC", "-fno-omit-frame-pointer")])
@pytest.mark.parametrize("arch", ARCHS)
def test_callee_saved_registers_stack_and_alignment_survive_the_callbacks(tmp_path, arch, flags):
    run = GuestRun(compile_c(ABI, tmp_path, arch, flags=flags), RuntimeConfig(device_count=3))
    outcome = run.call("keeps", 1, 2, 3, 4, 5, 6, 7, 8)
    assert outcome.fault is None and outcome.returned == _abi_expected(3)
    assert [c.symbol for c in run.calls] == ["cudaGetDeviceCount", "cuda_dialect_init_library_once"]
    assert run.calls[-1].caller.startswith("keeps+") and run.calls[0].caller == "cuda_dialect_init_library_once"


CALLBACKS = PRELUDE + """
static int mode;
static int load(void **library) {
    if (mode == 1) return *(volatile int *)0x10;                       /* a fault inside the callback */
    if (mode == 2) for (;;) ;                                         /* a runaway loop */
    if (mode == 3) {                                                  /* nested: load succeeds inside, fails outside */
        mode = 5;
        return cuda_dialect_init_library_once(&other_slot, load, 0, (set_error_fn)puts) + 209;
    }
    if (mode == 6) return cuda_dialect_init_library_once(&other_slot, load, 0, (set_error_fn)puts);   /* no end */
    *library = (void *)0x1000;
    return mode == 4 ? 209 : 0;
}
int run_mode(int which, int null_callback) {          /* null_callback 1: load is NULL; 2: set_error is */
    mode = which;
    return cuda_dialect_init_library_once(&slot, null_callback == 1 ? (load_fn)0 : load, 0,
                                          null_callback == 2 ? (set_error_fn)0 : (set_error_fn)puts);
}
int unmapped_slot(void) { return cuda_dialect_init_library_once((void **)0x10, load, 0, 0); }
int after(void) { return slot == (void *)0x1000 ? 7 : 8; }
void jump_to(unsigned long address) { ((void (*)(void))address)(); }
"""


@pytest.fixture(params=ARCHS)
def callbacks(request, tmp_path):
    return GuestRun(compile_c(CALLBACKS, tmp_path, request.param))


def test_a_fault_inside_a_callback_names_the_stub_that_called_back(callbacks):
    outcome = callbacks.call("run_mode", 1, 0)
    fault = outcome.fault
    assert fault.kind == "unmapped_read" and fault.address == 0x10 and fault.location.startswith("load+")
    assert "; inside load (load+0x0), called back by cuda_dialect_init_library_once (called from run_mode+" in fault.message
    again = callbacks.call("run_mode", 0, 0)            # the machine starts clean after it
    assert again.fault is None and again.returned == 0 and callbacks.call("after").returned == 7


def test_a_runaway_callback_meets_the_instruction_budget(callbacks):
    fault = callbacks.call("run_mode", 2, 0, budget=20_000).fault
    assert fault.kind == "instruction_budget" and fault.location.startswith("load+")
    assert "called back by cuda_dialect_init_library_once" in fault.message


def test_a_runaway_callback_meets_the_timeout(callbacks):
    fault = callbacks.call("run_mode", 2, 0, budget=1 << 40, timeout_s=0.2).fault
    assert fault.kind == "timeout" and "called back by cuda_dialect_init_library_once" in fault.message


def test_a_null_callback_is_a_clear_fault(callbacks):
    fault = callbacks.call("run_mode", 0, 1).fault
    assert fault.kind == "unmapped_fetch" and fault.address == 0 and fault.location.startswith("run_mode+")
    assert fault.message.startswith("cuda_dialect_init_library_once (called from run_mode+")
    assert "calls its load at 0x0, which is NULL" in fault.message and "inside" not in fault.message


def test_a_callback_may_call_a_stub_that_calls_back_and_an_import_is_a_callback(callbacks):
    outcome = callbacks.call("run_mode", 3, 0)    # load calls the helper (on another slot), which calls load again
    assert outcome.fault is None and outcome.returned == -1
    symbols = [(c.symbol, c.caller.split("+")[0], c.ret) for c in callbacks.calls]
    assert symbols == [("cuda_dialect_init_library_once", "load", 0),                     # inner: load succeeds
                       ("cudaGetErrorString", "cuda_dialect_init_library_once", symbols[1][2]),   # outer: 209 from load;
                       ("cudaGetErrorName", "cuda_dialect_init_library_once", symbols[2][2]),     # asked again: 0
                       ("puts", "cuda_dialect_init_library_once", 13),                    # set_error is puts: an import
                       ("cuda_dialect_init_library_once", "run_mode", -1)]
    assert [c.args for c in callbacks.calls[1:4]] == [{"error": 0, "text": "no error"}, {"error": 0, "text": "cudaSuccess"},
                                                      {"s": "RuntimeError", "text": "RuntimeError\n"}]
    assert callbacks.call("after").returned == 8


def test_a_runaway_recursion_through_a_stub_is_a_stack_fault(callbacks):
    fault = callbacks.call("run_mode", 6, 0).fault      # the guest's own push or emu's return address runs off the stack
    assert fault.kind == "unmapped_write" and len(fault.message) < 1000
    assert "called back by cuda_dialect_init_library_once (called from load+" in fault.message
    assert " more calls back; inside load (load+0x0), called back by cuda_dialect_init_library_once (called from run_mode+" in fault.message


def test_a_failing_load_reports_through_set_error_and_leaves_the_slot_empty(callbacks):
    outcome = callbacks.call("run_mode", 4, 0)
    assert outcome.fault is None and outcome.returned == -1 and callbacks.call("after").returned == 8
    puts, = [c for c in callbacks.calls if c.symbol == "puts"]
    assert puts.args["s"] == "RuntimeError"


def test_reaching_the_resume_address_without_a_waiting_stub_is_a_fault(callbacks):
    fault = callbacks.call("jump_to", GUEST_CALL_RESUME).fault
    assert fault.kind == "unmapped_fetch" and "with no stub waiting for a callee" in fault.message


def test_a_null_callback_reached_after_others_ran_is_a_clear_fault(callbacks):
    fault = callbacks.call("run_mode", 4, 2).fault          # load fails (three times), then set_error is NULL
    assert fault.kind == "unmapped_fetch" and "calls its set_error at 0x0, which is NULL" in fault.message
    assert [c.symbol for c in callbacks.calls] == ["cudaGetErrorString", "cudaGetErrorName"]     # never returned: unrecorded


def test_an_unreadable_slot_is_the_stubs_failure(callbacks):
    fault = callbacks.call("unmapped_slot").fault
    assert fault.kind == "stub_error" and fault.message.startswith(
        "unmapped_slot+0x") and "calls cuda_dialect_init_library_once: cannot read 8 bytes at 0x10: unmapped memory" in fault.message
