/*
 * fuzz_status.c — libFuzzer target for metav1.Status parsing.
 *
 * Parses arbitrary bytes (exact-size copy) as a Status into a kc_error that already holds data
 * (the parser must release it), and checks the result is consistent: 0 or a negative code equal to
 * err.code, causes counted, every string NUL-terminated (read with strlen).
 */
#include "kcache/decode.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t slen(const char *s)
{
    return s ? strlen(s) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    kc_error err = KC_ERROR_INIT;
    kc_error_set(&err, KC_EIO, "previous error %d", 1);
    int rc = kc_status_parse(copy, size, &err);
    if (rc > 0 || (rc < 0 && err.code != rc))
        abort();
    size_t total = slen(err.reason) + slen(err.message) + slen(err.name) + slen(err.group) +
                   slen(err.kind) + slen(err.uid);
    for (size_t i = 0; i < err.n_causes; i++)
        total +=
            slen(err.causes[i].reason) + slen(err.causes[i].message) + slen(err.causes[i].field);
    if (err.n_causes && !err.causes)
        abort();
    (void)total;
    kc_error_clear(&err);
    free(copy);
    return 0;
}
