"""Regenerate cases.json: AVX snippets, their bytes, and reference results from the real CPU.

Command, from the repository root (needs gcc, objcopy and an AVX2 CPU; the tests need neither):
    python tests/data/avx/make_cases.py

Each native case is assembled twice with `gcc -c` (Intel syntax): alone, to get the bytes
the emulator runs (`objcopy -O binary -j .text`), and inside a harness function that
loads ymm0-15 and the general registers from a state block, runs the snippet on this
CPU, and stores them back; the harness also gets a 512-byte, 64-aligned memory block.
rbx = mem, rsi = mem + 256, r9 = mem + 128 ("ptr" registers, stored as offsets).
The harness also loads MXCSR from the case (0x1F80 unless it says otherwise) and stores it
after the snippet; the floating-point cases of fp_cases.py (FMA, VEX.256, compares,
permutes, F16C, the twins under each rounding mode and DAZ/FTZ) come after the others,
so regenerating keeps the earlier cases byte for byte.
EVEX (AVX-512) and failing cases are assembled only, and the tests check them
against the instruction's documented semantics.
"""

import json
import random
import subprocess
import tempfile
from pathlib import Path

from fp_cases import FP_CASES, FP_SEED

HERE = Path(__file__).resolve().parent
GPRS = ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"] + [f"r{i}" for i in range(8, 16)]
PTRS = {"rbx": 0, "rsi": 256, "r9": 128}
MXCSR_DEFAULT = 0x1F80
RIP_DATA = "jmp 2f\n.p2align 5\n1: .byte " + ",".join(str(i * 7 % 256) for i in range(32)) + "\n2:"

# (name, assembly, needs_sites): needs_sites = contains VEX.128 instructions Unicorn runs itself
NATIVE = [
    ("vmovups_load", "vmovups ymm0, [rbx+32]", False),
    ("vmovups_store_unaligned", "vmovups [rbx+40], ymm1", False),
    ("vmovups_rr", "vmovups ymm2, ymm3", False),
    ("vmovaps_load_sib", "vmovaps ymm4, [rbx+rcx*8+40]", False),
    ("vmovaps_store_negdisp", "vmovaps [rsi-64], ymm5", False),
    ("vmovaps_rr_high", "vmovaps ymm15, ymm8", False),
    ("vmovdqu_high_regs", "vmovdqu ymm12, [r9+rcx*4+1]\nvmovdqu [r9+100], ymm13", False),
    ("vmovdqa", "vmovdqa ymm14, [rbx+96]\nvmovdqa [rbx+160], ymm8\nvmovdqa ymm9, ymm10", False),
    ("vmovupd_vmovapd", "vmovupd ymm6, [rbx+7]\nvmovapd [rbx+192], ymm6\nvmovapd ymm11, [rbx+64]", False),
    ("rip_relative", "vmovups ymm7, [rip+1f]\nvmovaps ymm9, [rip+1f]\n" + RIP_DATA, False),
    ("vlddqu", "vlddqu ymm10, [rbx+3]", False),
    ("nontemporal", "vmovntps [rbx+64], ymm11\nvmovntpd [rbx+96], ymm1\nvmovntdq [rbx+128], ymm3\n"
                    "vmovntdqa ymm2, [rbx+224]\nsfence", False),
    ("export_copy_pattern", "vmovaps ymm0, [rbx+rcx*1+29]\nvmovaps xmm1, [rbx+rcx*1+61]\n"
                            "vmovups [rsi+8], ymm0\nvmovups [rsi+40], xmm1\nvzeroupper", True),
    ("copy_loop", "xor eax, eax\n3: vmovups ymm0, [rbx+rax]\nvmovups [rsi+rax], ymm0\n"
                  "add rax, 32\ncmp rax, 128\njne 3b\nvzeroupper", True),
    ("vmov_xmm_zero_upper", "vmovups xmm0, [rbx+8]\nvmovaps [rbx+16], xmm1\nvmovdqa xmm2, xmm3\n"
                            "vmovdqu xmm12, [r9+5]", True),
    ("xor_zero_idioms", "vxorps ymm0, ymm0, ymm0\nvxorpd ymm1, ymm1, ymm1\nvpxor ymm12, ymm12, ymm12", False),
    ("xor_general", "vxorps ymm1, ymm2, ymm3\nvxorpd ymm4, ymm5, [rbx+32]\nvpxor ymm13, ymm14, ymm15", False),
    ("xor_xmm_zeroes_ymm", "vxorps xmm3, xmm3, xmm3\nvpxor xmm5, xmm6, xmm7\nvxorpd xmm8, xmm9, [rbx+16]\n"
                           "vmovups [rbx], ymm3", True),
    ("and_or_andn", "vandps ymm0, ymm1, ymm2\nvorps ymm3, ymm4, [rbx]\nvandnps ymm5, ymm6, ymm7\n"
                    "vpand ymm8, ymm9, ymm10\nvpor ymm11, ymm12, ymm13\nvpandn ymm14, ymm15, [rbx+64]", False),
    ("pcmpeq_ones", "vpcmpeqd ymm0, ymm0, ymm0\nvpcmpeqq ymm1, ymm2, ymm2\nvpcmpeqb ymm3, ymm3, ymm4\n"
                    "vmovdqu ymm6, [rbx]\nvpcmpeqw ymm7, ymm6, [rbx]\nvpcmpeqd ymm8, ymm6, [rbx+2]", False),
    ("pcmpeq_xmm", "vpcmpeqd xmm0, xmm0, xmm0\nvpcmpeqb xmm1, xmm2, xmm2", True),
    ("broadcast_mem", "vbroadcastss ymm0, [rbx+4]\nvbroadcastsd ymm3, [rbx+8]\nvpbroadcastb ymm6, [rbx+1]\n"
                      "vpbroadcastw ymm9, [rbx+2]\nvpbroadcastd ymm11, [rbx+12]\nvpbroadcastq ymm14, [rbx+16]\n"
                      "vbroadcastf128 ymm15, [rbx+32]\nvbroadcasti128 ymm2, [rbx+48]", False),
    ("broadcast_reg", "vbroadcastss ymm1, xmm2\nvbroadcastsd ymm4, xmm5\nvpbroadcastb ymm7, xmm8\n"
                      "vpbroadcastw ymm10, xmm11\nvpbroadcastd ymm12, xmm13\nvpbroadcastq ymm0, xmm15", False),
    ("broadcast_xmm", "vbroadcastss xmm1, [rbx+12]\nvpbroadcastd xmm2, xmm3\nvpbroadcastb xmm4, xmm5\n"
                      "vpbroadcastq xmm6, [rbx+24]", False),
    ("vinsert", "vinsertf128 ymm0, ymm1, xmm2, 1\nvinsertf128 ymm3, ymm4, [rbx+16], 0\n"
                "vinserti128 ymm5, ymm6, xmm7, 0\nvinserti128 ymm8, ymm9, [rbx+8], 1\n"
                "vinsertf128 ymm10, ymm10, xmm10, 1", False),
    ("vextract", "vextractf128 xmm0, ymm1, 1\nvextractf128 [rbx+8], ymm2, 1\n"
                 "vextracti128 xmm3, ymm4, 0\nvextracti128 [rbx+40], ymm5, 1", False),
    ("vperm2x128", "vperm2f128 ymm0, ymm1, ymm2, 0x31\nvperm2f128 ymm3, ymm4, [rbx+32], 0x02\n"
                   "vperm2i128 ymm5, ymm6, ymm7, 0x88\nvperm2i128 ymm8, ymm9, ymm10, 0x13", False),
    ("vzeroupper", "vzeroupper", True),
    ("vzeroall", "vzeroall", True),
    ("vmovd_vmovq", "vmovd xmm0, eax\nvmovd edx, xmm1\nvmovq xmm2, rax\nvmovq r8, xmm3\nvmovq xmm4, [rbx+8]\n"
                    "vmovq [rbx+24], xmm5\nvmovq xmm6, xmm7\nvmovd xmm8, [rbx+4]\nvmovd [rbx+12], xmm9\n"
                    "vmovd r10d, xmm10", True),
    ("vmovss_vmovsd", "vmovss xmm0, [rbx+4]\nvmovss [rbx+20], xmm1\nvmovss xmm2, xmm3, xmm4\n"
                      "vmovsd xmm5, [rbx+8]\nvmovsd [rbx+40], xmm6\nvmovsd xmm7, xmm8, xmm9", True),
    # VEX.128 arithmetic, carried out by its SSE twin (emu/arch/x86_64/avx/sse_twin.py); the forms
    # real host-CPU exports use (tests/data/avx/vex_mnemonics.txt) and their neighbours.
    ("twin_float_scalar", "vmulss xmm0, xmm1, dword ptr [rbx+4]\nvaddss xmm2, xmm3, xmm4\n"
                          "vsubsd xmm5, xmm6, qword ptr [rbx+8]\nvdivss xmm7, xmm8, xmm9\nvdivsd xmm10, xmm11, xmm12\n"
                          "vmulsd xmm13, xmm14, xmm15\nvsqrtss xmm1, xmm2, xmm3\nvsqrtsd xmm4, xmm4, [rbx+24]", True),
    ("twin_float_packed", "vaddps xmm0, xmm1, xmm2\nvsubpd xmm3, xmm4, [rbx+16]\nvmulps xmm5, xmm6, xmm7\n"
                          "vdivpd xmm8, xmm9, xmm10\nvsqrtps xmm11, xmm12\nvhaddps xmm13, xmm14, xmm15\n"
                          "vdpps xmm1, xmm2, xmm3, 0xf1\nvaddsubps xmm4, xmm5, xmm6\nvhsubpd xmm7, xmm8, [rbx+16]", True),
    ("twin_operand_clash", "vmovups ymm0, [rbx]\nvsubss xmm0, xmm1, xmm0\nvdivps xmm3, xmm4, xmm3\n"
                           "vaddsd xmm5, xmm5, xmm5\nvpsubd xmm6, xmm7, xmm6\nvunpcklps xmm8, xmm9, xmm8", True),
    ("twin_convert", "vcvtsi2ss xmm0, xmm1, eax\nvcvtsi2sd xmm2, xmm3, rcx\nvcvtsi2ss xmm4, xmm5, dword ptr [rbx+16]\n"
                     "vcvttsd2si eax, xmm6\nvcvttss2si rdx, xmm7\nvcvtss2sd xmm8, xmm9, xmm10\n"
                     "vcvtsd2ss xmm11, xmm12, xmm13\nvcvtdq2ps xmm14, xmm15\nvcvttps2dq xmm1, [rbx+32]\n"
                     "vcvtps2pd xmm2, xmm3\nvcvtdq2pd xmm4, xmm5\nvcvtsi2sd xmm6, xmm6, r8\nvcvttsd2si r10, xmm6\n"
                     "vcvtsd2si r11, xmm6\nvcvtpd2ps xmm7, xmm4\nvcvtsi2sd xmm9, xmm9, qword ptr [rbx+48]", True),
    ("twin_round", "and eax, 0xffff\nmov ecx, 7\nvcvtsi2ss xmm2, xmm2, ecx\nvcvtsi2ss xmm1, xmm1, eax\n"
                   "vdivss xmm1, xmm1, xmm2\nvcvtsi2sd xmm3, xmm3, eax\nvcvtsi2sd xmm4, xmm4, ecx\n"
                   "vdivsd xmm3, xmm3, xmm4\nvroundss xmm5, xmm6, xmm1, 9\nvroundss xmm7, xmm7, xmm1, 10\n"
                   "vroundsd xmm8, xmm9, xmm3, 11\nvroundsd xmm10, xmm10, xmm3, 4\nvshufps xmm11, xmm1, xmm1, 0\n"
                   "vroundps xmm12, xmm11, 1\nvcvttss2si r8d, xmm1\nvcvtss2si r10d, xmm1\nvcvtsd2si r11, xmm3", True),
    ("twin_compare", "vucomiss xmm0, xmm1\nsetb al\nsete cl\nsetp dl\nvcomisd xmm2, [rbx+8]\nseta r8b\n"
                     "vucomiss xmm3, xmm3\nsetnp r10b\nvcmpltss xmm3, xmm4, xmm5\nvcmpeqps xmm6, xmm7, xmm7\n"
                     "vcmpunordsd xmm8, xmm9, xmm10\nvcmpnlepd xmm11, xmm12, [rbx+32]\nvpcmpgtd xmm13, xmm14, xmm15\n"
                     "vpcmpgtq xmm1, xmm2, xmm3\nvptest xmm4, xmm5\nsetz r11b\nsetc r12b", True),
    ("twin_min_max", "vminss xmm0, xmm1, xmm2\nvmaxsd xmm3, xmm4, [rbx+8]\nvminps xmm5, xmm6, xmm7\n"
                     "vmaxpd xmm8, xmm9, xmm10\nvpminsd xmm11, xmm12, xmm13\nvpmaxud xmm14, xmm15, xmm1\n"
                     "vpminub xmm2, xmm3, [rbx+16]\nvpmaxsw xmm4, xmm5, xmm6", True),
    ("twin_integer", "vpaddd xmm0, xmm1, xmm0\nvpand xmm2, xmm1, [rbx+16]\nvpandn xmm3, xmm2, xmm0\n"
                     "vpcmpgtd xmm4, xmm0, xmm3\nvpinsrd xmm5, xmm0, r14d, 1\nvpmovzxdq xmm6, xmm0\n"
                     "vpshufd xmm7, xmm0, 0xe8\nvpsrad xmm8, xmm0, 0x1f\nvpsrld xmm9, xmm1, 25\nvpsrad xmm10, xmm10, 7\n"
                     "vpmulld xmm11, xmm12, xmm13\nvpsubq xmm14, xmm15, xmm1\nvpsllq xmm15, xmm2, 3\n"
                     "vpslldq xmm1, xmm3, 5\nvpsrlq xmm2, xmm4, xmm5\nvpmuludq xmm3, xmm6, [rbx+32]\n"
                     "vpmovsxwd xmm4, qword ptr [rbx+40]\nvpabsd xmm5, xmm6\nvpaddq xmm6, xmm7, xmm8", True),
    ("twin_shuffle", "vshufps xmm0, xmm1, xmm2, 0x1b\nvunpcklps xmm3, xmm4, xmm5\nvunpckhpd xmm6, xmm7, [rbx+16]\n"
                     "vpshufb xmm8, xmm9, xmm10\nvinsertps xmm11, xmm12, xmm13, 0x5c\nvmovhlps xmm14, xmm15, xmm1\n"
                     "vmovlhps xmm2, xmm3, xmm4\nvblendps xmm5, xmm6, xmm7, 5\nvpunpckldq xmm8, xmm9, xmm10\n"
                     "vpalignr xmm11, xmm12, xmm13, 4\nvmovddup xmm1, xmm2\nvpblendw xmm3, xmm4, xmm5, 0x33\n"
                     "vpackssdw xmm6, xmm7, xmm8\nvpunpckhqdq xmm9, xmm10, xmm11\nvmovshdup xmm12, xmm13", True),
    ("twin_extract", "vpextrd eax, xmm1, 2\nvpextrd [rbx+40], xmm2, 1\nvextractps ecx, xmm3, 3\n"
                     "vmovmskps edx, xmm4\nvpmovmskb edi, xmm5\nvpextrq r8, xmm6, 1\nvpinsrq xmm7, xmm8, r12, 1\n"
                     "vpextrw r10d, xmm9, 3\nvpextrb [rbx+50], xmm10, 7\nvpinsrb xmm11, xmm12, [rbx+3], 9\n"
                     "vmovmskpd r11d, xmm13", True),
    ("avx2_variable_shift", "vpcmpeqd xmm15, xmm15, xmm15\nvpsrld xmm15, xmm15, 26\nvpand xmm7, xmm7, xmm15\n"
                            "vpsravd xmm5, xmm6, xmm7\nvpsrlvd xmm8, xmm9, xmm7\nvpsllvd xmm10, xmm11, xmm7\n"
                            "vpsrlvd xmm12, xmm13, [rbx+32]\nvpsravd xmm14, xmm14, xmm14\nvpand ymm1, ymm1, ymm15\n"
                            "vpsravd ymm2, ymm3, ymm1\nvpsllvq ymm4, ymm4, ymm1\nvpsrlvq xmm0, xmm0, xmm1", True),
    ("twin_move_half", "vmovlps xmm1, xmm2, [rbx+8]\nvmovhps xmm3, xmm4, [rbx+16]\nvmovlpd xmm5, xmm5, [rbx+24]\n"
                       "vmovhpd xmm6, xmm7, [rbx+32]\nvmovlps [rbx+48], xmm8\nvmovhps [rbx+56], xmm9", True),
]

# Assembled only (EVEX cannot run here; the rest must stop): the tests know what each must do.
ASSEMBLED = [
    ("unsupported_fma", "vfmadd231ps ymm0, ymm1, ymm2"),
    ("unsupported_rcpps", "vrcpps xmm4, xmm5"),                     # approximation differs between CPU makers
    ("unsupported_cmp_predicate", "vcmpgt_oqss xmm1, xmm2, xmm3"),   # predicate 30: SSE has 0-7
    ("unsupported_vex256_arith", "vaddps ymm0, ymm1, ymm2"),
    ("misaligned_vmovaps_load", "vmovaps ymm0, [rbx+8]"),
    ("misaligned_vmovapd_store", "vmovapd [rbx+16], ymm1"),
    ("unmapped_load", "vmovups ymm0, [rax]"),
    ("loop_then_fma", "xor eax, eax\n3: vmovups ymm0, [rbx+rax]\nadd rax, 32\ncmp rax, 96\njne 3b\n"
                      "vfmadd231ps ymm0, ymm1, ymm2"),
    ("zmm_load", "vmovups zmm0, [rbx+8]"),
    ("zmm_store", "vmovups [rbx+64], zmm1"),
    ("zmm_aligned_load", "vmovaps zmm2, [rbx+64]"),
    ("zmm_dqu64_high", "vmovdqu64 zmm17, [rbx+4]\nvmovdqu32 [rbx+128], zmm17"),
    ("zmm_dqa64_misaligned", "vmovdqa64 zmm3, [rbx+32]"),
    ("zmm_dqu8_16", "vmovdqu8 zmm4, [rbx+1]\nvmovdqu16 [rbx+200], zmm4"),
    ("zmm_xor_zero", "vpxord zmm5, zmm5, zmm5\nvpxorq zmm20, zmm21, zmm22"),
    ("zmm_ternlog_ones", "vpternlogd zmm6, zmm6, zmm6, 0xff"),
    ("zmm_broadcast", "vbroadcastss zmm7, [rbx+4]\nvpbroadcastq zmm8, xmm9\nvbroadcasti64x4 zmm10, [rbx+32]"),
    ("zmm_insert_extract", "vinserti64x4 zmm11, zmm12, ymm13, 1\nvextracti32x8 ymm14, zmm15, 1\n"
                           "vextractf32x4 [rbx+16], zmm16, 3"),
    ("ymm_evex_high", "vmovdqu64 ymm18, [rbx+32]\nvpxorq ymm19, ymm19, ymm19"),
    ("zmm_masked", "vmovups zmm0{k1}, [rbx]"),
    ("kmov", "kmovw k1, eax"),
    # approximations whose bits depend on the CPU model; EVEX forms of what VEX forms carry out
    ("unsupported_rcpss", "vrcpss xmm0, xmm1, xmm2"),
    ("unsupported_rsqrtps_ymm", "vrsqrtps ymm3, ymm4"),
    ("unsupported_rsqrtss", "vrsqrtss xmm5, xmm6, dword ptr [rbx]"),
    ("loop_then_rcpps_ymm", "xor eax, eax\n3: vmovups ymm0, [rbx+rax]\nadd rax, 32\ncmp rax, 96\njne 3b\n"
                            "vrcpps ymm0, ymm1"),
    ("evex_fma_zmm", "vfmadd231ps zmm0, zmm1, zmm2"),
    ("evex_fma_xmm17", "vfmadd213sd xmm17, xmm2, xmm3"),
    ("evex_add_xmm", "{evex} vaddps xmm1, xmm2, xmm3"),
    ("evex_add_ymm", "{evex} vmulpd ymm1, ymm2, ymm3"),
    ("evex_cmp_mask", "vcmpps k1, xmm2, xmm3, 9"),
    ("evex_cmp_predicate", "{evex} vcmpps k1, ymm2, ymm3, 30"),
    ("evex_permilps", "vpermilps zmm1, zmm2, 0x1b"),
    ("evex_cvtph2ps", "vcvtph2ps zmm1, ymm2"),
    ("evex_blend_masked", "vblendmps zmm1{k1}, zmm2, zmm3"),
    ("evex_permd", "{evex} vpermd ymm1, ymm2, ymm3"),
]


def run(*cmd: str, cwd: Path) -> str:
    return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout


def snippet_bytes(asm: str, tmp: Path) -> bytes:
    (tmp / "s.S").write_text(f".intel_syntax noprefix\n{asm}\n")
    run("gcc", "-c", "-mavx2", "-mavx512f", "-mavx512bw", "s.S", "-o", "s.o", cwd=tmp)
    run("objcopy", "-O", "binary", "-j", ".text", "s.o", "s.bin", cwd=tmp)
    return (tmp / "s.bin").read_bytes()


def harness_function(i: int, asm: str) -> str:
    load = [f"vmovdqu ymm{r}, [rdi+{32 * r}]" for r in range(16)]
    load += [f"mov {g}, [rdi+{512 + 8 * k}]" for k, g in enumerate(GPRS) if g not in ("rsp", "rdi")]
    store = [f"mov [rdi+{512 + 8 * k}], {g}" for k, g in enumerate(GPRS) if g not in ("rsp", "rdi")]
    store += ["mov rax, [rip+g_rdi]", f"mov [rdi+{512 + 8 * 7}], rax"]
    store += [f"vmovdqu [rdi+{32 * r}], ymm{r}" for r in range(16)]
    return "\n".join([
        f".globl case_{i}", ".p2align 6", f"case_{i}:",
        "push rbx", "push rbp", "push r12", "push r13", "push r14", "push r15",
        "mov [rip+g_state], rdi", "ldmxcsr [rdi+640]", *load, "mov rdi, [rdi+568]",
        asm,
        "mov [rip+g_rdi], rdi", "mov rdi, [rip+g_state]", "stmxcsr [rdi+640]", "ldmxcsr [rip+g_mxcsr]",
        *store, "vzeroupper",
        "pop r15", "pop r14", "pop r13", "pop r12", "pop rbp", "pop rbx", "ret", ""])


MAIN_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct state { uint8_t ymm[16][32]; uint64_t gpr[16]; uint32_t mxcsr, pad; };
%(decls)s
static void (*cases[])(struct state *) = { %(names)s };
static void hex(const uint8_t *p, int n) { putchar('"'); for (int i = 0; i < n; i++) printf("%%02x", p[i]); putchar('"'); }
int main(void) {
    static uint8_t mem[512] __attribute__((aligned(64)));
    static const char *init_hex[] = { %(inits)s };
    for (unsigned c = 0; c < sizeof cases / sizeof *cases; c++) {
        struct state s; uint8_t buf[512 + 512 + 128 + 8];
        for (int i = 0; i < (int)sizeof buf; i++) sscanf(init_hex[c] + 2 * i, "%%2hhx", &buf[i]);
        memcpy(&s, buf, sizeof s); memcpy(mem, buf + sizeof s, 512);
        s.gpr[3] += (uint64_t)mem; s.gpr[6] += (uint64_t)mem; s.gpr[9] += (uint64_t)mem;
        cases[c](&s);
        s.gpr[3] -= (uint64_t)mem; s.gpr[6] -= (uint64_t)mem; s.gpr[9] -= (uint64_t)mem;
        printf("{\"state\": "); hex((uint8_t *)&s, sizeof s); printf(", \"mem\": "); hex(mem, 512); printf("}\n");
    }
    return 0;
}
"""


def initial_state(rng: random.Random) -> dict:
    ymm = [rng.randbytes(32).hex() for _ in range(16)]
    gpr = {g: rng.getrandbits(64) for g in GPRS}
    gpr.update({"rcx": 3, "rsp": 0, **PTRS})
    return {"ymm": ymm, "gpr": gpr, "mem": rng.randbytes(512).hex()}


def state_blob(st: dict) -> str:
    gpr = b"".join(st["gpr"][g].to_bytes(8, "little") for g in GPRS)
    mxcsr = st.get("mxcsr", MXCSR_DEFAULT).to_bytes(8, "little")
    return "".join(st["ymm"]) + gpr.hex() + mxcsr.hex() + bytes.fromhex(st["mem"]).hex()


def native_results(cases: list, tmp: Path) -> list:
    asm = [".intel_syntax noprefix", ".text"] + [harness_function(i, c["asm"]) for i, c in enumerate(cases)]
    asm += [".data", "g_state: .quad 0", "g_rdi: .quad 0", f"g_mxcsr: .long {MXCSR_DEFAULT}", '.section .note.GNU-stack,"",@progbits']
    (tmp / "h.S").write_text("\n".join(asm) + "\n")
    (tmp / "main.c").write_text(MAIN_C % {
        "decls": "\n".join(f"void case_{i}(struct state *);" for i in range(len(cases))),
        "names": ", ".join(f"case_{i}" for i in range(len(cases))),
        "inits": ", ".join(f'"{state_blob(c["init"])}"' for c in cases)})
    run("gcc", "-O0", "-mavx2", "main.c", "h.S", "-o", "h", cwd=tmp)
    out = []
    for case, line in zip(cases, run("./h", cwd=tmp).splitlines()):
        rec = json.loads(line)
        raw = bytes.fromhex(rec["state"])
        gpr = {g: int.from_bytes(raw[512 + 8 * k:520 + 8 * k], "little") for k, g in enumerate(GPRS)}
        del gpr["rsp"]
        result = {"ymm": [raw[32 * r:32 * r + 32].hex() for r in range(16)], "gpr": gpr, "mem": rec["mem"]}
        if "mxcsr" in case["init"]:
            result["mxcsr"] = int.from_bytes(raw[640:644], "little")
        out.append(result)
    return out


def main() -> None:
    rng = random.Random(20240611)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        native = [{"name": n, "asm": a, "needs_sites": s, "code": snippet_bytes(a, tmp).hex(),
                   "init": initial_state(rng)} for n, a, s in NATIVE]
        filler = random.Random(FP_SEED)
        for case in FP_CASES:       # appended: the cases above keep their random state
            init = initial_state(rng)
            case.fill(init, filler)
            native.append({"name": case.name, "asm": case.asm, "needs_sites": True,
                           "code": snippet_bytes(case.asm, tmp).hex(), "flags": case.flags, "init": init})
        for case, expected in zip(native, native_results(native, tmp)):
            case["expected"] = expected
        assembled = [{"name": n, "asm": a, "code": snippet_bytes(a, tmp).hex()} for n, a in ASSEMBLED]
        gcc = run("gcc", "--version", cwd=tmp).splitlines()[0]
    doc = {"command": "python tests/data/avx/make_cases.py  # from the repository root",
           "toolchain": gcc, "ptr_registers": PTRS, "native": native, "assembled": assembled}
    (HERE / "cases.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
