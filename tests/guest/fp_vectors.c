/*
 * fp_vectors: prints F/D test vectors computed by the machine it runs on.
 *
 * Every line is `op rm inputs... -> result flags`, all in hex:
 *   - single-precision operands/results: 8 digits, double: 16 digits, integers: 8 digits;
 *   - `rm` is the dynamic rounding mode (frm) the operation ran under (0..4); operations whose
 *     result does not depend on rounding run once, under rm 0;
 *   - `flags` is fflags accrued by that one operation (cleared right before it).
 * Operations whose name ends in `.box` take raw 64-bit f-register contents (loaded with fld, so
 * single-precision operands may be improperly NaN-boxed) and print the raw 64-bit destination
 * register (stored with fsd) so NaN-boxing of the result is visible.
 *
 * Built with `python3 -m ziglang cc -target riscv32-linux-musl -O2 -static` (rv32gc, ilp32d) and
 * run under qemu-riscv32 to produce tests/guest/fp_vectors.expected (scripts/gen-fp-vectors.sh).
 * Deterministic: the pseudo-random inputs come from a fixed-seed xorshift32.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- single-precision kernels */

/* F result from two F sources. */
#define S_FFF(fn, insn)                                                                       \
    static uint32_t fn(unsigned rm, uint32_t a, uint32_t b, unsigned *flags)                  \
    {                                                                                         \
        uint32_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fmv.w.x ft0, %[a]\n\t"                                              \
                         "fmv.w.x ft1, %[b]\n\t"                                              \
                         "fsflags zero\n\t" insn " ft2, ft0, ft1\n\t"                         \
                         "frflags %[f]\n\t"                                                   \
                         "fmv.x.w %[r], ft2"                                                  \
                         : [r] "=&r"(r), [f] "=&r"(f)                                         \
                         : [a] "r"(a), [b] "r"(b), [rm] "r"(rm)                               \
                         : "ft0", "ft1", "ft2");                                              \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

/* F result from three F sources (fused multiply-add family). */
#define S_FFFF(fn, insn)                                                                      \
    static uint32_t fn(unsigned rm, uint32_t a, uint32_t b, uint32_t c, unsigned *flags)      \
    {                                                                                         \
        uint32_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fmv.w.x ft0, %[a]\n\t"                                              \
                         "fmv.w.x ft1, %[b]\n\t"                                              \
                         "fmv.w.x ft2, %[c]\n\t"                                              \
                         "fsflags zero\n\t" insn " ft3, ft0, ft1, ft2\n\t"                    \
                         "frflags %[f]\n\t"                                                   \
                         "fmv.x.w %[r], ft3"                                                  \
                         : [r] "=&r"(r), [f] "=&r"(f)                                         \
                         : [a] "r"(a), [b] "r"(b), [c] "r"(c), [rm] "r"(rm)                   \
                         : "ft0", "ft1", "ft2", "ft3");                                       \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

/* F result from one F source. */
#define S_FF(fn, insn)                                                                        \
    static uint32_t fn(unsigned rm, uint32_t a, unsigned *flags)                              \
    {                                                                                         \
        uint32_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fmv.w.x ft0, %[a]\n\t"                                              \
                         "fsflags zero\n\t" insn " ft2, ft0\n\t"                              \
                         "frflags %[f]\n\t"                                                   \
                         "fmv.x.w %[r], ft2"                                                  \
                         : [r] "=&r"(r), [f] "=&r"(f)                                         \
                         : [a] "r"(a), [rm] "r"(rm)                                           \
                         : "ft0", "ft2");                                                     \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

/* Integer result from two F sources (comparisons). */
#define S_XFF(fn, insn)                                                                       \
    static uint32_t fn(unsigned rm, uint32_t a, uint32_t b, unsigned *flags)                  \
    {                                                                                         \
        uint32_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fmv.w.x ft0, %[a]\n\t"                                              \
                         "fmv.w.x ft1, %[b]\n\t"                                              \
                         "fsflags zero\n\t" insn " %[r], ft0, ft1\n\t"                        \
                         "frflags %[f]"                                                       \
                         : [r] "=&r"(r), [f] "=&r"(f)                                         \
                         : [a] "r"(a), [b] "r"(b), [rm] "r"(rm)                               \
                         : "ft0", "ft1");                                                     \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

/* Integer result from one F source (fclass, fcvt.w[u]). */
#define S_XF(fn, insn)                                                                        \
    static uint32_t fn(unsigned rm, uint32_t a, unsigned *flags)                              \
    {                                                                                         \
        uint32_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fmv.w.x ft0, %[a]\n\t"                                              \
                         "fsflags zero\n\t" insn " %[r], ft0\n\t"                             \
                         "frflags %[f]"                                                       \
                         : [r] "=&r"(r), [f] "=&r"(f)                                         \
                         : [a] "r"(a), [rm] "r"(rm)                                           \
                         : "ft0");                                                            \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

/* F result from one integer source (fcvt.s.w[u]). */
#define S_FX(fn, insn)                                                                        \
    static uint32_t fn(unsigned rm, uint32_t a, unsigned *flags)                              \
    {                                                                                         \
        uint32_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fsflags zero\n\t" insn " ft2, %[a]\n\t"                             \
                         "frflags %[f]\n\t"                                                   \
                         "fmv.x.w %[r], ft2"                                                  \
                         : [r] "=&r"(r), [f] "=&r"(f)                                         \
                         : [a] "r"(a), [rm] "r"(rm)                                           \
                         : "ft2");                                                            \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

/* ---------------------------------------------------------------- double-precision kernels */
/* RV32 has no fmv.d.x: doubles travel through memory (fld/fsd). */

#define D_FFF(fn, insn)                                                                       \
    static uint64_t fn(unsigned rm, uint64_t a, uint64_t b, unsigned *flags)                  \
    {                                                                                         \
        uint64_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fld ft0, %[a]\n\t"                                                  \
                         "fld ft1, %[b]\n\t"                                                  \
                         "fsflags zero\n\t" insn " ft2, ft0, ft1\n\t"                         \
                         "frflags %[f]\n\t"                                                   \
                         "fsd ft2, %[r]"                                                      \
                         : [r] "=m"(r), [f] "=&r"(f)                                          \
                         : [a] "m"(a), [b] "m"(b), [rm] "r"(rm)                               \
                         : "ft0", "ft1", "ft2");                                              \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

#define D_FFFF(fn, insn)                                                                      \
    static uint64_t fn(unsigned rm, uint64_t a, uint64_t b, uint64_t c, unsigned *flags)      \
    {                                                                                         \
        uint64_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fld ft0, %[a]\n\t"                                                  \
                         "fld ft1, %[b]\n\t"                                                  \
                         "fld ft2, %[c]\n\t"                                                  \
                         "fsflags zero\n\t" insn " ft3, ft0, ft1, ft2\n\t"                    \
                         "frflags %[f]\n\t"                                                   \
                         "fsd ft3, %[r]"                                                      \
                         : [r] "=m"(r), [f] "=&r"(f)                                          \
                         : [a] "m"(a), [b] "m"(b), [c] "m"(c), [rm] "r"(rm)                   \
                         : "ft0", "ft1", "ft2", "ft3");                                       \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

#define D_FF(fn, insn)                                                                        \
    static uint64_t fn(unsigned rm, uint64_t a, unsigned *flags)                              \
    {                                                                                         \
        uint64_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fld ft0, %[a]\n\t"                                                  \
                         "fsflags zero\n\t" insn " ft2, ft0\n\t"                              \
                         "frflags %[f]\n\t"                                                   \
                         "fsd ft2, %[r]"                                                      \
                         : [r] "=m"(r), [f] "=&r"(f)                                          \
                         : [a] "m"(a), [rm] "r"(rm)                                           \
                         : "ft0", "ft2");                                                     \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

#define D_XFF(fn, insn)                                                                       \
    static uint32_t fn(unsigned rm, uint64_t a, uint64_t b, unsigned *flags)                  \
    {                                                                                         \
        uint32_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fld ft0, %[a]\n\t"                                                  \
                         "fld ft1, %[b]\n\t"                                                  \
                         "fsflags zero\n\t" insn " %[r], ft0, ft1\n\t"                        \
                         "frflags %[f]"                                                       \
                         : [r] "=&r"(r), [f] "=&r"(f)                                         \
                         : [a] "m"(a), [b] "m"(b), [rm] "r"(rm)                               \
                         : "ft0", "ft1");                                                     \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

#define D_XF(fn, insn)                                                                        \
    static uint32_t fn(unsigned rm, uint64_t a, unsigned *flags)                              \
    {                                                                                         \
        uint32_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fld ft0, %[a]\n\t"                                                  \
                         "fsflags zero\n\t" insn " %[r], ft0\n\t"                             \
                         "frflags %[f]"                                                       \
                         : [r] "=&r"(r), [f] "=&r"(f)                                         \
                         : [a] "m"(a), [rm] "r"(rm)                                           \
                         : "ft0");                                                            \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

#define D_FX(fn, insn)                                                                        \
    static uint64_t fn(unsigned rm, uint32_t a, unsigned *flags)                              \
    {                                                                                         \
        uint64_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fsflags zero\n\t" insn " ft2, %[a]\n\t"                             \
                         "frflags %[f]\n\t"                                                   \
                         "fsd ft2, %[r]"                                                      \
                         : [r] "=m"(r), [f] "=&r"(f)                                          \
                         : [a] "r"(a), [rm] "r"(rm)                                           \
                         : "ft2");                                                            \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

/* fcvt.s.d: single result from a double source. */
static uint32_t fcvt_s_d(unsigned rm, uint64_t a, unsigned *flags)
{
    uint32_t r;
    unsigned f;
    __asm__ volatile("fsrm %[rm]\n\t"
                     "fld ft0, %[a]\n\t"
                     "fsflags zero\n\t"
                     "fcvt.s.d ft2, ft0\n\t"
                     "frflags %[f]\n\t"
                     "fmv.x.w %[r], ft2"
                     : [r] "=&r"(r), [f] "=&r"(f)
                     : [a] "m"(a), [rm] "r"(rm)
                     : "ft0", "ft2");
    *flags = f;
    return r;
}

/* fcvt.d.s: double result from a single source. */
static uint64_t fcvt_d_s(unsigned rm, uint32_t a, unsigned *flags)
{
    uint64_t r;
    unsigned f;
    __asm__ volatile("fsrm %[rm]\n\t"
                     "fmv.w.x ft0, %[a]\n\t"
                     "fsflags zero\n\t"
                     "fcvt.d.s ft2, ft0\n\t"
                     "frflags %[f]\n\t"
                     "fsd ft2, %[r]"
                     : [r] "=m"(r), [f] "=&r"(f)
                     : [a] "r"(a), [rm] "r"(rm)
                     : "ft0", "ft2");
    *flags = f;
    return r;
}

/* ------------------------------------------------- raw f-register (NaN-boxing) kernels */

/* Raw 64-bit register result from two raw 64-bit register sources. */
#define BOX_FFF(fn, insn)                                                                     \
    static uint64_t fn(unsigned rm, uint64_t a, uint64_t b, unsigned *flags)                  \
    {                                                                                         \
        uint64_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fld ft0, %[a]\n\t"                                                  \
                         "fld ft1, %[b]\n\t"                                                  \
                         "fsflags zero\n\t" insn " ft2, ft0, ft1\n\t"                         \
                         "frflags %[f]\n\t"                                                   \
                         "fsd ft2, %[r]"                                                      \
                         : [r] "=m"(r), [f] "=&r"(f)                                          \
                         : [a] "m"(a), [b] "m"(b), [rm] "r"(rm)                               \
                         : "ft0", "ft1", "ft2");                                              \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

/* Raw 64-bit register result from one raw source. */
#define BOX_FF(fn, insn)                                                                      \
    static uint64_t fn(unsigned rm, uint64_t a, unsigned *flags)                              \
    {                                                                                         \
        uint64_t r;                                                                           \
        unsigned f;                                                                           \
        __asm__ volatile("fsrm %[rm]\n\t"                                                     \
                         "fld ft0, %[a]\n\t"                                                  \
                         "fsflags zero\n\t" insn " ft2, ft0\n\t"                              \
                         "frflags %[f]\n\t"                                                   \
                         "fsd ft2, %[r]"                                                      \
                         : [r] "=m"(r), [f] "=&r"(f)                                          \
                         : [a] "m"(a), [rm] "r"(rm)                                           \
                         : "ft0", "ft2");                                                     \
        *flags = f;                                                                           \
        return r;                                                                             \
    }

/* Raw 64-bit register result from an integer source (fmv.w.x, fcvt.s.w). */
static uint64_t box_fmv_w_x(unsigned rm, uint32_t a, unsigned *flags)
{
    uint64_t r;
    unsigned f;
    __asm__ volatile("fsrm %[rm]\n\t"
                     "fsflags zero\n\t"
                     "fmv.w.x ft2, %[a]\n\t"
                     "frflags %[f]\n\t"
                     "fsd ft2, %[r]"
                     : [r] "=m"(r), [f] "=&r"(f)
                     : [a] "r"(a), [rm] "r"(rm)
                     : "ft2");
    *flags = f;
    return r;
}

S_FFF(fadd_s, "fadd.s")
S_FFF(fsub_s, "fsub.s")
S_FFF(fmul_s, "fmul.s")
S_FFF(fdiv_s, "fdiv.s")
S_FFF(fmin_s, "fmin.s")
S_FFF(fmax_s, "fmax.s")
S_FFF(fsgnj_s, "fsgnj.s")
S_FFF(fsgnjn_s, "fsgnjn.s")
S_FFF(fsgnjx_s, "fsgnjx.s")
S_FF(fsqrt_s, "fsqrt.s")
S_FFFF(fmadd_s, "fmadd.s")
S_FFFF(fmsub_s, "fmsub.s")
S_FFFF(fnmsub_s, "fnmsub.s")
S_FFFF(fnmadd_s, "fnmadd.s")
S_XFF(feq_s, "feq.s")
S_XFF(flt_s, "flt.s")
S_XFF(fle_s, "fle.s")
S_XF(fclass_s, "fclass.s")
S_XF(fcvt_w_s, "fcvt.w.s")
S_XF(fcvt_wu_s, "fcvt.wu.s")
S_FX(fcvt_s_w, "fcvt.s.w")
S_FX(fcvt_s_wu, "fcvt.s.wu")

D_FFF(fadd_d, "fadd.d")
D_FFF(fsub_d, "fsub.d")
D_FFF(fmul_d, "fmul.d")
D_FFF(fdiv_d, "fdiv.d")
D_FFF(fmin_d, "fmin.d")
D_FFF(fmax_d, "fmax.d")
D_FFF(fsgnj_d, "fsgnj.d")
D_FFF(fsgnjn_d, "fsgnjn.d")
D_FFF(fsgnjx_d, "fsgnjx.d")
D_FF(fsqrt_d, "fsqrt.d")
D_FFFF(fmadd_d, "fmadd.d")
D_FFFF(fmsub_d, "fmsub.d")
D_FFFF(fnmsub_d, "fnmsub.d")
D_FFFF(fnmadd_d, "fnmadd.d")
D_XFF(feq_d, "feq.d")
D_XFF(flt_d, "flt.d")
D_XFF(fle_d, "fle.d")
D_XF(fclass_d, "fclass.d")
D_XF(fcvt_w_d, "fcvt.w.d")
D_XF(fcvt_wu_d, "fcvt.wu.d")
D_FX(fcvt_d_w, "fcvt.d.w")
D_FX(fcvt_d_wu, "fcvt.d.wu")

BOX_FFF(box_fadd_s, "fadd.s")
BOX_FFF(box_fmin_s, "fmin.s")
BOX_FFF(box_fsgnj_s, "fsgnj.s")
BOX_FFF(box_fsgnjn_s, "fsgnjn.s")
BOX_FFF(box_fsgnjx_s, "fsgnjx.s")
BOX_FF(box_fsqrt_s, "fsqrt.s")
BOX_FF(box_fcvt_d_s, "fcvt.d.s")
BOX_FF(box_fcvt_s_d, "fcvt.s.d")

/* Integer results from raw registers. */
static uint32_t box_fclass_s(unsigned rm, uint64_t a, unsigned *flags)
{
    uint32_t r;
    unsigned f;
    __asm__ volatile("fsrm %[rm]\n\t"
                     "fld ft0, %[a]\n\t"
                     "fsflags zero\n\t"
                     "fclass.s %[r], ft0\n\t"
                     "frflags %[f]"
                     : [r] "=&r"(r), [f] "=&r"(f)
                     : [a] "m"(a), [rm] "r"(rm)
                     : "ft0");
    *flags = f;
    return r;
}

static uint32_t box_fmv_x_w(unsigned rm, uint64_t a, unsigned *flags)
{
    uint32_t r;
    unsigned f;
    __asm__ volatile("fsrm %[rm]\n\t"
                     "fld ft0, %[a]\n\t"
                     "fsflags zero\n\t"
                     "fmv.x.w %[r], ft0\n\t"
                     "frflags %[f]"
                     : [r] "=&r"(r), [f] "=&r"(f)
                     : [a] "m"(a), [rm] "r"(rm)
                     : "ft0");
    *flags = f;
    return r;
}

static uint32_t box_feq_s(unsigned rm, uint64_t a, uint64_t b, unsigned *flags)
{
    uint32_t r;
    unsigned f;
    __asm__ volatile("fsrm %[rm]\n\t"
                     "fld ft0, %[a]\n\t"
                     "fld ft1, %[b]\n\t"
                     "fsflags zero\n\t"
                     "feq.s %[r], ft0, ft1\n\t"
                     "frflags %[f]"
                     : [r] "=&r"(r), [f] "=&r"(f)
                     : [a] "m"(a), [b] "m"(b), [rm] "r"(rm)
                     : "ft0", "ft1");
    *flags = f;
    return r;
}

static uint32_t box_fcvt_w_s(unsigned rm, uint64_t a, unsigned *flags)
{
    uint32_t r;
    unsigned f;
    __asm__ volatile("fsrm %[rm]\n\t"
                     "fld ft0, %[a]\n\t"
                     "fsflags zero\n\t"
                     "fcvt.w.s %[r], ft0\n\t"
                     "frflags %[f]"
                     : [r] "=&r"(r), [f] "=&r"(f)
                     : [a] "m"(a), [rm] "r"(rm)
                     : "ft0");
    *flags = f;
    return r;
}

/* ------------------------------------------------------------------------------ inputs */

static uint32_t rng_state = 0x2545f491u;

static uint32_t xorshift32(void)
{
    uint32_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    rng_state = x;
    return x;
}

static uint64_t xorshift64(void)
{
    uint64_t hi = xorshift32();
    return (hi << 32) | xorshift32();
}

static uint32_t bits_s(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static uint64_t bits_d(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* Interesting single-precision values. */
static const uint32_t SPECIAL_S[] = {
    0x00000000, 0x80000000, /* +-0 */
    0x7f800000, 0xff800000, /* +-inf */
    0x7fc00000, 0xffc00000, /* +-canonical qNaN */
    0x7fc12345,             /* qNaN with payload */
    0x7f800001, 0xffa00000, /* +-sNaN */
    0x00000001, 0x80000001, /* +-min subnormal */
    0x007fffff,             /* max subnormal */
    0x00800000, 0x80800000, /* +-min normal */
    0x7f7fffff, 0xff7fffff, /* +-max finite */
    0x3f800000, 0xbf800000, /* +-1 */
    0x3fc00000,             /* 1.5 */
    0x4f000000,             /* 2^31 */
    0x3dcccccd,             /* 0.1 */
    0xc0200000,             /* -2.5 */
};
#define N_SPECIAL_S (sizeof SPECIAL_S / sizeof SPECIAL_S[0])

static const uint64_t SPECIAL_D[] = {
    0x0000000000000000ull, 0x8000000000000000ull, /* +-0 */
    0x7ff0000000000000ull, 0xfff0000000000000ull, /* +-inf */
    0x7ff8000000000000ull, 0xfff8000000000000ull, /* +-canonical qNaN */
    0x7ff8000000012345ull,                        /* qNaN with payload */
    0x7ff0000000000001ull, 0xfff4000000000000ull, /* +-sNaN */
    0x0000000000000001ull, 0x8000000000000001ull, /* +-min subnormal */
    0x000fffffffffffffull,                        /* max subnormal */
    0x0010000000000000ull, 0x8010000000000000ull, /* +-min normal */
    0x7fefffffffffffffull, 0xffefffffffffffffull, /* +-max finite */
    0x3ff0000000000000ull, 0xbff0000000000000ull, /* +-1 */
    0x3ff8000000000000ull,                        /* 1.5 */
    0x41e0000000000000ull,                        /* 2^31 */
    0x3fb999999999999aull,                        /* 0.1 */
    0xc004000000000000ull,                        /* -2.5 */
};
#define N_SPECIAL_D (sizeof SPECIAL_D / sizeof SPECIAL_D[0])

/* A smaller special set for the three-operand fused ops (cubed). */
static const uint32_t FMA_SPECIAL_S[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
    0x7f800001, 0x00000001, 0x7f7fffff, 0x3f800000, 0xbfc00000,
};
#define N_FMA_SPECIAL_S (sizeof FMA_SPECIAL_S / sizeof FMA_SPECIAL_S[0])

static const uint64_t FMA_SPECIAL_D[] = {
    0x0000000000000000ull, 0x8000000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
    0x7ff8000000000000ull, 0x7ff0000000000001ull, 0x0000000000000001ull, 0x7fefffffffffffffull,
    0x3ff0000000000000ull, 0xbff8000000000000ull,
};
#define N_FMA_SPECIAL_D (sizeof FMA_SPECIAL_D / sizeof FMA_SPECIAL_D[0])

/* Integers for int -> float conversions. */
static const uint32_t SPECIAL_INT[] = {
    0x00000000, 0x00000001, 0xffffffff, 0x7fffffff, 0x80000000, 0x80000001, 0x00ffffff,
    0x01000000, 0x01000001, 0x01000003, 0x02000005, 0xfeffffff, 0x7fffff80, 0x7fffffc0,
    0x7fffffbf, 0xffffff80, 0xffffff7f, 0x12345678, 0x00000003, 0xfffffffd,
};
#define N_SPECIAL_INT (sizeof SPECIAL_INT / sizeof SPECIAL_INT[0])

/* A random single: cycles through exponent ranges so results land in every regime. */
static uint32_t random_s(unsigned kind)
{
    uint32_t r = xorshift32();
    uint32_t sign = r & 0x80000000u;
    uint32_t mant = xorshift32() & 0x007fffffu;
    uint32_t exp;
    switch (kind % 6) {
    case 0: return r;                                     /* any bit pattern */
    case 1: exp = 120 + (xorshift32() % 16); break;       /* near 1.0 */
    case 2: exp = xorshift32() % 28; break;               /* tiny: subnormal/underflow */
    case 3: exp = 226 + (xorshift32() % 29); break;       /* huge: overflow */
    case 4: exp = 127 + (xorshift32() % 34); break;       /* integer-sized */
    default: return SPECIAL_S[xorshift32() % N_SPECIAL_S];
    }
    return sign | (exp << 23) | mant;
}

static uint64_t random_d(unsigned kind)
{
    uint64_t r = xorshift64();
    uint64_t sign = r & 0x8000000000000000ull;
    uint64_t mant = xorshift64() & 0x000fffffffffffffull;
    uint64_t exp;
    switch (kind % 6) {
    case 0: return r;
    case 1: exp = 1016 + (xorshift32() % 16); break;
    case 2: exp = xorshift32() % 60; break;
    case 3: exp = 1990 + (xorshift32() % 57); break;
    case 4: exp = 1023 + (xorshift32() % 34); break;
    default: return SPECIAL_D[xorshift32() % N_SPECIAL_D];
    }
    return sign | (exp << 52) | mant;
}

/* A random double that is exactly representable as a single-range value (for fcvt.s.d). */
static uint64_t random_d_single_range(void)
{
    uint64_t sign = (uint64_t)(xorshift32() & 1) << 63;
    uint64_t exp = 1023 - 160 + (xorshift32() % 300); /* straddles single under/overflow */
    return sign | (exp << 52) | (xorshift64() & 0x000fffffffffffffull);
}

/* ------------------------------------------------------------------------------ printing */

typedef uint32_t (*s_fff_fn)(unsigned, uint32_t, uint32_t, unsigned *);
typedef uint32_t (*s_ffff_fn)(unsigned, uint32_t, uint32_t, uint32_t, unsigned *);
typedef uint32_t (*s_ff_fn)(unsigned, uint32_t, unsigned *);
typedef uint64_t (*d_fff_fn)(unsigned, uint64_t, uint64_t, unsigned *);
typedef uint64_t (*d_ffff_fn)(unsigned, uint64_t, uint64_t, uint64_t, unsigned *);
typedef uint64_t (*d_ff_fn)(unsigned, uint64_t, unsigned *);
typedef uint32_t (*d_xff_fn)(unsigned, uint64_t, uint64_t, unsigned *);
typedef uint32_t (*d_xf_fn)(unsigned, uint64_t, unsigned *);
typedef uint64_t (*d_fx_fn)(unsigned, uint32_t, unsigned *);

static void p_s2(const char *op, s_fff_fn fn, unsigned rm, uint32_t a, uint32_t b)
{
    unsigned f;
    uint32_t r = fn(rm, a, b, &f);
    printf("%s %u %08x %08x -> %08x %02x\n", op, rm, a, b, r, f);
}

static void p_s3(const char *op, s_ffff_fn fn, unsigned rm, uint32_t a, uint32_t b, uint32_t c)
{
    unsigned f;
    uint32_t r = fn(rm, a, b, c, &f);
    printf("%s %u %08x %08x %08x -> %08x %02x\n", op, rm, a, b, c, r, f);
}

static void p_s1(const char *op, s_ff_fn fn, unsigned rm, uint32_t a)
{
    unsigned f;
    uint32_t r = fn(rm, a, &f);
    printf("%s %u %08x -> %08x %02x\n", op, rm, a, r, f);
}

static void p_d2(const char *op, d_fff_fn fn, unsigned rm, uint64_t a, uint64_t b)
{
    unsigned f;
    uint64_t r = fn(rm, a, b, &f);
    printf("%s %u %016llx %016llx -> %016llx %02x\n", op, rm, (unsigned long long)a,
           (unsigned long long)b, (unsigned long long)r, f);
}

static void p_d3(const char *op, d_ffff_fn fn, unsigned rm, uint64_t a, uint64_t b, uint64_t c)
{
    unsigned f;
    uint64_t r = fn(rm, a, b, c, &f);
    printf("%s %u %016llx %016llx %016llx -> %016llx %02x\n", op, rm, (unsigned long long)a,
           (unsigned long long)b, (unsigned long long)c, (unsigned long long)r, f);
}

static void p_d1(const char *op, d_ff_fn fn, unsigned rm, uint64_t a)
{
    unsigned f;
    uint64_t r = fn(rm, a, &f);
    printf("%s %u %016llx -> %016llx %02x\n", op, rm, (unsigned long long)a,
           (unsigned long long)r, f);
}

static void p_dx2(const char *op, d_xff_fn fn, unsigned rm, uint64_t a, uint64_t b)
{
    unsigned f;
    uint32_t r = fn(rm, a, b, &f);
    printf("%s %u %016llx %016llx -> %08x %02x\n", op, rm, (unsigned long long)a,
           (unsigned long long)b, r, f);
}

static void p_dx1(const char *op, d_xf_fn fn, unsigned rm, uint64_t a)
{
    unsigned f;
    uint32_t r = fn(rm, a, &f);
    printf("%s %u %016llx -> %08x %02x\n", op, rm, (unsigned long long)a, r, f);
}

static void p_dfx(const char *op, d_fx_fn fn, unsigned rm, uint32_t a)
{
    unsigned f;
    uint64_t r = fn(rm, a, &f);
    printf("%s %u %08x -> %016llx %02x\n", op, rm, a, (unsigned long long)r, f);
}

/* ------------------------------------------------------------------------------ suites */

#define N_RM 5

struct s2_op { const char *name; s_fff_fn fn; };
struct s3_op { const char *name; s_ffff_fn fn; };
struct d2_op { const char *name; d_fff_fn fn; };
struct d3_op { const char *name; d_ffff_fn fn; };
struct dx2_op { const char *name; d_xff_fn fn; };

static const struct s2_op S_ROUNDED2[] = {
    {"fadd.s", fadd_s}, {"fsub.s", fsub_s}, {"fmul.s", fmul_s}, {"fdiv.s", fdiv_s}};
static const struct s2_op S_EXACT2[] = {
    {"fmin.s", fmin_s},     {"fmax.s", fmax_s},     {"fsgnj.s", fsgnj_s}, {"fsgnjn.s", fsgnjn_s},
    {"fsgnjx.s", fsgnjx_s}, {"feq.s", feq_s},       {"flt.s", flt_s},     {"fle.s", fle_s}};
static const struct s3_op S_FUSED[] = {
    {"fmadd.s", fmadd_s}, {"fmsub.s", fmsub_s}, {"fnmsub.s", fnmsub_s}, {"fnmadd.s", fnmadd_s}};
static const struct d2_op D_ROUNDED2[] = {
    {"fadd.d", fadd_d}, {"fsub.d", fsub_d}, {"fmul.d", fmul_d}, {"fdiv.d", fdiv_d}};
static const struct d2_op D_EXACT2[] = {{"fmin.d", fmin_d},
                                        {"fmax.d", fmax_d},
                                        {"fsgnj.d", fsgnj_d},
                                        {"fsgnjn.d", fsgnjn_d},
                                        {"fsgnjx.d", fsgnjx_d}};
static const struct dx2_op D_CMP[] = {{"feq.d", feq_d}, {"flt.d", flt_d}, {"fle.d", fle_d}};
static const struct d3_op D_FUSED[] = {
    {"fmadd.d", fmadd_d}, {"fmsub.d", fmsub_d}, {"fnmsub.d", fnmsub_d}, {"fnmadd.d", fnmadd_d}};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void single_suite(void)
{
    for (unsigned o = 0; o < COUNT(S_ROUNDED2); o++) {
        for (unsigned i = 0; i < N_SPECIAL_S; i++)
            for (unsigned j = 0; j < N_SPECIAL_S; j++)
                p_s2(S_ROUNDED2[o].name, S_ROUNDED2[o].fn, 0, SPECIAL_S[i], SPECIAL_S[j]);
        for (unsigned k = 0; k < 90; k++) {
            uint32_t a = random_s(k), b = random_s(k / 6 + k);
            for (unsigned rm = 0; rm < N_RM; rm++)
                p_s2(S_ROUNDED2[o].name, S_ROUNDED2[o].fn, rm, a, b);
        }
    }
    /* Exact ops: min/max/sign injection/compare, once each (no rounding). */
    for (unsigned o = 0; o < COUNT(S_EXACT2); o++) {
        for (unsigned i = 0; i < N_SPECIAL_S; i++)
            for (unsigned j = 0; j < N_SPECIAL_S; j++)
                p_s2(S_EXACT2[o].name, S_EXACT2[o].fn, 0, SPECIAL_S[i], SPECIAL_S[j]);
        for (unsigned k = 0; k < 40; k++) {
            uint32_t a = random_s(k), b = (k & 1) ? a ^ 0x80000000u : random_s(k + 3);
            p_s2(S_EXACT2[o].name, S_EXACT2[o].fn, 0, a, b);
        }
    }
    for (unsigned o = 0; o < COUNT(S_FUSED); o++) {
        for (unsigned i = 0; i < N_FMA_SPECIAL_S; i++)
            for (unsigned j = 0; j < N_FMA_SPECIAL_S; j++)
                for (unsigned k = 0; k < N_FMA_SPECIAL_S; k++)
                    p_s3(S_FUSED[o].name, S_FUSED[o].fn, 0, FMA_SPECIAL_S[i], FMA_SPECIAL_S[j],
                         FMA_SPECIAL_S[k]);
        for (unsigned k = 0; k < 60; k++) {
            uint32_t a = random_s(k), b = random_s(k + 1), c;
            /* Every third addend nearly cancels the product: exposes single rounding. */
            if (k % 3 == 0) {
                unsigned f;
                c = fmul_s(0, a, b, &f) ^ 0x80000000u ^ (xorshift32() & 3);
            } else {
                c = random_s(k + 2);
            }
            for (unsigned rm = 0; rm < N_RM; rm++)
                p_s3(S_FUSED[o].name, S_FUSED[o].fn, rm, a, b, c);
        }
    }
    for (unsigned i = 0; i < N_SPECIAL_S; i++)
        p_s1("fsqrt.s", fsqrt_s, 0, SPECIAL_S[i]);
    for (unsigned k = 0; k < 80; k++) {
        uint32_t a = random_s(k);
        for (unsigned rm = 0; rm < N_RM; rm++)
            p_s1("fsqrt.s", fsqrt_s, rm, a);
    }
    for (unsigned i = 0; i < N_SPECIAL_S; i++)
        p_s1("fclass.s", fclass_s, 0, SPECIAL_S[i]);
    for (unsigned k = 0; k < 60; k++)
        p_s1("fclass.s", fclass_s, 0, random_s(k));

    /* Float -> integer: boundaries of both ranges, halfway cases, specials, random. */
    static const float CVT_S[] = {
        0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.49999997f, -0.49999997f,
        0.99999994f, -0.99999994f, 1.0f, -1.0f, 2147483520.0f, 2147483648.0f, -2147483648.0f,
        -2147483904.0f, 4294967040.0f, 4294967296.0f, 1e10f, -1e10f, 3.4028235e38f,
        -3.4028235e38f, 1e-40f, -1e-40f, 8388607.5f, -8388607.5f, 16777215.0f,
    };
    for (unsigned rm = 0; rm < N_RM; rm++) {
        for (unsigned i = 0; i < COUNT(CVT_S); i++) {
            p_s1("fcvt.w.s", fcvt_w_s, rm, bits_s(CVT_S[i]));
            p_s1("fcvt.wu.s", fcvt_wu_s, rm, bits_s(CVT_S[i]));
        }
        for (unsigned i = 0; i < N_SPECIAL_S; i++) {
            p_s1("fcvt.w.s", fcvt_w_s, rm, SPECIAL_S[i]);
            p_s1("fcvt.wu.s", fcvt_wu_s, rm, SPECIAL_S[i]);
        }
    }
    for (unsigned k = 0; k < 60; k++) {
        uint32_t a = random_s(k % 2 ? 4 : k);
        for (unsigned rm = 0; rm < N_RM; rm++) {
            p_s1("fcvt.w.s", fcvt_w_s, rm, a);
            p_s1("fcvt.wu.s", fcvt_wu_s, rm, a);
        }
    }
    /* Integer -> float. */
    for (unsigned rm = 0; rm < N_RM; rm++) {
        for (unsigned i = 0; i < N_SPECIAL_INT; i++) {
            p_s1("fcvt.s.w", fcvt_s_w, rm, SPECIAL_INT[i]);
            p_s1("fcvt.s.wu", fcvt_s_wu, rm, SPECIAL_INT[i]);
        }
    }
    for (unsigned k = 0; k < 60; k++) {
        uint32_t a = xorshift32();
        a >>= xorshift32() % 24;
        if (k & 1)
            a = (uint32_t)-(int32_t)a;
        for (unsigned rm = 0; rm < N_RM; rm++) {
            p_s1("fcvt.s.w", fcvt_s_w, rm, a);
            p_s1("fcvt.s.wu", fcvt_s_wu, rm, a);
        }
    }
}

static void double_suite(void)
{
    for (unsigned o = 0; o < COUNT(D_ROUNDED2); o++) {
        for (unsigned i = 0; i < N_SPECIAL_D; i++)
            for (unsigned j = 0; j < N_SPECIAL_D; j++)
                p_d2(D_ROUNDED2[o].name, D_ROUNDED2[o].fn, 0, SPECIAL_D[i], SPECIAL_D[j]);
        for (unsigned k = 0; k < 90; k++) {
            uint64_t a = random_d(k), b = random_d(k / 6 + k);
            for (unsigned rm = 0; rm < N_RM; rm++)
                p_d2(D_ROUNDED2[o].name, D_ROUNDED2[o].fn, rm, a, b);
        }
    }
    for (unsigned o = 0; o < COUNT(D_EXACT2); o++) {
        for (unsigned i = 0; i < N_SPECIAL_D; i++)
            for (unsigned j = 0; j < N_SPECIAL_D; j++)
                p_d2(D_EXACT2[o].name, D_EXACT2[o].fn, 0, SPECIAL_D[i], SPECIAL_D[j]);
        for (unsigned k = 0; k < 40; k++) {
            uint64_t a = random_d(k);
            uint64_t b = (k & 1) ? a ^ 0x8000000000000000ull : random_d(k + 3);
            p_d2(D_EXACT2[o].name, D_EXACT2[o].fn, 0, a, b);
        }
    }
    for (unsigned o = 0; o < COUNT(D_CMP); o++) {
        for (unsigned i = 0; i < N_SPECIAL_D; i++)
            for (unsigned j = 0; j < N_SPECIAL_D; j++)
                p_dx2(D_CMP[o].name, D_CMP[o].fn, 0, SPECIAL_D[i], SPECIAL_D[j]);
        for (unsigned k = 0; k < 40; k++) {
            uint64_t a = random_d(k);
            uint64_t b = (k & 1) ? a ^ 0x8000000000000000ull : random_d(k + 3);
            p_dx2(D_CMP[o].name, D_CMP[o].fn, 0, a, b);
        }
    }
    for (unsigned o = 0; o < COUNT(D_FUSED); o++) {
        for (unsigned i = 0; i < N_FMA_SPECIAL_D; i++)
            for (unsigned j = 0; j < N_FMA_SPECIAL_D; j++)
                for (unsigned k = 0; k < N_FMA_SPECIAL_D; k++)
                    p_d3(D_FUSED[o].name, D_FUSED[o].fn, 0, FMA_SPECIAL_D[i], FMA_SPECIAL_D[j],
                         FMA_SPECIAL_D[k]);
        for (unsigned k = 0; k < 60; k++) {
            uint64_t a = random_d(k), b = random_d(k + 1), c;
            if (k % 3 == 0) {
                unsigned f;
                c = fmul_d(0, a, b, &f) ^ 0x8000000000000000ull ^ (xorshift32() & 3);
            } else {
                c = random_d(k + 2);
            }
            for (unsigned rm = 0; rm < N_RM; rm++)
                p_d3(D_FUSED[o].name, D_FUSED[o].fn, rm, a, b, c);
        }
    }
    for (unsigned i = 0; i < N_SPECIAL_D; i++)
        p_d1("fsqrt.d", fsqrt_d, 0, SPECIAL_D[i]);
    for (unsigned k = 0; k < 80; k++) {
        uint64_t a = random_d(k);
        for (unsigned rm = 0; rm < N_RM; rm++)
            p_d1("fsqrt.d", fsqrt_d, rm, a);
    }
    for (unsigned i = 0; i < N_SPECIAL_D; i++)
        p_dx1("fclass.d", fclass_d, 0, SPECIAL_D[i]);
    for (unsigned k = 0; k < 60; k++)
        p_dx1("fclass.d", fclass_d, 0, random_d(k));

    static const double CVT_D[] = {
        0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994,
        1.0, -1.0, 2147483647.0, 2147483647.4, 2147483647.5, 2147483647.6, 2147483648.0,
        2147483648.5, -2147483648.0, -2147483648.4, -2147483648.5, -2147483648.6, -2147483649.0,
        4294967295.0, 4294967295.4, 4294967295.5, 4294967295.6, 4294967296.0, -0.4, -0.6,
        -1.5, 1e300, -1e300, 5e-324, -5e-324,
    };
    for (unsigned rm = 0; rm < N_RM; rm++) {
        for (unsigned i = 0; i < COUNT(CVT_D); i++) {
            p_dx1("fcvt.w.d", fcvt_w_d, rm, bits_d(CVT_D[i]));
            p_dx1("fcvt.wu.d", fcvt_wu_d, rm, bits_d(CVT_D[i]));
        }
        for (unsigned i = 0; i < N_SPECIAL_D; i++) {
            p_dx1("fcvt.w.d", fcvt_w_d, rm, SPECIAL_D[i]);
            p_dx1("fcvt.wu.d", fcvt_wu_d, rm, SPECIAL_D[i]);
        }
    }
    for (unsigned k = 0; k < 60; k++) {
        uint64_t a = random_d(k % 2 ? 4 : k);
        for (unsigned rm = 0; rm < N_RM; rm++) {
            p_dx1("fcvt.w.d", fcvt_w_d, rm, a);
            p_dx1("fcvt.wu.d", fcvt_wu_d, rm, a);
        }
    }
    /* Integer -> double is exact: one rounding mode suffices, but run two to be sure. */
    for (unsigned rm = 0; rm < 2; rm++) {
        for (unsigned i = 0; i < N_SPECIAL_INT; i++) {
            p_dfx("fcvt.d.w", fcvt_d_w, rm, SPECIAL_INT[i]);
            p_dfx("fcvt.d.wu", fcvt_d_wu, rm, SPECIAL_INT[i]);
        }
        for (unsigned k = 0; k < 30; k++) {
            uint32_t a = xorshift32();
            p_dfx("fcvt.d.w", fcvt_d_w, rm, a);
            p_dfx("fcvt.d.wu", fcvt_d_wu, rm, a);
        }
    }
}

static void conversion_suite(void)
{
    /* double -> single: rounding, overflow, underflow, NaN canonicalisation. */
    for (unsigned rm = 0; rm < N_RM; rm++) {
        for (unsigned i = 0; i < N_SPECIAL_D; i++) {
            unsigned f;
            uint32_t r = fcvt_s_d(rm, SPECIAL_D[i], &f);
            printf("fcvt.s.d %u %016llx -> %08x %02x\n", rm, (unsigned long long)SPECIAL_D[i],
                   r, f);
        }
        for (unsigned k = 0; k < 100; k++) {
            uint64_t a = (k % 4 == 3) ? random_d(k) : random_d_single_range();
            unsigned f;
            uint32_t r = fcvt_s_d(rm, a, &f);
            printf("fcvt.s.d %u %016llx -> %08x %02x\n", rm, (unsigned long long)a, r, f);
        }
    }
    /* single -> double: exact. */
    for (unsigned i = 0; i < N_SPECIAL_S; i++) {
        unsigned f;
        uint64_t r = fcvt_d_s(0, SPECIAL_S[i], &f);
        printf("fcvt.d.s 0 %08x -> %016llx %02x\n", SPECIAL_S[i], (unsigned long long)r, f);
    }
    for (unsigned k = 0; k < 60; k++) {
        uint32_t a = random_s(k);
        unsigned f;
        uint64_t r = fcvt_d_s(0, a, &f);
        printf("fcvt.d.s 0 %08x -> %016llx %02x\n", a, (unsigned long long)r, f);
    }
}

/* Raw register contents: properly boxed, improperly boxed, and D values read as S. */
static const uint64_t RAW[] = {
    0xffffffff3f800000ull, /* boxed 1.0 */
    0xffffffffbfc00000ull, /* boxed -1.5 */
    0xffffffff7f800001ull, /* boxed sNaN */
    0xffffffff80000000ull, /* boxed -0 */
    0x000000003f800000ull, /* 1.0, upper half zero: not boxed */
    0xfffffffe3f800000ull, /* one bit short of boxed */
    0x7fffffffbf800000ull, /* sign bit of the box clear */
    0x3ff0000000000000ull, /* the double 1.0 */
    0xbff8000000000000ull, /* the double -1.5 */
    0x7ff0000000000001ull, /* a double sNaN */
    0xffffffff7fc00000ull, /* boxed canonical NaN */
};
#define N_RAW (sizeof RAW / sizeof RAW[0])

static void box_print2(const char *op, uint64_t (*fn)(unsigned, uint64_t, uint64_t, unsigned *),
                       uint64_t a, uint64_t b)
{
    unsigned f;
    uint64_t r = fn(0, a, b, &f);
    printf("%s 0 %016llx %016llx -> %016llx %02x\n", op, (unsigned long long)a,
           (unsigned long long)b, (unsigned long long)r, f);
}

static void boxing_suite(void)
{
    for (unsigned i = 0; i < N_RAW; i++) {
        for (unsigned j = 0; j < N_RAW; j++) {
            box_print2("fadd.s.box", box_fadd_s, RAW[i], RAW[j]);
            box_print2("fmin.s.box", box_fmin_s, RAW[i], RAW[j]);
            box_print2("fsgnj.s.box", box_fsgnj_s, RAW[i], RAW[j]);
            box_print2("fsgnjn.s.box", box_fsgnjn_s, RAW[i], RAW[j]);
            box_print2("fsgnjx.s.box", box_fsgnjx_s, RAW[i], RAW[j]);
            unsigned f;
            uint32_t r = box_feq_s(0, RAW[i], RAW[j], &f);
            printf("feq.s.box 0 %016llx %016llx -> %08x %02x\n", (unsigned long long)RAW[i],
                   (unsigned long long)RAW[j], r, f);
        }
        unsigned f;
        uint64_t r64 = box_fsqrt_s(0, RAW[i], &f);
        printf("fsqrt.s.box 0 %016llx -> %016llx %02x\n", (unsigned long long)RAW[i],
               (unsigned long long)r64, f);
        r64 = box_fcvt_d_s(0, RAW[i], &f);
        printf("fcvt.d.s.box 0 %016llx -> %016llx %02x\n", (unsigned long long)RAW[i],
               (unsigned long long)r64, f);
        r64 = box_fcvt_s_d(0, RAW[i], &f);
        printf("fcvt.s.d.box 0 %016llx -> %016llx %02x\n", (unsigned long long)RAW[i],
               (unsigned long long)r64, f);
        uint32_t r = box_fclass_s(0, RAW[i], &f);
        printf("fclass.s.box 0 %016llx -> %08x %02x\n", (unsigned long long)RAW[i], r, f);
        r = box_fmv_x_w(0, RAW[i], &f);
        printf("fmv.x.w.box 0 %016llx -> %08x %02x\n", (unsigned long long)RAW[i], r, f);
        r = box_fcvt_w_s(0, RAW[i], &f);
        printf("fcvt.w.s.box 0 %016llx -> %08x %02x\n", (unsigned long long)RAW[i], r, f);
    }
    static const uint32_t MV[] = {0x3f800000, 0x7f800001, 0xffffffff, 0x00000000, 0x80000000};
    for (unsigned i = 0; i < COUNT(MV); i++) {
        unsigned f;
        uint64_t r = box_fmv_w_x(0, MV[i], &f);
        printf("fmv.w.x.box 0 %08x -> %016llx %02x\n", MV[i], (unsigned long long)r, f);
    }
}

int main(void)
{
    single_suite();
    double_suite();
    conversion_suite();
    boxing_suite();
    /* Leave the environment as found. */
    __asm__ volatile("fsrm zero\n\tfsflags zero");
    return 0;
}
