/*
 * fuzz_shard_selector.c — libFuzzer target for the shardSelector parser (kcache/shard.h).
 *
 * Parses arbitrary bytes (NUL-terminated copy). A rejection must carry a message and an offset
 * inside the text. When the text parses: every term is a non-empty range, the canonical string
 * parses again to the same string with the same ranges, a selector built from the parsed ranges
 * prints the same text, and matching agrees with the ranges for a few hashes (each term's start,
 * the value below it, and the FNV-1a of the input itself).
 */
#include "kcache/shard.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool in_any(const kc_shard_selector *s, uint64_t h)
{
    for (size_t i = 0; i < kc_shard_selector_count(s); i++)
        if (kc_shard_range_contains(kc_shard_selector_range(s, i), h))
            return true;
    return false;
}

static void check_parsed(const kc_shard_selector *sel, const uint8_t *data, size_t size)
{
    size_t n = kc_shard_selector_count(sel);
    const char *s1 = kc_shard_selector_string(sel);
    if (n == 0 || !s1)
        abort();
    kc_shard_range *r = malloc(n * sizeof *r);
    if (!r)
        return;
    for (size_t i = 0; i < n; i++) {
        r[i] = *kc_shard_selector_range(sel, i);
        if (!r[i].end_max && r[i].start >= r[i].end)
            abort();
    }
    kc_shard_selector *again = NULL, *built = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_shard_selector_parse(s1, &again, &err) != 0) {
        fprintf(stderr, "canonical form \"%s\" does not parse: %s\n", s1, err.message);
        abort();
    }
    if (strcmp(kc_shard_selector_string(again), s1) != 0 || kc_shard_selector_count(again) != n)
        abort();
    if (kc_shard_selector_new(kc_shard_selector_field(sel), r, n, &built, &err) != 0 ||
        strcmp(kc_shard_selector_string(built), s1) != 0)
        abort();
    uint64_t probe[3] = {r[0].start, r[0].start - 1, kc_shard_hash(data, size)};
    for (int k = 0; k < 3; k++)
        if (kc_shard_selector_match_hash(sel, probe[k]) != in_any(sel, probe[k]) ||
            kc_shard_selector_match_hash(again, probe[k]) != in_any(sel, probe[k]))
            abort();
    kc_shard_selector_free(again);
    kc_shard_selector_free(built);
    free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    kc_shard_selector *sel = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_shard_selector_parse(text, &sel, &err) != 0) {
        if (!err.message || err.offset < 0 || (size_t)err.offset > strlen(text))
            abort();
        kc_error_clear(&err);
    } else {
        check_parsed(sel, data, size);
        kc_shard_selector_free(sel);
    }
    free(text);
    return 0;
}
