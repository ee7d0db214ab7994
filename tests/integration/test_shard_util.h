/*
 * test_shard_util.h — helpers of the sharded list and watch tests of the embedded API server
 * (test_server_api_shard_*.c; KEP-5866, controller-semantics S1–S14), header-only, static:
 * the i-th of n even ranges as a selector (canonical text and a non-canonical spelling of the same
 * selector: double quotes, extra blanks), the shardSelector query parameter percent-encoded, and
 * the shard key and hash of an item as returned by the server.
 */
#ifndef KC_TEST_SHARD_UTIL_H
#define KC_TEST_SHARD_UTIL_H

#include "kcache/shard.h"
#include "test_server_util.h"

#define SH_UID "object.metadata.uid"
#define SH_NS  "object.metadata.namespace"

/* One shard of an even n-way split on a field. */
typedef struct sh_shard {
    kc_shard_field field;
    kc_shard_range range;
    char canonical[256]; /* what the server must echo (S8) */
    char sloppy[256];    /* the same selector, double-quoted and with extra blanks (S2) */
    char param[768];     /* "shardSelector=<sloppy, percent-encoded>" */
} sh_shard;

static void sh_bound(char *out, size_t cap, uint64_t v, bool max)
{
    if (max)
        snprintf(out, cap, "0x10000000000000000");
    else
        snprintf(out, cap, "0x%016llx", (unsigned long long)v);
}

/* Percent-encode text into out (query value). */
TS_UNUSED static void sh_escape(const char *text, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p && k + 4 < cap; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '.' || *p == '_' || *p == '-') {
            out[k++] = (char)*p;
        } else {
            out[k++] = '%';
            out[k++] = hex[*p >> 4];
            out[k++] = hex[*p & 15];
        }
    }
    out[k] = 0;
}

/* "shardSelector=<text percent-encoded>" into out. */
TS_UNUSED static void sh_param(const char *text, char *out, size_t cap)
{
    char enc[700];
    sh_escape(text, enc, sizeof(enc));
    snprintf(out, cap, "shardSelector=%s", enc);
}

/* Shard i of n on field. */
TS_UNUSED static void sh_shard_init(sh_shard *sh, kc_shard_field field, uint64_t n, uint64_t i)
{
    memset(sh, 0, sizeof(*sh));
    sh->field = field;
    assert_int_equal(kc_shard_range_split(n, i, &sh->range), 0);
    const char *f = field == KC_SHARD_FIELD_UID ? SH_UID : SH_NS;
    char lo[24], hi[24];
    sh_bound(lo, sizeof(lo), sh->range.start, false);
    sh_bound(hi, sizeof(hi), sh->range.end, sh->range.end_max);
    snprintf(sh->canonical, sizeof(sh->canonical), "shardRange(%s, '%s', '%s')", f, lo, hi);
    snprintf(sh->sloppy, sizeof(sh->sloppy), "  shardRange( %s ,\"%s\",   \"%s\" ) ", f, lo, hi);
    sh_param(sh->sloppy, sh->param, sizeof(sh->param));
    /* the canonical form the library renders agrees with the one built here */
    kc_shard_selector *sel = NULL;
    assert_int_equal(kc_shard_selector_new(field, &sh->range, 1, &sel, NULL), 0);
    assert_string_equal(kc_shard_selector_string(sel), sh->canonical);
    kc_shard_selector_free(sel);
}

/* The shard key of a returned item (uid, or namespace "" when cluster-scoped). Borrowed. */
TS_UNUSED static const char *sh_key(json_t *item, kc_shard_field field)
{
    return ts_s(item, field == KC_SHARD_FIELD_UID ? "metadata.uid" : "metadata.namespace");
}

/* Does the item hash into sh's range (S6, S7)? */
TS_UNUSED static bool sh_in(const sh_shard *sh, json_t *item)
{
    const char *k = sh_key(item, sh->field);
    return kc_shard_range_contains(&sh->range, kc_shard_hash(k, strlen(k)));
}

#endif
