#!/usr/bin/env python3
"""Generate tests/isa/zfh.S: Zfh (half precision) cases whose expected results and fflags come
from QEMU.

Each case below is one instruction with its f0/f1/f2 operands (64-bit register values, so
NaN-boxed halves, singles and unboxed values alike) and a0. A C program runs every case under
`qemu-riscv32 -cpu rv32,Zfh=true` (built with `python3 -m ziglang cc`, `+zfh`) and prints the
result (f3's 64 bits, or a4) and the fflags each raised; the test file checks exactly those. The
QEMU build of the test also runs under qemu-system-riscv32 with Zfh (tests/isa.rs), so the
expected values are checked twice by QEMU and the file can always be regenerated.

Usage: scripts/gen-zfh-tests.py   (rewrites tests/isa/zfh.S)
"""

import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "isa", "zfh.S")

B = lambda h: 0xffffffffffff0000 | h          # NaN-boxed half
S = lambda s: 0xffffffff00000000 | s          # NaN-boxed single
ONE, ONEP, HULP, MAXH, MINN, MINS = 0x3c00, 0x3c01, 0x1000, 0x7bff, 0x0400, 0x0001
INF, NINF, QNAN, SNAN, NZERO, TWO, THREE, HALF = 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x8000, 0x4000, 0x4200, 0x3800
RMS = ["rne", "rtz", "rdn", "rup", "rmm"]
cases = []  # (insn text, int_dest, v0, v1, v2, comment)
def c(text, v0=0, v1=0, v2=0, intd=False, why=""):
    cases.append((text, intd, v0, v1, v2, why))
for rm in RMS:
    c(f"fadd.h f3, f0, f1, {rm}", B(ONE), B(HULP), why=f"1 + ulp/2 (tie, even below), {rm}")
    c(f"fadd.h f3, f0, f1, {rm}", B(ONEP), B(HULP), why=f"(1+ulp) + ulp/2 (tie, odd below), {rm}")
    c(f"fsub.h f3, f0, f1, {rm}", B(0xbc00), B(HULP), why=f"-1 - ulp/2, {rm}")
    c(f"fmul.h f3, f0, f1, {rm}", B(MAXH), B(TWO), why=f"overflow, {rm}")
    c(f"fmul.h f3, f0, f1, {rm}", B(0x0003), B(HALF), why=f"subnormal tie (underflow), {rm}")
    c(f"fdiv.h f3, f0, f1, {rm}", B(ONE), B(THREE), why=f"1/3, {rm}")
    c(f"fsqrt.h f3, f0, {rm}", B(TWO), why=f"sqrt 2, {rm}")
    c(f"fmadd.h f3, f0, f1, f2, {rm}", B(0x3e00), B(0x3e01), B(0xc080), why=f"fused, {rm}")
    c(f"fcvt.h.s f3, f0, {rm}", S(0x3f801000), why=f"single 1+2^-11 (a tie), {rm}")
    c(f"fcvt.h.s f3, f0, {rm}", S(0x477ff000), why=f"single 65520 (overflow at rne), {rm}")
    c(f"fcvt.h.d f3, f0, {rm}", 0x3ff0030000000000, why=f"double just above a tie, {rm}")
    c(f"fcvt.h.w f3, a0, {rm}", 2049, why=f"2049, {rm}")
    c(f"fcvt.h.w f3, a0, {rm}", 0xfffff7ff, why=f"-2049, {rm}")
    c(f"fcvt.h.wu f3, a0, {rm}", 0xffffffff, why=f"2^32-1 (overflow), {rm}")
    c(f"fcvt.w.h a4, f0, {rm}", B(0xbe00), intd=True, why=f"-1.5, {rm}")
    c(f"fcvt.wu.h a4, f0, {rm}", B(0x3e00), intd=True, why=f"1.5, {rm}")
# special operands
c("fdiv.h f3, f0, f1", B(ONE), B(0), why="1/0: DZ")
c("fdiv.h f3, f0, f1", B(0), B(0), why="0/0: NV, canonical NaN")
c("fsqrt.h f3, f0", B(0xbc00), why="sqrt(-1): NV")
c("fadd.h f3, f0, f1", B(SNAN), B(ONE), why="sNaN operand: NV, canonical NaN")
c("fadd.h f3, f0, f1", B(QNAN | 0x55), B(ONE), why="qNaN payload is not kept")
c("fadd.h f3, f0, f1", B(INF), B(NINF), why="inf - inf: NV")
c("fadd.h f3, f0, f1", S(0x3f800000), B(ONE), why="an unboxed operand reads as the canonical NaN")
c("fadd.h f3, f0, f1", 0x3c00, B(ONE), why="a half boxed with zeros is not boxed")
c("fmadd.h f3, f0, f1, f2", B(INF), B(0), B(QNAN), why="inf*0 + qNaN: NV")
c("fmsub.h f3, f0, f1, f2", B(0x3e00), B(TWO), B(ONE), why="1.5*2 - 1")
c("fnmsub.h f3, f0, f1, f2", B(0x3e00), B(TWO), B(ONE), why="-(1.5*2) + 1")
c("fnmadd.h f3, f0, f1, f2", B(0x3e00), B(TWO), B(ONE), why="-(1.5*2) - 1")
c("fmul.h f3, f0, f1", B(MINS), B(MINS), why="tiny * tiny: UF NX, +0")
c("fmul.h f3, f0, f1", B(MINN), B(HALF), why="min normal / 2: exact subnormal")
for a, b in [(ONE, 0xbc00), (QNAN, ONE), (ONE, QNAN), (QNAN, QNAN), (SNAN, ONE), (NZERO, 0), (0, NZERO)]:
    c("fmin.h f3, f0, f1", B(a), B(b), why="fmin")
    c("fmax.h f3, f0, f1", B(a), B(b), why="fmax")
for a, b in [(ONE, 0xbc00), (0xbc00, ONE), (ONE, ONE)]:
    c("fsgnj.h f3, f0, f1", B(a), B(b)); c("fsgnjn.h f3, f0, f1", B(a), B(b)); c("fsgnjx.h f3, f0, f1", B(a), B(b))
c("fsgnj.h f3, f0, f1", S(0x3f800000), B(ONE), why="an unboxed operand is the canonical NaN")
for a, b in [(ONE, ONE), (ONE, TWO), (TWO, ONE), (NZERO, 0), (QNAN, ONE), (SNAN, ONE), (ONE, QNAN)]:
    for op in ["feq.h", "flt.h", "fle.h"]:
        c(f"{op} a4, f0, f1", B(a), B(b), intd=True)
for v in [NINF, 0xbc00, 0x8001, NZERO, 0, 0x0001, ONE, INF, SNAN, QNAN]:
    c("fclass.h a4, f0", B(v), intd=True, why="fclass")
c("fclass.h a4, f0", S(0x3f800000), intd=True, why="unboxed: quiet NaN")
for v in [INF, NINF, QNAN, B(0xc3fc) & 0xffff, MAXH]:
    c("fcvt.w.h a4, f0, rtz", B(v), intd=True, why="fcvt.w.h special")
    c("fcvt.wu.h a4, f0, rtz", B(v), intd=True, why="fcvt.wu.h special")
for v in [SNAN, QNAN, MINS, 0x83ff, MAXH, NINF]:
    c("fcvt.s.h f3, f0", B(v), why="widening to single")
    c("fcvt.d.h f3, f0", B(v), why="widening to double")
c("fcvt.h.s f3, f0", S(0x7f800001), why="single sNaN: NV")
c("fcvt.h.s f3, f0", S(0x33000001), why="single just above half's smallest/2: UF NX")
c("fcvt.h.d f3, f0", 0x7ff8000000000001, why="double qNaN")
c("fcvt.h.d f3, f0", 0xc0f0000000000000, why="-65536: overflow to -inf")
c("fmv.x.h a4, f0", B(0x8001), intd=True, why="sign-extended")
c("fmv.x.h a4, f0", 0x123456789abc7fff, intd=True, why="raw low 16 bits, boxed or not")
c("fmv.h.x f3, a0", 0x12348001, why="boxed low 16 bits")
c("fcvt.h.wu f3, a0", 65504, why="exact")
c("fcvt.h.w f3, a0", 0x80000000, why="-2^31: overflow")



def run_under_qemu():
    """Per case: (fflags, f3, a4) as qemu-riscv32 computes them."""
    prog = ["#include <stdio.h>", "#include <stdint.h>"]
    for i, (text, intd, v0, v1, v2, why) in enumerate(cases):
        prog.append(f"""static void case{i}(void) {{
    static const uint64_t in[3] = {{{v0:#x}ull, {v1:#x}ull, {v2:#x}ull}};
    uint64_t f3 = 0; uint32_t x = 0, fl = 0;
    __asm__ volatile("fld f0, 0(%[in])\\n fld f1, 8(%[in])\\n fld f2, 16(%[in])\\n lw a0, 0(%[in])\\n"
        "li a4, 0\\n fcvt.d.w f3, x0\\n fsflags x0\\n {text}\\n frflags %[fl]\\n fsd f3, 0(%[out])\\n mv %[x], a4\\n"
        : [fl] "=&r"(fl), [x] "=&r"(x) : [in] "r"(in), [out] "r"(&f3)
        : "a0", "a4", "f0", "f1", "f2", "f3", "memory");
    printf("%d %u %016llx %08x\\n", {i}, fl, (unsigned long long)f3, x);
}}""")
    prog.append("int main(void) {")
    prog += [f"    case{i}();" for i in range(len(cases))]
    prog.append("    return 0;\n}")
    with tempfile.TemporaryDirectory() as tmp:
        source, binary = os.path.join(tmp, "oracle.c"), os.path.join(tmp, "oracle")
        with open(source, "w") as f:
            f.write("\n".join(prog))
        subprocess.run(["python3", "-m", "ziglang", "cc", "-target", "riscv32-linux-musl",
                        "-mcpu=generic_rv32+m+a+f+d+c+zfh", "-O1", "-static", source, "-o", binary],
                       check=True)
        out = subprocess.run(["qemu-riscv32", "-cpu", "rv32,Zfh=true", binary], check=True,
                             capture_output=True, text=True).stdout
    results = {}
    for line in out.splitlines():
        i, fl, f3, x = line.split()
        results[int(i)] = (int(fl), int(f3, 16), int(x, 16))
    assert len(results) == len(cases), (len(results), len(cases))
    return results


HEADER = """# zfh.S - Zfh (half precision). GENERATED by scripts/gen-zfh-tests.py: do not edit by hand.
#
# Every case loads f0, f1, f2 (as doublewords, so boxed and unboxed halves
# alike) and a0 (the low word of the first), runs one instruction, and checks
# its result (f3's whole 64 bits: a half result is NaN-boxed; or a4) and the
# exact fflags. The expected values come from running each instruction under
# qemu-riscv32 -cpu rv32,Zfh=true, and the QEMU build of this file runs under
# qemu-system-riscv32 with Zfh too. Covered: add/sub/mul/div/sqrt, fmadd and
# the conversions that round, under every static rounding mode at ties,
# overflow and underflow; NaN rules (sNaN raising NV, canonical NaN results,
# operands that are not NaN-boxed read as the canonical NaN); the other fused
# multiply-adds; fmin/fmax, fsgnj*, feq/flt/fle, fclass; conversions between
# half and single, double, word and unsigned word; fmv.x.h (sign-extended)
# and fmv.h.x (boxed). Then by hand: flh boxes what it loads, fsh stores the
# low 16 bits, a reserved rounding mode is illegal, and so is Zfh with FS off.
#include "test.h"

/* f0/f1/f2 = v0/v1/v2 (t2 points at them), a0 = the low word of v0. */
#define ZFH_PROLOGUE(testnum, v0, v1, v2)                                \\
    .pushsection .data;                                                  \\
    .balign 8;                                                           \\
test_ ## testnum ## _data:                                               \\
    .dword v0, v1, v2, 0;                                                \\
    .popsection;                                                         \\
test_ ## testnum:                                                        \\
    li TESTNUM, testnum;                                                 \\
    la t2, test_ ## testnum ## _data;                                    \\
    fld f0, 0(t2);                                                       \\
    fld f1, 8(t2);                                                       \\
    fld f2, 16(t2);                                                      \\
    lw a0, 0(t2);                                                        \\
    li a4, 0;                                                            \\
    fcvt.d.w f3, x0;                                                     \\
    fsflags x0

/* `code` must raise exactly `flags` and leave f3 = hi:lo. */
#define ZFH_F(testnum, flags, hi, lo, v0, v1, v2, code...)               \\
    ZFH_PROLOGUE(testnum, v0, v1, v2);                                   \\
    code;                                                                \\
    fsflags a1, x0;                                                      \\
    FP_CHECK_FLAGS(flags);                                               \\
    fsd f3, 24(t2);                                                      \\
    lw a4, 24(t2);                                                       \\
    li a3, lo;                                                           \\
    bne a4, a3, fail;                                                    \\
    lw a4, 28(t2);                                                       \\
    li a3, hi;                                                           \\
    bne a4, a3, fail

/* `code` must raise exactly `flags` and leave a4 = result. */
#define ZFH_X(testnum, flags, result, v0, v1, v2, code...)               \\
    ZFH_PROLOGUE(testnum, v0, v1, v2);                                   \\
    code;                                                                \\
    fsflags a1, x0;                                                      \\
    FP_CHECK_FLAGS(flags);                                               \\
    li a3, result;                                                       \\
    bne a4, a3, fail

RVTEST_CODE_BEGIN

"""

TAIL = """
  # ------------------------------------------------------------ by hand
  # flh NaN-boxes the half it loads; fsh stores f's low 16 bits (boxed or not)
test_1000:
  li TESTNUM, 1000
  la t2, zfh_mem
  flh f4, 2(t2)
  fsd f4, 8(t2)
  lw a4, 8(t2)
  li a3, 0xffffbc00
  bne a4, a3, fail
  lw a4, 12(t2)
  li a3, -1
  bne a4, a3, fail
  li a3, 0x12345678
  fmv.w.x f5, a3
  fsh f5, 0(t2)
  lw a4, 0(t2)
  li a3, 0xbc005678
  bne a4, a3, fail
  # a reserved rounding mode (rm = 5) is illegal for fadd.h and for the exact fcvt.s.h
  TEST_TRAP(1001, CAUSE_ILLEGAL_INSN, .word (0x02 << 25) | (1 << 20) | (0 << 15) | (5 << 12) | (3 << 7) | 0x53)
  TEST_TRAP(1002, CAUSE_ILLEGAL_INSN, .word (0x20 << 25) | (2 << 20) | (0 << 15) | (6 << 12) | (3 << 7) | 0x53)
  # with mstatus.FS off, Zfh computations, moves and loads are illegal
  li t0, MSTATUS_FS
  csrc mstatus, t0
  TEST_TRAP(1003, CAUSE_ILLEGAL_INSN, fadd.h f3, f0, f1)
  TEST_TRAP(1004, CAUSE_ILLEGAL_INSN, fmv.x.h a4, f0)
  TEST_TRAP(1005, CAUSE_ILLEGAL_INSN, flh f3, 0(t2))
  li t0, MSTATUS_FS_INITIAL
  csrs mstatus, t0

  TEST_PASSFAIL

RVTEST_CODE_END

RVTEST_DATA_BEGIN
  .balign 8
zfh_mem:
  .half 0x1111, 0xbc00, 0x2222, 0x3333
  .dword 0
RVTEST_DATA_END
"""


def main():
    results = run_under_qemu()
    lines = []
    for i, (text, intd, v0, v1, v2, why) in enumerate(cases):
        fl, f3, x = results[i]
        n = i + 2
        lines.append(f"  # {text}" + (f": {why}" if why else ""))
        if intd:
            lines.append(f"  ZFH_X({n}, {fl:#04x}, {x:#010x}, {v0:#018x}, {v1:#018x}, {v2:#018x}, {text})")
        else:
            lines.append(f"  ZFH_F({n}, {fl:#04x}, {f3 >> 32:#010x}, {f3 & 0xffffffff:#010x}, "
                         f"{v0:#018x}, {v1:#018x}, {v2:#018x}, {text})")
    with open(OUT, "w") as f:
        f.write(HEADER + "\n".join(lines) + "\n" + TAIL)
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
