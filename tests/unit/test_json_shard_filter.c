/*
 * test_json_shard_filter.c — the decoders' hash-range filter and the shardInfo echo
 * (json/decode_internal.h; controller-semantics S8, S13.1, S13.2): list items and data events
 * outside the ranges are dropped unbuilt, the kept ones are byte for byte what an unfiltered
 * decode gives, BOOKMARK and ERROR events always pass, an absent field hashes as "" (S6), and
 * metadata.shardInfo.selector is reported exactly as sent by the server.
 */
#include "json/decode_internal.h"
#include "json/obj_internal.h"
#include "kcache/shard.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define NITEMS 16

typedef struct got {
    char *json[64];
    char *name[64];
    size_t n;
} got;

static int keep_cb(void *ud, kc_obj *o)
{
    got *g = ud;
    g->json[g->n] = strdup(kc_obj_json(o, NULL));
    g->name[g->n] = strdup(kc_obj_name(o));
    g->n++;
    kc_obj_unref(o);
    return 0;
}

static void got_free(got *g)
{
    for (size_t i = 0; i < g->n; i++) {
        free(g->json[i]);
        free(g->name[i]);
    }
    memset(g, 0, sizeof(*g));
}

static void uid_of(int i, char *buf, size_t cap)
{
    snprintf(buf, cap, "%08x-1111-4222-8333-%012d", 0x1234567u * (unsigned)(i + 1), i);
}

/* A LIST body of NITEMS ConfigMaps (uid i; item 3 without a uid), with metadata members after
 * the uid (labels, annotations, managedFields) and a spec, and the given list metadata extra. */
static char *list_body(const char *meta_extra)
{
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    n += (size_t)snprintf(b + n, cap - n,
                          "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{"
                          "\"resourceVersion\":\"77\"%s},\"items\":[",
                          meta_extra);
    for (int i = 0; i < NITEMS; i++) {
        char uid[64];
        uid_of(i, uid, sizeof uid);
        char uidm[96] = "";
        if (i != 3)
            snprintf(uidm, sizeof uidm, "\"uid\":\"%s\",", uid);
        n += (size_t)snprintf(
            b + n, cap - n,
            "%s{\"metadata\":{\"name\":\"cm-%d\",\"namespace\":\"%s\",%s\"resourceVersion\":\"%d\","
            "\"labels\":{\"a\":\"b\"},\"annotations\":{\"x\":\"y z\"},\"managedFields\":[{\"m\":1}]"
            "},\"data\":{\"k\":\"v %d\"}}",
            i ? "," : "", i, i % 2 ? "a" : "default", uidm, 10 + i, i);
    }
    n += (size_t)snprintf(b + n, cap - n, "]}");
    return b;
}

static kc_shard_selector *sel_new(kc_shard_field f, unsigned i, unsigned n)
{
    kc_shard_range r;
    assert_int_equal(kc_shard_range_split(n, i, &r), 0);
    kc_shard_selector *sel = NULL;
    assert_int_equal(kc_shard_selector_new(f, &r, 1, &sel, NULL), 0);
    return sel;
}

/* S13.2: each quarter keeps exactly the items whose uid hashes into it; together they are the
 * unfiltered list, item for item identical; item 3 (no uid) counts as hash("") → quarter 3. */
static void test_list_filter_uid_quarters(void **st)
{
    (void)st;
    char *body = list_body("");
    got all = {0};
    assert_int_equal(
        kc__list_decode_ex(body, strlen(body), NULL, NULL, NULL, NULL, keep_cb, &all, NULL), 0);
    assert_int_equal(all.n, NITEMS);
    size_t total = 0;
    for (unsigned q = 0; q < 4; q++) {
        kc_shard_selector *sel = sel_new(KC_SHARD_FIELD_UID, q, 4);
        got g = {0};
        kc_list_meta meta = {0};
        assert_int_equal(
            kc__list_decode_ex(body, strlen(body), NULL, sel, &meta, NULL, keep_cb, &g, NULL), 0);
        assert_string_equal(meta.resource_version, "77");
        size_t k = 0;
        for (int i = 0; i < NITEMS; i++) {
            char uid[64] = "";
            if (i != 3)
                uid_of(i, uid, sizeof uid);
            unsigned want = (unsigned)(kc_shard_hash(uid, strlen(uid)) >> 62);
            if (want != q)
                continue;
            assert_true(k < g.n);
            assert_string_equal(g.json[k], all.json[i]); /* built as without the filter */
            k++;
        }
        assert_int_equal(k, g.n);
        if (q == 3)
            assert_true(g.n >= 1); /* item 3, uid "" */
        total += g.n;
        kc_list_meta_clear(&meta);
        got_free(&g);
        kc_shard_selector_free(sel);
    }
    assert_int_equal(total, NITEMS);
    got_free(&all);
    free(body);
}

/* The public filter, kc_decode_opts.shard: kc_list_decode and a list decoder keep what the
 * internal entry keeps for the same selector; NULL keeps everything. */
static void test_public_decode_opts_shard(void **st)
{
    (void)st;
    char *body = list_body("");
    kc_shard_selector *sel = sel_new(KC_SHARD_FIELD_UID, 1, 4);
    got want = {0}, pub = {0}, dec_got = {0}, none = {0};
    assert_int_equal(
        kc__list_decode_ex(body, strlen(body), NULL, sel, NULL, NULL, keep_cb, &want, NULL), 0);
    kc_decode_opts o = {.shard = sel};
    assert_int_equal(kc_list_decode(body, strlen(body), &o, NULL, keep_cb, &pub, NULL), 0);
    kc_list_decoder *d = NULL;
    assert_int_equal(kc_list_decoder_new(&o, &d, NULL), 0);
    assert_int_equal(kc_list_decoder_decode(d, body, strlen(body), NULL, keep_cb, &dec_got, NULL),
                     0);
    kc_list_decoder_free(d);
    assert_true(want.n > 0 && want.n < NITEMS);
    assert_int_equal(pub.n, want.n);
    assert_int_equal(dec_got.n, want.n);
    for (size_t i = 0; i < want.n; i++) {
        assert_string_equal(pub.json[i], want.json[i]);
        assert_string_equal(dec_got.json[i], want.json[i]);
    }
    kc_decode_opts all = {.shard = NULL};
    assert_int_equal(kc_list_decode(body, strlen(body), &all, NULL, keep_cb, &none, NULL), 0);
    assert_int_equal(none.n, NITEMS);
    got_free(&want), got_free(&pub), got_free(&dec_got), got_free(&none);
    kc_shard_selector_free(sel);
    free(body);
}

/* S6: namespace field: "default" is in range 3 of 4, "a" in range 2. */
static void test_list_filter_namespace(void **st)
{
    (void)st;
    char *body = list_body("");
    kc_shard_selector *s3 = sel_new(KC_SHARD_FIELD_NAMESPACE, 3, 4);
    kc_shard_selector *s2 = sel_new(KC_SHARD_FIELD_NAMESPACE, 2, 4);
    kc_shard_selector *s0 = sel_new(KC_SHARD_FIELD_NAMESPACE, 0, 4);
    got g3 = {0}, g2 = {0}, g0 = {0};
    assert_int_equal(
        kc__list_decode_ex(body, strlen(body), NULL, s3, NULL, NULL, keep_cb, &g3, NULL), 0);
    assert_int_equal(
        kc__list_decode_ex(body, strlen(body), NULL, s2, NULL, NULL, keep_cb, &g2, NULL), 0);
    assert_int_equal(
        kc__list_decode_ex(body, strlen(body), NULL, s0, NULL, NULL, keep_cb, &g0, NULL), 0);
    assert_int_equal(g3.n, NITEMS / 2);
    assert_int_equal(g2.n, NITEMS / 2);
    assert_int_equal(g0.n, 0);
    assert_string_equal(g3.name[0], "cm-0");
    assert_string_equal(g2.name[0], "cm-1");
    got_free(&g3);
    got_free(&g2);
    kc_shard_selector_free(s3);
    kc_shard_selector_free(s2);
    kc_shard_selector_free(s0);
    free(body);
}

/* S8 / S13.1: the echo is reported as the server wrote it; absent or null → none. */
static void test_list_shard_info_echo(void **st)
{
    (void)st;
    const char *canon = "shardRange(object.metadata.uid, '0x0000000000000000', "
                        "'0x4000000000000000')";
    char extra[256];
    snprintf(extra, sizeof extra, ",\"shardInfo\":{\"selector\":\"%s\"}", canon);
    struct {
        const char *extra;
        bool has;
        const char *sel;
    } cases[] = {
        {extra, true, canon},
        {"", false, NULL},
        {",\"shardInfo\":null", false, NULL},
        {",\"shardInfo\":{}", true, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *body = list_body(cases[i].extra);
        kc__list_ext ext = {0};
        assert_int_equal(
            kc__list_decode_ex(body, strlen(body), NULL, NULL, NULL, &ext, NULL, NULL, NULL), 0);
        assert_int_equal(ext.has_shard_info, cases[i].has);
        if (cases[i].sel)
            assert_string_equal(ext.shard_selector, cases[i].sel);
        else
            assert_null(ext.shard_selector);
        kc__list_ext_clear(&ext);
        free(body);
    }
    /* A shardInfo of the wrong type is malformed, as any list metadata member. */
    char *bad = list_body(",\"shardInfo\":{\"selector\":5}");
    assert_int_equal(kc__list_decode_ex(bad, strlen(bad), NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                     KC_EPARSE);
    free(bad);
}

typedef struct evs {
    kc_watch_type type[32];
    char name[32][32];
    bool end[32];
    size_t n;
} evs;

static int ev_cb(void *ud, const kc_watch_event *ev)
{
    evs *e = ud;
    e->type[e->n] = ev->type;
    snprintf(e->name[e->n], sizeof e->name[0], "%s", ev->obj ? kc_obj_name(ev->obj) : "");
    e->end[e->n] = ev->initial_events_end;
    e->n++;
    return 0;
}

/* The first uid (uid_of order) inside q0's range and the first outside it, 64 bytes each. */
static void pick_uids(const kc_shard_selector *q0, char *in_uid, char *out_uid)
{
    for (int i = 0; !in_uid[0] || !out_uid[0]; i++) {
        char u[64];
        uid_of(i, u, sizeof u);
        char *dst =
            kc_shard_selector_match_hash(q0, kc_shard_hash(u, strlen(u))) ? in_uid : out_uid;
        if (!dst[0])
            snprintf(dst, 64, "%s", u);
    }
}

/* S13.2: watch — ADDED/MODIFIED/DELETED out of range are dropped (also with "object" before
 * "type"), BOOKMARK (no uid: hash("") is in quarter 3, filtered here on quarter 0) and ERROR pass,
 * the initial-events-end annotation still read. */
static void test_watch_filter(void **st)
{
    (void)st;
    kc_shard_selector *q0 = sel_new(KC_SHARD_FIELD_UID, 0, 4);
    char in_uid[64] = "", out_uid[64] = "";
    pick_uids(q0, in_uid, out_uid);
    char stream[4096];
    snprintf(stream, sizeof stream,
             "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"in\",\"uid\":\"%s\","
             "\"resourceVersion\":\"1\"}}}\n"
             "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"out\",\"uid\":\"%s\","
             "\"resourceVersion\":\"2\",\"labels\":{\"a\":\"b\"}}}}\n"
             "{\"object\":{\"metadata\":{\"name\":\"out-late-type\",\"uid\":\"%s\"}},"
             "\"type\":\"MODIFIED\"}\n"
             "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"out\",\"uid\":\"%s\"}}}\n"
             "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\","
             "\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}\n"
             "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\","
             "\"code\":410,\"reason\":\"Expired\"}}\n"
             "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"in\",\"uid\":\"%s\"}}}\n",
             in_uid, out_uid, out_uid, out_uid, in_uid);
    kc_watch_decoder *dec = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &dec, NULL), 0);
    kc__watch_decoder_set_shard(dec, q0);
    evs e = {0};
    assert_int_equal(kc_watch_decoder_feed(dec, stream, strlen(stream), ev_cb, &e, NULL), 0);
    assert_int_equal(e.n, 4);
    assert_int_equal(e.type[0], KC_WATCH_ADDED);
    assert_string_equal(e.name[0], "in");
    assert_int_equal(e.type[1], KC_WATCH_BOOKMARK);
    assert_true(e.end[1]);
    assert_int_equal(e.type[2], KC_WATCH_ERROR);
    assert_int_equal(e.type[3], KC_WATCH_MODIFIED);
    assert_string_equal(e.name[3], "in");
    /* An escaped uid (the prefix scan gives up on escapes): hashed unescaped by the full decode,
     * so the in-range one arrives and the out-of-range one does not. */
    char esc[1024];
    snprintf(esc, sizeof esc,
             "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"esc-in\",\"uid\":"
             "\"\\u00%02x%s\"}}}\n"
             "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"esc-out\",\"uid\":"
             "\"\\u00%02x%s\"}}}\n",
             (unsigned char)in_uid[0], in_uid + 1, (unsigned char)out_uid[0], out_uid + 1);
    memset(&e, 0, sizeof e);
    assert_int_equal(kc_watch_decoder_feed(dec, esc, strlen(esc), ev_cb, &e, NULL), 0);
    assert_int_equal(e.n, 1);
    assert_string_equal(e.name[0], "esc-in");
    /* The prefix scan decided from the first bytes: an out-of-range event's tail is never read
     * (here malformed: the full decode would fail), an in-range one's is. */
    char tail[512];
    snprintf(tail, sizeof tail,
             "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":"
             "\"t\",\"uid\":\"%s\",\"labels\":{oops}}}}\n",
             out_uid);
    memset(&e, 0, sizeof e);
    assert_int_equal(kc_watch_decoder_feed(dec, tail, strlen(tail), ev_cb, &e, NULL), 0);
    assert_int_equal(e.n, 0);
    snprintf(tail, sizeof tail,
             "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":"
             "\"t\",\"uid\":\"%s\",\"labels\":{oops}}}}\n",
             in_uid);
    assert_int_equal(kc_watch_decoder_feed(dec, tail, strlen(tail), ev_cb, &e, NULL), KC_EPARSE);
    kc_watch_decoder_reset(dec);
    /* Without the filter every event arrives. */
    kc__watch_decoder_set_shard(dec, NULL);
    kc_watch_decoder_reset(dec);
    memset(&e, 0, sizeof e);
    assert_int_equal(kc_watch_decoder_feed(dec, stream, strlen(stream), ev_cb, &e, NULL), 0);
    assert_int_equal(e.n, 7);
    kc_watch_decoder_free(dec);
    /* The public way in, kc_decode_opts.shard: the same four events. */
    kc_decode_opts o = {.shard = q0};
    assert_int_equal(kc_watch_decoder_new(&o, &dec, NULL), 0);
    memset(&e, 0, sizeof e);
    assert_int_equal(kc_watch_decoder_feed(dec, stream, strlen(stream), ev_cb, &e, NULL), 0);
    assert_int_equal(e.n, 4);
    assert_string_equal(e.name[0], "in");
    kc_watch_decoder_free(dec);
    kc_shard_selector_free(q0);
}

/* The prefix scan's 16-byte string scan (watch_prefilter.c): long strings are read through, and
 * an escape or a raw control byte anywhere in a string before the key — also past the first 16
 * bytes, and in the last bytes of the line — makes it give up (the full decode then decides). */
static void test_watch_prefilter_long_strings(void **st)
{
    (void)st;
    kc_shard_selector *q0 = sel_new(KC_SHARD_FIELD_UID, 0, 4);
    char in_uid[64] = "", out_uid[64] = "";
    pick_uids(q0, in_uid, out_uid);
    const char *names[] = {
        "a-name-well-over-sixteen-bytes-long-0123456789", /* clean: read through */
        "0123456789abcdefghij\\tail",                     /* escape at byte 20 */
        "0123456789abcdefghij\x01tail",                   /* control byte at byte 20 */
        "0123456789abcdef\\",                             /* escape at byte 16, just past a block */
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        for (int out = 0; out < 2; out++) {
            char line[512];
            int n = snprintf(line, sizeof line,
                             "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":"
                             "\"v1\",\"metadata\":{\"name\":\"%s\",\"uid\":\"%s\"}}}",
                             names[i], out ? out_uid : in_uid);
            bool drop = kc__watch_prefilter_drop(line, (size_t)n, q0);
            assert_int_equal(drop, i == 0 && out); /* drops only a clean out-of-range line */
        }
    }
    /* A uid cut off by the end of the line (no closing quote within the 16-byte blocks or the
     * tail): gives up. */
    char cut[256];
    int n = snprintf(cut, sizeof cut, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"uid\":\"%s",
                     out_uid);
    assert_false(kc__watch_prefilter_drop(cut, (size_t)n, q0));
    kc_shard_selector_free(q0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_filter_uid_quarters),
        cmocka_unit_test(test_list_filter_namespace),
        cmocka_unit_test(test_public_decode_opts_shard),
        cmocka_unit_test(test_list_shard_info_echo),
        cmocka_unit_test(test_watch_filter),
        cmocka_unit_test(test_watch_prefilter_long_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
