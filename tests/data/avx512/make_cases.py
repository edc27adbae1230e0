"""Regenerate cases.json: AVX-512 snippets, their bytes, and what an AVX-512 CPU leaves after each.

Command, from the repository root, on an x86-64 Linux machine with AVX-512 F/BW/DQ/VL (this
repository's own machine has none; the committed file was made on the device machine the
project borrows, an H200 host: `cpu` in the JSON says which CPU), with gcc and objcopy:
    python3 tests/data/avx512/make_cases.py
(`--assemble-only` writes the cases without results, anywhere gcc assembles AVX-512).

Each case is assembled alone (`gcc -c`, Intel syntax; `objcopy -O binary -j .text`) for the bytes the
emulator runs, and inside a harness function that loads zmm0-31, k0-k7, the general registers and
MXCSR from a state block, runs the snippet on this CPU and stores them back; the harness also gets a
512-byte, 64-aligned memory block, rbx = its address (stored as offset 0).  The initial state is
seeded: zmm0-7 hold small signed dwords and zmm8-15 small signed qwords (so that compares come out
both ways), the rest random; the first 256 bytes of memory hold small signed dwords.
The forms are those LLVM emitted in real exports built for AVX-512 CPUs (tests/data/avx512/README.md),
plus the unsigned scalar conversions AVX-512 adds; REFUSED lists forms the emulator must refuse.
"""
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
GPRS = ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"] + [f"r{i}" for i in range(8, 16)]
SEED = 512
STATE_BYTES = 2048 + 64 + 128 + 8          # zmm0-31, k0-7, general registers, MXCSR (+ pad)

# the floor division of two int32 extents by a power of two that LLVM vectorised (elementwise_add, pdl_pair)
FLOOR_DIVISION = """vpbroadcastq xmm1, qword ptr [rbx+256]
vpbroadcastq xmm2, qword ptr [rbx+264]
vpcmpeqd xmm3, xmm3, xmm3
vmovd xmm5, r11d
vpinsrd xmm5, xmm5, r10d, 0x1
vpsrad xmm6, xmm5, 0x1f
vpsrlvd xmm6, xmm6, xmm0
vpaddd xmm6, xmm5, xmm6
vpand xmm7, xmm6, xmm2
vpcmpneqd k0, xmm5, xmm7
vpcmpgtd k1, xmm5, xmm3
kandw k1, k1, k0
vpsravd xmm5, xmm6, xmm1
vpmovm2d xmm6, k1
vpsubd xmm5, xmm5, xmm6"""
# quack's GEMMs: a broadcast add, then a compare whose mask is read by a general register
QUACK_TILES = """vmovd xmm0, r8d
vpinsrd xmm0, xmm0, r9d, 1
vpaddd xmm0, xmm0, dword ptr [rbx+rcx*4]{1to4}
vpsrad xmm1, xmm0, 0x1f
vpsrld xmm1, xmm1, 0x1d
vpaddd xmm0, xmm0, xmm1
vpsrad xmm0, xmm0, 0x3
vpshufd xmm1, xmm0, 0x55
vpcmpled k0, xmm0, xmm1
kmovd eax, k0
kmovd r11d, k0"""

CASES = [
    ("floor_division", FLOOR_DIVISION),
    ("quack_tiles", QUACK_TILES),
    ("compare_eq_gt", "vpcmpgtd k1, xmm5, xmm3\nvpcmpeqd k2, xmm0, xmm1\nvpcmpgtd k3, ymm2, ymm4\n"
                      "vpcmpeqd k4, ymm6, [rbx+32]\nvpcmpgtd k5, xmm7, [rbx+16]\nvpcmpgtd k6, zmm1, zmm2\n"
                      "vpcmpeqd k7, xmm17, xmm18\nvpcmpgtd k0, xmm2, xmm2"),
    ("compare_eq_gt_q", "vpcmpgtq k1, xmm8, xmm9\nvpcmpeqq k2, ymm10, ymm11\nvpcmpgtq k3, ymm12, [rbx+64]\n"
                        "vpcmpeqq k4, zmm13, zmm14\nvpcmpgtq k5, xmm20, xmm8"),
    *[(f"compare_{kind}{size}_predicates",
       "\n".join(f"vpcmp{kind}{size} k{p}, {reg}{2 + p % 3}, {reg}{5 - p % 2}, {p}" for p in range(8)))
      for kind in ("", "u") for size, reg in (("d", "xmm"), ("q", "ymm"))],
    ("compare_predicates_wide", "vpcmpd k1, zmm0, zmm1, 1\nvpcmpud k2, ymm3, [rbx+96], 2\nvpcmpq k3, zmm9, zmm10, 5\n"
                                "vpcmpuq k4, xmm11, xmm12, 6\nvpcmpd k5, xmm4, xmm4, 4\nvpcmpd k6, xmm16, xmm0, 0\n"
                                "vpcmpnltd k7, xmm5, xmm6\nvpcmpleud k0, ymm6, ymm7"),
    ("mask_logic_w", "kandw k1, k2, k3\nkorw k4, k5, k6\nkxorw k7, k1, k2\nkandnw k0, k3, k4\nkxnorw k5, k6, k7\n"
                     "knotw k6, k0\nkandw k2, k2, k2"),
    ("mask_logic_bdq", "kandb k1, k2, k3\nkord k4, k5, k6\nkxorq k7, k1, k2\nkandnd k0, k3, k4\nkxnorb k5, k6, k7\n"
                       "knotq k6, k0\nknotb k3, k7\nkandq k2, k2, k5\nkorb k1, k6, k0\nkxnorq k4, k3, k3"),
    ("mask_to_general", "kmovd eax, k1\nkmovw ecx, k2\nkmovb edx, k3\nkmovq r8, k4\nkmovd r14d, k0\nkmovw r15d, k7"),
    ("mask_to_vector", "vpmovm2d xmm0, k1\nvpmovm2d ymm1, k2\nvpmovm2d zmm2, k3\nvpmovm2q xmm3, k4\n"
                       "vpmovm2q ymm20, k5\nvpmovm2q zmm5, k0\nvpmovm2d xmm31, k7"),
    ("broadcast_arithmetic", "vpaddd xmm0, xmm0, dword ptr [rbx+4]{1to4}\nvpaddd ymm1, ymm2, dword ptr [rbx+8]{1to8}\n"
                             "vpsubd xmm3, xmm20, dword ptr [rbx+12]{1to4}\nvpaddq xmm5, xmm6, qword ptr [rbx+16]{1to2}\n"
                             "vpsubq ymm7, ymm8, qword ptr [rbx+24]{1to4}\nvpaddd zmm9, zmm10, dword ptr [rbx+28]{1to16}\n"
                             "vpaddd xmm21, xmm22, dword ptr [rbx+rcx*8+260]{1to4}"),
    ("zmm_moves", "vmovups zmm0, [rbx+8]\nvmovaps zmm1, [rbx+64]\nvmovups [rbx+128], zmm2\nvmovdqu64 [rbx+192], zmm17\n"
                  "vmovdqu64 zmm18, [rbx+256]\nvmovaps [rbx+320], zmm3"),
    ("unsigned_to_float", "vcvtusi2sd xmm0, xmm1, rax\nvcvtusi2ss xmm2, xmm3, rdx\nvcvtusi2sd xmm4, xmm4, ecx\n"
                          "vcvtusi2ss xmm5, xmm6, r8d\nvcvtusi2ss xmm7, xmm7, dword ptr [rbx+8]\n"
                          "vcvtusi2sd xmm8, xmm9, qword ptr [rbx+16]\nvcvtusi2ss xmm20, xmm21, r9\n"
                          "mov r10, -1\nvcvtusi2ss xmm10, xmm10, r10\nvcvtusi2sd xmm11, xmm11, r10\n"
                          "mov r10d, 0x80000001\nvcvtusi2ss xmm12, xmm12, r10d\nxor r11d, r11d\nvcvtusi2sd xmm13, xmm13, r11"),
]
# under each rounding mode (and DAZ), the conversions to and from unsigned integers
MXCSR_MODES = (0x1F80, 0x3F80, 0x5F80, 0x7F80, 0x1FC0)
FLOATS = ("0x3fe0000000000000", "0xbfe8000000000000", "0xbff0000000000000", "0x43f0000000000000",
          "0x43efffffffffffff", "0x41efffffffe00000", "0x41f0000000000000", "0x7ff8000000000000",
          "0x0000000000000001", "0x4059066666666666", "0xfff0000000000000", "0x3ff8000000000000")
FLOATS32 = ("0x3f000000", "0xbf400000", "0xbf800000", "0x5f800000", "0x5f7fffff", "0x4f800000",
            "0x4f7fffff", "0x7fc00000", "0x00000001", "0x42c83333", "0xff800000", "0x3fc00000")
TO_UNSIGNED = "\n".join(
    [f"mov rax, {v}\nvmovq xmm0, rax\nvcvttsd2usi rcx, xmm0\nvcvttsd2usi edx, xmm0\nmov [rbx+{400 + 8 * i}], rcx\n"
     f"mov [rbx+{496 + 0}], edx\nxor [rbx+{304 + 4 * i}], edx" for i, v in enumerate(FLOATS[:8])]
    + [f"mov eax, {v}\nvmovd xmm1, eax\nvcvttss2usi rcx, xmm1\nvcvttss2usi edx, xmm1\nadd [rbx+{400 + 8 * i}], rcx\n"
       f"xor [rbx+{352 + 4 * i}], edx" for i, v in enumerate(FLOATS32[:8])]
    + ["vcvttsd2usi r8, qword ptr [rbx+24]\nvcvttss2usi r9d, dword ptr [rbx+28]"])
TO_UNSIGNED_REST = "\n".join(
    [f"mov rax, {v}\nvmovq xmm0, rax\nvcvttsd2usi rcx, xmm0\nvcvttsd2usi edx, xmm0\nmov [rbx+{400 + 8 * i}], rcx\n"
     f"xor [rbx+{304 + 4 * i}], edx" for i, v in enumerate(FLOATS[8:])]
    + [f"mov eax, {v}\nvmovd xmm1, eax\nvcvttss2usi rcx, xmm1\nvcvttss2usi edx, xmm1\nadd [rbx+{400 + 8 * i}], rcx\n"
       f"xor [rbx+{352 + 4 * i}], edx" for i, v in enumerate(FLOATS32[8:])])
TO_FLOAT = CASES.pop()[1]
for _mxcsr in MXCSR_MODES:
    CASES += [(f"unsigned_to_float_mxcsr_{_mxcsr:x}", TO_FLOAT), (f"float_to_unsigned_mxcsr_{_mxcsr:x}", TO_UNSIGNED),
              (f"float_to_unsigned_rest_mxcsr_{_mxcsr:x}", TO_UNSIGNED_REST)]
# flash-attn-4's forward kernel built for TVM-FFI on an AVX-512 CPU: which power of two a 64-bit value is, from
# eight compares per zmm, their masks joined by kunpckbw / kunpckwd (its tables, .rodata+128..511, written first)
FA4_TABLES = [[(0x8000_0000_7FFF_0000 << k) & 0x8000_0000_7FFF_0000 | 0x8000_0000_0000_0000 for k in range(8)],
              [(0x8000_0000_7FFF_FF00 << k) & 0x8000_0000_7FFF_FF00 | 0x8000_0000_0000_0000 for k in range(8)],
              [(0x8000_0000_7FFF_FFFF << k) & 0x8000_0000_7FFF_FFFF | 0x8000_0000_0000_0000 for k in range(8)],
              [1 << k for k in range(8)], [1 << (8 + k) for k in range(8)], [1 << (16 + k) for k in range(8)]]
FA4_POWER_OF_TWO = "\n".join(
    [f"mov rax, {v:#x}\nmov [rbx+{64 * t + 8 * k}], rax" for t, table in enumerate(FA4_TABLES) for k, v in enumerate(table)]
    + [f"mov rax, {value:#x}\nvpbroadcastq zmm1, rax\nvpandq zmm2, zmm1, [rbx]\nvpandq zmm3, zmm1, [rbx+64]\n"
       "vpandq zmm1, zmm1, [rbx+128]\nvpcmpeqq k0, zmm1, [rbx+192]\nvpcmpeqq k1, zmm3, [rbx+256]\n"
       f"kunpckbw k0, k1, k0\nvpcmpeqq k1, zmm2, [rbx+320]\nkunpckwd k0, k1, k0\nkmovd eax, k0\nmov {out}, eax"
       for value, out in ((0x8000, "r8d"), (0x800000, "r9d"), (1, "r10d"), (0x30000, "r12d"),
                          (0x8000_0000_0000_0010, "r13d"))])
# added after the cases above so that their seeded initial states stay the same:
# kunpck, which flash-attn-4's forward kernel uses when its TVM-FFI object is built on an AVX-512 CPU
CASES += [
    ("fa4_power_of_two", FA4_POWER_OF_TWO),
    ("mask_unpack", "kunpckbw k1, k2, k3\nkunpckwd k4, k5, k6\nkunpckdq k7, k0, k1\nkunpckbw k0, k0, k0\n"
                    "kunpckwd k2, k2, k7\nkunpckdq k3, k3, k3\nkunpckbw k5, k6, k4"),
    ("mask_unpack_then_kmov", "kunpckbw k0, k1, k0\nkunpckwd k1, k2, k0\nkmovd eax, k1\nkunpckdq k2, k1, k0\n"
                              "kmovq rcx, k2\nkmovw edx, k0"),
]

# assembled only: forms the emulator must refuse (no export uses them), with why
REFUSED = [
    ("masked_compare", "vpcmpgtd k1{k2}, xmm1, xmm2"),
    ("broadcast_compare", "vpcmpgtd k1, xmm1, dword ptr [rbx]{1to4}"),
    ("masked_broadcast_add", "vpaddd xmm0{k1}, xmm1, dword ptr [rbx]{1to4}"),
    ("zeroing_broadcast_add", "vpaddd xmm0{k1}{z}, xmm1, dword ptr [rbx]{1to4}"),
    ("broadcast_and", "vpandd xmm0, xmm1, dword ptr [rbx]{1to4}"),
    ("kmov_from_general", "kmovw k1, eax"),
    ("kmov_mask_mask", "kmovw k1, k2"),
    ("mask_to_bytes", "vpmovm2b xmm0, k1"),
    ("vector_to_mask", "vpmovd2m k1, xmm0"),
    ("kortest", "kortestw k1, k2"),
    ("float_compare_to_mask", "vcmpps k1, xmm2, xmm3, 1"),
    ("convert_rounding", "vcvtusi2sd xmm0, xmm1, {rz-sae}, rax"),
    ("convert_float_rounding", "vcvttsd2usi rax, xmm1, {sae}"),
    ("evex_add", "{evex} vpaddd xmm1, xmm2, xmm3"),
]


def run(*cmd: str, cwd: Path) -> str:
    return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout


def snippet_bytes(asm: str, tmp: Path) -> bytes:
    (tmp / "s.S").write_text(f".intel_syntax noprefix\n{asm}\n")
    run("gcc", "-c", "s.S", "-o", "s.o", cwd=tmp)
    run("objcopy", "-O", "binary", "-j", ".text", "s.o", "s.bin", cwd=tmp)
    return (tmp / "s.bin").read_bytes()


def harness_function(i: int, asm: str) -> str:
    gpr_at = 2048 + 64
    load = [f"vmovdqu64 zmm{r}, [rdi+{64 * r}]" for r in range(32)] + [f"kmovq k{k}, [rdi+{2048 + 8 * k}]" for k in range(8)]
    load += [f"mov {g}, [rdi+{gpr_at + 8 * k}]" for k, g in enumerate(GPRS) if g not in ("rsp", "rdi")]
    store = [f"mov [rdi+{gpr_at + 8 * k}], {g}" for k, g in enumerate(GPRS) if g not in ("rsp", "rdi")]
    store += ["mov rax, [rip+g_rdi]", f"mov [rdi+{gpr_at + 8 * 7}], rax"]
    store += [f"vmovdqu64 [rdi+{64 * r}], zmm{r}" for r in range(32)] + [f"kmovq [rdi+{2048 + 8 * k}], k{k}" for k in range(8)]
    return "\n".join([
        f".globl case_{i}", ".p2align 6", f"case_{i}:",
        "push rbx", "push rbp", "push r12", "push r13", "push r14", "push r15",
        "mov [rip+g_state], rdi", f"ldmxcsr [rdi+{gpr_at + 128}]", *load, f"mov rdi, [rdi+{gpr_at + 56}]",
        asm,
        "mov [rip+g_rdi], rdi", "mov rdi, [rip+g_state]", f"stmxcsr [rdi+{gpr_at + 128}]", "ldmxcsr [rip+g_mxcsr]",
        *store, "vzeroupper",
        "pop r15", "pop r14", "pop r13", "pop r12", "pop rbp", "pop rbx", "ret", ""])


MAIN_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#define STATE %(state)d
%(decls)s
static void (*cases[])(uint8_t *) = { %(names)s };
static void hex(const uint8_t *p, int n) { putchar('"'); for (int i = 0; i < n; i++) printf("%%02x", p[i]); putchar('"'); }
int main(void) {
    static uint8_t mem[512] __attribute__((aligned(64)));
    static uint8_t s[STATE] __attribute__((aligned(64)));
    static const char *init_hex[] = { %(inits)s };
    for (unsigned c = 0; c < sizeof cases / sizeof *cases; c++) {
        uint8_t buf[STATE + 512]; uint64_t rbx;
        for (int i = 0; i < (int)sizeof buf; i++) sscanf(init_hex[c] + 2 * i, "%%2hhx", &buf[i]);
        memcpy(s, buf, STATE); memcpy(mem, buf + STATE, 512);
        rbx = (uint64_t)mem; memcpy(s + 2048 + 64 + 24, &rbx, 8);
        cases[c](s);
        memcpy(&rbx, s + 2048 + 64 + 24, 8); rbx -= (uint64_t)mem; memcpy(s + 2048 + 64 + 24, &rbx, 8);
        printf("{\"state\": "); hex(s, STATE); printf(", \"mem\": "); hex(mem, 512); printf("}\n");
    }
    return 0;
}
"""


def small(rng: random.Random, size: int, count: int) -> bytes:
    return b"".join((rng.randint(-2, 2) % (1 << (8 * size))).to_bytes(size, "little") for _ in range(count))


def initial_state(rng: random.Random, mxcsr: int) -> dict:
    zmm = [small(rng, 4, 16) if r < 8 else small(rng, 8, 8) if r < 16 else rng.randbytes(64) for r in range(32)]
    gpr = {g: rng.getrandbits(64) for g in GPRS}
    gpr.update({"rcx": 3, "rsp": 0, "rbx": 0})
    return {"zmm": [z.hex() for z in zmm], "k": [rng.getrandbits(64) for _ in range(8)], "gpr": gpr, "mxcsr": mxcsr,
            "mem": (small(rng, 4, 64) + rng.randbytes(256)).hex()}


def state_blob(st: dict) -> str:
    k = b"".join(v.to_bytes(8, "little") for v in st["k"])
    gpr = b"".join(st["gpr"][g].to_bytes(8, "little") for g in GPRS)
    return "".join(st["zmm"]) + k.hex() + gpr.hex() + st["mxcsr"].to_bytes(8, "little").hex() + st["mem"]


def parse_state(line: str) -> dict:
    rec = json.loads(line)
    raw = bytes.fromhex(rec["state"])
    gpr = {g: int.from_bytes(raw[2112 + 8 * k:2120 + 8 * k], "little") for k, g in enumerate(GPRS) if g != "rsp"}
    return {"zmm": [raw[64 * r:64 * r + 64].hex() for r in range(32)],
            "k": [int.from_bytes(raw[2048 + 8 * k:2056 + 8 * k], "little") for k in range(8)],
            "gpr": gpr, "mxcsr": int.from_bytes(raw[2240:2244], "little"), "mem": rec["mem"]}


def cpu_model() -> tuple[str, list[str]]:
    text = Path("/proc/cpuinfo").read_text().split("\n\n", 1)[0]
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    flags = fields.get("flags\t\t", fields.get("flags", "")).split()
    return fields.get("model name\t", "?").strip(), sorted(f for f in flags if f.startswith("avx512"))


def main() -> None:
    assemble_only = "--assemble-only" in sys.argv
    rng = random.Random(SEED)
    cases = []
    with tempfile.TemporaryDirectory() as work:
        tmp = Path(work)
        for name, asm in CASES:
            mode = re.search(r"mxcsr_([0-9a-f]+)$", name)
            cases.append({"name": name, "asm": asm, "code": snippet_bytes(asm, tmp).hex(),
                          "init": initial_state(rng, int(mode.group(1), 16) if mode else 0x1F80)})
        refused = [{"name": n, "asm": a, "code": snippet_bytes(a, tmp).hex()} for n, a in REFUSED]
        out = {"command": "python3 tests/data/avx512/make_cases.py  # from the repository root, on an AVX-512 CPU",
               "toolchain": run("gcc", "--version", cwd=tmp).splitlines()[0], "refused": refused}
        if not assemble_only:
            model, flags = cpu_model()
            missing = {"avx512f", "avx512bw", "avx512dq", "avx512vl"} - set(flags)
            if missing:
                sys.exit(f"this CPU ({model}) lacks {sorted(missing)}: run with --assemble-only, or on an AVX-512 CPU")
            out["cpu"] = {"model": model, "avx512_flags": flags}
            asm = [".intel_syntax noprefix", ".text"] + [harness_function(i, c["asm"]) for i, c in enumerate(cases)]
            asm += [".data", "g_state: .quad 0", "g_rdi: .quad 0", ".p2align 2", "g_mxcsr: .long 0x1F80",
                    '.section .note.GNU-stack,"",@progbits']
            (tmp / "h.S").write_text("\n".join(asm) + "\n")
            (tmp / "main.c").write_text(MAIN_C % {
                "state": STATE_BYTES, "decls": "\n".join(f"void case_{i}(uint8_t *);" for i in range(len(cases))),
                "names": ", ".join(f"case_{i}" for i in range(len(cases))),
                "inits": ", ".join(f'"{state_blob(c["init"])}"' for c in cases)})
            run("gcc", "-O0", "main.c", "h.S", "-o", "h", cwd=tmp)
            lines = run("./h", cwd=tmp).splitlines()
            if len(lines) != len(cases):
                sys.exit(f"the harness printed {len(lines)} results for {len(cases)} cases")
            for case, line in zip(cases, lines):
                case["expected"] = parse_state(line)
    out["cases"] = cases
    (HERE / "cases.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"{len(cases)} cases{'' if assemble_only else ' run on ' + out['cpu']['model']}, {len(refused)} refused forms")


if __name__ == "__main__":
    main()
