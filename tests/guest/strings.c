/* strings: <string.h> and <ctype.h> functions over many lengths and alignments (musl's
 * word-at-a-time paths), plus strtok, strstr, memmem, strdup, case conversion. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "guest_util.h"

int main(void) {
    char buf[300], buf2[300];
    uint32_t h = FNV_INIT;
    /* strlen/memcpy/memmove/memset/memcmp/strchr/strrchr for every offset and length. */
    for (int off = 0; off < 8; off++) {
        for (int len = 0; len < 70; len++) {
            memset(buf, 0, sizeof buf);
            for (int i = 0; i < len; i++)
                buf[off + i] = (char)('a' + (i * 7 + off) % 26);
            h = fnv_word(h, (uint32_t)strlen(buf + off));
            memcpy(buf2 + (7 - off), buf + off, (size_t)len + 1);
            h = fnv_word(h, (uint32_t)memcmp(buf2 + (7 - off), buf + off, (size_t)len + 1));
            char *c = strchr(buf + off, 'q');
            h = fnv_word(h, c ? (uint32_t)(c - (buf + off)) : 0xffffffffu);
            c = strrchr(buf + off, 'e');
            h = fnv_word(h, c ? (uint32_t)(c - (buf + off)) : 0xffffffffu);
            c = memchr(buf + off, 'z', (size_t)len);
            h = fnv_word(h, c ? (uint32_t)(c - (buf + off)) : 0xffffffffu);
            memmove(buf + off + 3, buf + off, (size_t)len);
            h = fnv_bytes(h, buf, sizeof buf);
            memmove(buf + off, buf + off + 5, (size_t)len);
            h = fnv_bytes(h, buf, sizeof buf);
            memset(buf + off, off, (size_t)len);
            h = fnv_bytes(h, buf, sizeof buf);
        }
    }
    printf("sweep hash %08x\n", h);

    printf("strcmp: %d %d %d\n", strcmp("abc", "abd") < 0, strcmp("b", "a") > 0,
           strcmp("same", "same"));
    printf("strncmp: %d strcasecmp: %d strncasecmp: %d\n", strncmp("abcX", "abcY", 3),
           strcasecmp("HeLLo", "hello"), strncasecmp("ABCd", "abce", 3));
    printf("memcmp sign with high bytes: %d\n", memcmp("\x80", "\x01", 1) > 0);
    printf("strstr: %s | %d\n", strstr("the quick brown fox", "brown"),
           strstr("aaa", "aaaa") == NULL);
    printf("memmem: %s\n", (char *)memmem("xxabcabcd", 9, "abcd", 4));
    printf("strspn %zu strcspn %zu strpbrk %s\n", strspn("aabbccdd", "ab"),
           strcspn("hello, world", ",!"), strpbrk("hello, world", "ow"));

    char tok[] = "  alpha, beta,,gamma ;delta  ";
    char *save = NULL;
    for (char *t = strtok_r(tok, " ,;", &save); t; t = strtok_r(NULL, " ,;", &save))
        printf("token [%s]\n", t);

    char *dup = strdup("duplicate me");
    char *ndup = strndup("truncate here", 8);
    printf("strdup %s strndup %s\n", dup, ndup);
    free(dup);
    free(ndup);

    char cat[64] = "start";
    strcat(cat, "-middle");
    strncat(cat, "-endXXXX", 4);
    printf("cat %s len %zu\n", cat, strlen(cat));
    char cpy[16];
    memset(cpy, '#', sizeof cpy);
    strncpy(cpy, "abc", 6);
    printf("strncpy pads: %d %d %d %c\n", cpy[3], cpy[4], cpy[5], cpy[6]);
    printf("stpcpy returns end: %td\n", stpcpy(cpy, "12345") - cpy);
    printf("strnlen %zu %zu\n", strnlen("abcdef", 3), strnlen("ab", 10));

    /* ctype in the C locale. */
    int counts[6] = {0};
    for (int c = 0; c < 256; c++) {
        counts[0] += !!isalpha(c);
        counts[1] += !!isdigit(c);
        counts[2] += !!isspace(c);
        counts[3] += !!ispunct(c);
        counts[4] += !!isprint(c);
        counts[5] += toupper(c) != c;
    }
    printf("ctype counts: alpha %d digit %d space %d punct %d print %d upper-changes %d\n",
           counts[0], counts[1], counts[2], counts[3], counts[4], counts[5]);
    char mixed[] = "MiXeD cAsE 123";
    for (char *p = mixed; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    printf("lower: %s\n", mixed);
    printf("ffs %d %d strerror(2)=%s\n", ffs(0x80), ffs(0), strerror(2));
    return 0;
}
