/* bench: compute benchmark for user mode (not a test). Integer sections: crc32 over a
 * buffer, a multiply/divide loop, a sieve of Eratosthenes, quicksort of pseudo-random ints;
 * floating-point sections: an n-body simulation and a matrix multiply in double, and a float
 * sqrt/div loop. Each section prints a checksum; scripts/bench-user.sh times the whole run.
 *
 * Usage: bench [SCALE] [SECTION...]   (SCALE multiplies the work, default 1; sections by
 * name, default all). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "guest_util.h"

static int scale = 1;

static uint32_t crc_table[256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t bench_crc32(void) {
    static uint8_t buf[1 << 16];
    uint32_t seed = 1;
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)xorshift32(&seed);
    crc_init();
    uint32_t crc = 0xffffffffu;
    for (int pass = 0; pass < 300 * scale; pass++) {
        for (size_t i = 0; i < sizeof buf; i++)
            crc = crc_table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
        buf[pass % sizeof buf] ^= (uint8_t)crc;
    }
    return ~crc;
}

static uint32_t bench_muldiv(void) {
    uint32_t acc = 12345, seed = 7;
    int32_t sacc = -987;
    for (int i = 0; i < 8000000 * scale; i++) {
        uint32_t r = xorshift32(&seed) | 1;
        acc = acc * r + (acc / (r >> 20 | 1)) + acc % 1000003u;
        sacc = sacc / (int32_t)((r & 0xff) | 1) * 3 + (int32_t)(r >> 16) - sacc % 97;
        acc += (uint32_t)(((uint64_t)acc * r) >> 32);
    }
    return acc ^ (uint32_t)sacc;
}

static uint32_t bench_sieve(void) {
    const uint32_t limit = 4000000;
    uint8_t *composite = malloc(limit + 1);
    uint32_t h = FNV_INIT, count = 0;
    for (int round = 0; round < 2 * scale; round++) {
        memset(composite, 0, limit + 1);
        count = 0;
        for (uint32_t i = 2; i <= limit; i++) {
            if (composite[i])
                continue;
            count++;
            h = fnv_word(h, i);
            for (uint32_t j = i * 2; j <= limit; j += i)
                composite[j] = 1;
        }
    }
    free(composite);
    return h ^ count;
}

static void quicksort(int32_t *a, int lo, int hi) {
    while (lo < hi) {
        int32_t pivot = a[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                int32_t t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        /* Recurse into the smaller half, loop on the larger one. */
        if (j - lo < hi - i) {
            quicksort(a, lo, j);
            lo = i;
        } else {
            quicksort(a, i, hi);
            hi = j;
        }
    }
}

static uint32_t bench_qsort(void) {
    const int n = 400000;
    int32_t *a = malloc(sizeof(int32_t) * (size_t)n);
    uint32_t h = FNV_INIT, seed = 99;
    for (int round = 0; round < 2 * scale; round++) {
        for (int i = 0; i < n; i++)
            a[i] = (int32_t)xorshift32(&seed);
        quicksort(a, 0, n - 1);
        for (int i = 0; i < n; i += 97)
            h = fnv_word(h, (uint32_t)a[i]);
    }
    free(a);
    return h;
}

struct body {
    double x, y, z, vx, vy, vz, mass;
};

static uint32_t bench_nbody(void) {
    const double pi = 3.141592653589793, solar_mass = 4 * pi * pi, days = 365.24;
    struct body b[5] = {
        {0, 0, 0, 0, 0, 0, solar_mass},
        {4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01,
         1.66007664274403694e-03 * days, 7.69901118419740425e-03 * days,
         -6.90460016972063023e-05 * days, 9.54791938424326609e-04 * solar_mass},
        {8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01,
         -2.76742510726862411e-03 * days, 4.99852801234917238e-03 * days,
         2.30417297573763929e-05 * days, 2.85885980666130812e-04 * solar_mass},
        {1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01,
         2.96460137564761618e-03 * days, 2.37847173959480950e-03 * days,
         -2.96589568540237556e-05 * days, 4.36624404335156298e-05 * solar_mass},
        {1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01,
         2.68067772490389322e-03 * days, 1.62824170038242295e-03 * days,
         -9.51592254519715870e-05 * days, 5.15138902046611451e-05 * solar_mass},
    };
    double px = 0, py = 0, pz = 0;
    for (int i = 0; i < 5; i++) {
        px += b[i].vx * b[i].mass;
        py += b[i].vy * b[i].mass;
        pz += b[i].vz * b[i].mass;
    }
    b[0].vx = -px / solar_mass;
    b[0].vy = -py / solar_mass;
    b[0].vz = -pz / solar_mass;
    const double dt = 0.01;
    for (int step = 0; step < 80000 * scale; step++) {
        for (int i = 0; i < 5; i++) {
            for (int j = i + 1; j < 5; j++) {
                double dx = b[i].x - b[j].x, dy = b[i].y - b[j].y, dz = b[i].z - b[j].z;
                double d2 = dx * dx + dy * dy + dz * dz;
                double mag = dt / (d2 * sqrt(d2));
                b[i].vx -= dx * b[j].mass * mag;
                b[i].vy -= dy * b[j].mass * mag;
                b[i].vz -= dz * b[j].mass * mag;
                b[j].vx += dx * b[i].mass * mag;
                b[j].vy += dy * b[i].mass * mag;
                b[j].vz += dz * b[i].mass * mag;
            }
        }
        for (int i = 0; i < 5; i++) {
            b[i].x += dt * b[i].vx;
            b[i].y += dt * b[i].vy;
            b[i].z += dt * b[i].vz;
        }
    }
    double e = 0;
    for (int i = 0; i < 5; i++) {
        e += 0.5 * b[i].mass * (b[i].vx * b[i].vx + b[i].vy * b[i].vy + b[i].vz * b[i].vz);
        for (int j = i + 1; j < 5; j++) {
            double dx = b[i].x - b[j].x, dy = b[i].y - b[j].y, dz = b[i].z - b[j].z;
            e -= b[i].mass * b[j].mass / sqrt(dx * dx + dy * dy + dz * dz);
        }
    }
    printf("  nbody energy %.9f\n", e);
    uint64_t bits;
    memcpy(&bits, &e, sizeof bits);
    return (uint32_t)bits ^ (uint32_t)(bits >> 32);
}

static uint32_t bench_matmul(void) {
    enum { N = 160 };
    static double a[N][N], bm[N][N], c[N][N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = (double)((i * 7 + j * 3) % 17) / 16.0 - 0.5;
            bm[i][j] = (double)((i * 5 + j * 11) % 13) / 12.0 + 0.25;
        }
    double trace = 0;
    for (int round = 0; round < 3 * scale; round++) {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                c[i][j] = 0;
        for (int i = 0; i < N; i++)
            for (int k = 0; k < N; k++) {
                double aik = a[i][k];
                for (int j = 0; j < N; j++)
                    c[i][j] += aik * bm[k][j];
            }
        for (int i = 0; i < N; i++) {
            trace += c[i][i];
            a[i][(i + round) % N] += c[i][i] * 1e-3;
        }
    }
    printf("  matmul trace %.6f\n", trace);
    uint64_t bits;
    memcpy(&bits, &trace, sizeof bits);
    return (uint32_t)bits ^ (uint32_t)(bits >> 32);
}

static uint32_t bench_float(void) {
    float acc = 0.0f, x = 1.0f;
    for (int i = 0; i < 1000000 * scale; i++) {
        x = x * 1.0000001f + 0.5f;
        acc += sqrtf(x) / (x + 1.0f);
        if (x > 1e6f)
            x = 1.0f + acc * 1e-6f;
    }
    printf("  float acc %.3f\n", (double)acc);
    uint32_t bits;
    memcpy(&bits, &acc, sizeof bits);
    return bits;
}

static const struct {
    const char *name;
    uint32_t (*fn)(void);
} sections[] = {
    {"crc32", bench_crc32}, {"muldiv", bench_muldiv}, {"sieve", bench_sieve},
    {"qsort", bench_qsort}, {"nbody", bench_nbody},   {"matmul", bench_matmul},
    {"float", bench_float},
};

int main(int argc, char **argv) {
    if (argc > 1)
        scale = atoi(argv[1]) > 0 ? atoi(argv[1]) : 1;
    for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
        int wanted = argc <= 2;
        for (int a = 2; a < argc; a++)
            wanted |= strcmp(argv[a], sections[s].name) == 0;
        if (!wanted)
            continue;
        uint32_t sum = sections[s].fn();
        printf("%-7s checksum %08x\n", sections[s].name, sum);
        fflush(stdout);
    }
    return 0;
}
