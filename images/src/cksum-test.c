/*
 * cksum-test: a deterministic self-checking workload for the rv32vm guest images.
 *
 * Fills a 1 MiB buffer from a xorshift32 generator, then prints checksums of it that exercise
 * integer ALU/shift code (CRC-32, FNV-1a), 64-bit multiply/divide (which rv32 does in software
 * helpers) and the FPU (a sum of square roots in double precision). Every operation is exact or
 * IEEE-754 correctly rounded in a fixed order, so the output is the same on any conforming
 * machine: the build script compiles this file for the host as well and uses the host's output
 * as the expected one (see images/manifest.txt).
 *
 * It also checks CRC-32 against the standard check value (CRC-32 of "123456789" is 0xcbf43926)
 * and exits with status 1 if that fails.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BUFFER_BYTES (1u << 20)
#define SQRT_TERMS 100000u

static uint8_t buffer[BUFFER_BYTES];
static uint32_t crc_table[256];

static void crc32_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[n] = c;
	}
}

static uint32_t crc32(const uint8_t *data, size_t len)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < len; i++)
		c = crc_table[(c ^ data[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static uint32_t fnv1a32(const uint8_t *data, size_t len)
{
	uint32_t h = 0x811c9dc5u;
	for (size_t i = 0; i < len; i++) {
		h ^= data[i];
		h *= 0x01000193u;
	}
	return h;
}

/* 64-bit arithmetic the compiler lowers to multi-word multiply and library division on rv32. */
static uint64_t mix64(const uint8_t *data, size_t len)
{
	uint64_t acc = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t word = 0;
		for (int b = 7; b >= 0; b--)
			word = (word << 8) | data[i + (size_t)b];
		acc ^= word;
		acc *= 0xff51afd7ed558ccdull;
		acc ^= acc >> 33;
		if ((i & 0xffff) == 0)
			acc += acc / 1000003ull + acc % 65521ull;
	}
	return acc;
}

static double sqrt_sum(void)
{
	double sum = 0.0;
	for (uint32_t i = 1; i <= SQRT_TERMS; i++)
		sum += sqrt((double)i) / (double)i;
	return sum;
}

int main(void)
{
	static const char check_input[] = "123456789";
	uint32_t state = 0x12345678u;

	crc32_init();
	for (size_t i = 0; i < BUFFER_BYTES; i += 4) {
		state ^= state << 13;
		state ^= state >> 17;
		state ^= state << 5;
		buffer[i] = (uint8_t)state;
		buffer[i + 1] = (uint8_t)(state >> 8);
		buffer[i + 2] = (uint8_t)(state >> 16);
		buffer[i + 3] = (uint8_t)(state >> 24);
	}

	uint32_t check = crc32((const uint8_t *)check_input, strlen(check_input));
	printf("cksum-test: crc32=%08x fnv1a=%08x mix64=%016llx sqrtsum=%.17g\n",
	       (unsigned)crc32(buffer, BUFFER_BYTES), (unsigned)fnv1a32(buffer, BUFFER_BYTES),
	       (unsigned long long)mix64(buffer, BUFFER_BYTES), sqrt_sum());
	if (check != 0xcbf43926u) {
		printf("cksum-test: self-check FAILED (crc32 of \"123456789\" = %08x)\n", (unsigned)check);
		return 1;
	}
	printf("cksum-test: self-check ok\n");
	return 0;
}
