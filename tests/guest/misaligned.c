/* misaligned: halfword/word/double accesses at every misaligned offset. Packed structs and
 * volatile casted pointers make the compiler emit plain lh/lw/sh/sw/fld/fsd on misaligned
 * addresses; Linux (and qemu-user) complete them, so must rv32vm with or without -m. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "guest_util.h"

struct __attribute__((packed)) packed_rec {
    uint8_t tag;
    uint32_t word;
    uint16_t half;
    uint64_t dword;
    double real;
    float single;
};

static uint8_t arena[64] __attribute__((aligned(16)));

/* Force a real lw/sw: the packed attribute would make the compiler use byte accesses, so cast
 * through a plain (naturally-aligned type) volatile pointer instead. */
static uint32_t load32(unsigned off) { return *(volatile uint32_t *)(void *)(arena + off); }
static uint32_t load16(unsigned off) { return *(volatile uint16_t *)(void *)(arena + off); }
static int32_t load16s(unsigned off) { return *(volatile int16_t *)(void *)(arena + off); }
static void store32(unsigned off, uint32_t v) { *(volatile uint32_t *)(void *)(arena + off) = v; }
static void store16(unsigned off, uint16_t v) { *(volatile uint16_t *)(void *)(arena + off) = v; }
static double loadf64(unsigned off) { return *(volatile double *)(void *)(arena + off); }
static void storef64(unsigned off, double v) { *(volatile double *)(void *)(arena + off) = v; }
static float loadf32(unsigned off) { return *(volatile float *)(void *)(arena + off); }
static void storef32(unsigned off, float v) { *(volatile float *)(void *)(arena + off) = v; }

static void reset(void) {
    for (unsigned i = 0; i < sizeof arena; i++)
        arena[i] = (uint8_t)(i * 17 + 1);
}

static void dump(const char *label) {
    printf("%s:", label);
    for (unsigned i = 0; i < 24; i++)
        printf(" %02x", arena[i]);
    printf("\n");
}

int main(void) {
    reset();
    for (unsigned off = 0; off < 8; off++)
        printf("off %u: lw=%08x lhu=%04x lh=%d\n", off, load32(off), load16(off), load16s(off));

    for (unsigned off = 1; off < 8; off++) {
        reset();
        store32(off, 0xa1b2c3d4u + off);
        store16(off + 9, (uint16_t)(0xbeef ^ off));
        char label[32];
        snprintf(label, sizeof label, "stores at %u", off);
        dump(label);
    }

    for (unsigned off = 0; off < 8; off++) {
        reset();
        storef64(off, 1.0 / (off + 3));
        storef32(off + 12, (float)off * 1.25f);
        printf("fp off %u: %.17g %g\n", off, loadf64(off), (double)loadf32(off + 12));
    }

    /* A buffer of packed records parsed from unaligned bytes. */
    uint8_t raw[sizeof(struct packed_rec) * 5 + 3];
    for (unsigned i = 0; i < sizeof raw; i++)
        raw[i] = (uint8_t)(i * 31 + 7);
    struct packed_rec recs[5];
    memcpy(recs, raw + 3, sizeof recs);
    for (int i = 0; i < 5; i++) {
        volatile struct packed_rec *r = &recs[i];
        uint32_t w = *(volatile uint32_t *)(void *)&r->word;
        uint16_t hw = *(volatile uint16_t *)(void *)&r->half;
        uint64_t dw = *(volatile uint64_t *)(void *)&r->dword;
        printf("rec %d tag=%02x word=%08x half=%04x dword=%016llx\n", i, r->tag, w, hw,
               (unsigned long long)dw);
        *(volatile uint32_t *)(void *)&r->word = w ^ 0xffffffffu;
    }
    printf("rec hash after updates %08x\n", fnv_bytes(FNV_INIT, recs, sizeof recs));

    /* Many misaligned accesses: a checksum over a sliding window. */
    static uint8_t big[4096 + 8];
    uint32_t seed = 3;
    for (unsigned i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)xorshift32(&seed);
    uint32_t h = 0;
    for (unsigned i = 0; i + 4 <= 4096; i++) {
        uint32_t v = *(volatile uint32_t *)(void *)(big + i);
        h = h * 33 + v;
        *(volatile uint16_t *)(void *)(big + i + 1) = (uint16_t)(v >> 7);
    }
    printf("sliding window hash %08x\n", h);

    /* Crossing a page boundary. */
    static uint8_t pages[8192] __attribute__((aligned(4096)));
    for (unsigned i = 0; i < 16; i++)
        pages[4088 + i] = (uint8_t)(0x10 + i);
    for (unsigned off = 4093; off < 4096; off++) {
        uint32_t v = *(volatile uint32_t *)(void *)(pages + off);
        *(volatile uint32_t *)(void *)(pages + off) = v + 0x01010101u;
        printf("page-crossing word at %u: %08x -> %08x\n", off, v,
               *(volatile uint32_t *)(void *)(pages + off));
    }
    return 0;
}
