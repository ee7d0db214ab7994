/*
 * fuzz_watch.c — libFuzzer target for the watch stream decoder.
 *
 * The first two bytes choose a split point and a chunk size; the rest is the stream. Bit 6 of the
 * second byte makes the two-part feed a streaming list's (the objects of the events before an
 * initial-events-end bookmark come from the object arena, src/core/slab.c, switched on here):
 * after the input every arena chunk must have ended, the leak check LeakSanitizer cannot make
 * inside the arena. It is fed in
 * two parts at the split point, then in chunks of the chosen size, then finished — after a
 * KC_EPARSE/KC_ETOOLARGE the decoder is reset and fed the rest, as a client would. The events of
 * the two-part feed and of the chunked feed must agree when neither failed. Every event's object
 * and error are read through the accessors; KC_EPARSE must name an offset within the stream. An
 * empty chunk (NULL, 0) is fed between the two parts.
 *
 * Then the stream is decoded in one piece with KC_DECODE_STRICT: when that succeeds, the default
 * decode must have succeeded with the same events, and every line must be valid JSON by
 * simdjson's DOM parser (json_oracle.h). The minifier is compared with the reference on the
 * first part (json_oracle.h).
 *
 * Last, the shard filter (kc_decode_opts.shard: a quarter of the uid or namespace hash space,
 * chosen by the first byte), whose prefix scan (watch_prefilter.c) drops out-of-range events
 * before simdjson sees them: when the unfiltered decode of the whole stream succeeds, the filtered
 * chunked decode must succeed too and deliver exactly the unfiltered events minus the ADDED /
 * MODIFIED / DELETED ones whose shard key hashes out of range. (It may accept more than the
 * unfiltered decode: the tail of a dropped line is not validated.)
 */
#include "core/slab.h"
#include "json/decode_internal.h"
#include "kcache/decode.h"
#include "kcache/shard.h"

#include "json_oracle.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct run {
    size_t events;
    uint64_t sum; /* a digest of what was seen */
};

static int on_event(void *ud, const kc_watch_event *ev)
{
    struct run *r = ud;
    r->events++;
    r->sum = r->sum * 31 + (uint64_t)ev->type;
    if (ev->type == KC_WATCH_ERROR) {
        if (!ev->error || ev->obj || ev->error->code >= 0)
            abort();
        r->sum = r->sum * 31 + (uint64_t)(-ev->error->code);
        return 0;
    }
    if (!ev->obj || ev->error)
        abort();
    size_t len;
    const char *j = kc_obj_json(ev->obj, &len);
    if (j[len] != '\0')
        abort();
    check_cstrings(ev->obj);
    r->sum = r->sum * 31 + len + strlen(kc_obj_name(ev->obj)) + kc_obj_label_count(ev->obj) +
             ev->initial_events_end;
    return 0;
}

static int feed_all(kc_watch_decoder *d, const char *p, size_t n, size_t chunk, struct run *r)
{
    int bad = 0;
    for (size_t off = 0; off < n; off += chunk) {
        size_t k = n - off < chunk ? n - off : chunk;
        kc_error err = KC_ERROR_INIT;
        int rc = kc_watch_decoder_feed(d, p + off, k, on_event, r, &err);
        if (rc) {
            check_err(rc, &err, n);
            bad = 1;
            kc_watch_decoder_reset(d);
        }
        kc_error_clear(&err);
    }
    kc_error err = KC_ERROR_INIT;
    int rc = kc_watch_decoder_finish(d, on_event, r, &err);
    check_err(rc, &err, n);
    if (rc)
        bad = 1;
    kc_error_clear(&err);
    return bad;
}

/* Every non-blank line of the stream (CR and blanks around it trimmed, as the decoder does) is
 * valid JSON. */
static void check_lines_valid(const char *p, size_t n)
{
    for (const char *e = p + n; p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *q = nl ? nl : e, *s = p;
        while (s < q && (unsigned char)s[0] <= 0x20)
            s++;
        while (q > s && (unsigned char)q[-1] <= 0x20)
            q--;
        if (q > s)
            check_valid_json(s, (size_t)(q - s));
        p = nl ? nl + 1 : e;
    }
}

/* Strict decode of the whole stream in one feed; r_default: the chunked default run. */
static void check_strict(const char *p, size_t n, unsigned flags, int bad_default,
                         const struct run *r_default)
{
    kc_decode_opts o = {.flags = flags | KC_DECODE_STRICT, .max_object_size = 4096};
    kc_watch_decoder *d = NULL;
    (void)kc_watch_decoder_new(&o, &d, NULL);
    if (!d)
        return;
    struct run r = {0, 0};
    kc_error err = KC_ERROR_INIT;
    int rc = kc_watch_decoder_feed(d, p, n, on_event, &r, &err);
    check_err(rc, &err, n);
    kc_error_clear(&err);
    if (!rc) {
        rc = kc_watch_decoder_finish(d, on_event, &r, &err);
        check_err(rc, &err, n);
        kc_error_clear(&err);
    }
    kc_watch_decoder_free(d);
    if (rc)
        return;
    if (bad_default || r.events != r_default->events || r.sum != r_default->sum) {
        fprintf(stderr, "strict accepted what the default did not (or saw other events)\n");
        abort();
    }
    check_lines_valid(p, n);
}

struct expect {
    struct run r;
    const kc_shard_selector *sel;
    bool unsure; /* a key with a NUL in it: the C-string accessors cannot say its hash */
};

/* The unfiltered events as the shard filter should leave them. */
static int on_event_expect(void *ud, const kc_watch_event *ev)
{
    struct expect *x = ud;
    if (ev->obj && (ev->type == KC_WATCH_ADDED || ev->type == KC_WATCH_MODIFIED ||
                    ev->type == KC_WATCH_DELETED)) {
        size_t len;
        const char *j = kc_obj_json(ev->obj, &len);
        if (memmem(j, len, "\\u0000", 6))
            x->unsure = true;
        const char *k = kc_shard_key(ev->obj, kc_shard_selector_field(x->sel));
        if (!kc_shard_selector_match_hash(x->sel, kc_shard_hash(k ? k : "", k ? strlen(k) : 0)))
            return 0;
    }
    return on_event(&x->r, ev);
}

static void check_shard(const char *p, size_t n, const uint8_t *data, size_t chunk)
{
    kc_shard_range q;
    kc_shard_range_split(4, data[0] & 3, &q);
    kc_shard_selector *sel = NULL;
    if (kc_shard_selector_new(data[0] & 4 ? KC_SHARD_FIELD_NAMESPACE : KC_SHARD_FIELD_UID, &q, 1,
                              &sel, NULL))
        return;
    kc_decode_opts o = {.max_object_size = 4096};
    kc_watch_decoder *d = NULL;
    struct expect x = {{0, 0}, sel, false};
    (void)kc_watch_decoder_new(&o, &d, NULL);
    int rc = d ? kc_watch_decoder_feed(d, p, n, on_event_expect, &x, NULL) : -1;
    if (!rc)
        rc = kc_watch_decoder_finish(d, on_event_expect, &x, NULL);
    kc_watch_decoder_free(d);
    d = NULL;
    o.shard = sel;
    char *copy = malloc(n ? n : 1); /* exact size: ASan sees a read past the stream */
    if (!rc && !x.unsure && copy && (kc_watch_decoder_new(&o, &d, NULL), d)) {
        memcpy(copy, p, n);
        struct run r = {0, 0};
        if (feed_all(d, copy, n, chunk, &r) || r.events != x.r.events || r.sum != x.r.sum) {
            fprintf(stderr, "the shard filter changed what an accepted stream delivers\n");
            abort();
        }
    }
    kc_watch_decoder_free(d);
    free(copy);
    kc_shard_selector_free(sel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 1 << 20)
        return 0;
    size_t n = size - 2;
    const char *p = (const char *)data + 2;
    size_t split = n ? data[0] * n / 255 : 0;
    size_t chunk = 1 + data[1] % 64;

    kc_decode_opts o = {.flags = data[1] & 0x80 ? KC_DECODE_METADATA_ONLY : 0,
                        .max_object_size = 4096};
    kc_watch_decoder *d = NULL;
    (void)kc_watch_decoder_new(&o, &d, NULL);
    if (!d)
        return 0;
    kc__slab_set_enabled(true);
    if (data[1] & 0x40)
        kc__watch_decoder_set_initial_arena(d);
    /* exact-size copies so ASan sees any read past the chunk */
    char *a = malloc(split ? split : 1), *b = malloc(n - split ? n - split : 1);
    if (!a || !b)
        goto out;
    memcpy(a, p, split);
    memcpy(b, p + split, n - split);

    struct run r1 = {0, 0}, r2 = {0, 0};
    int bad1 = 0;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_watch_decoder_feed(d, a, split, on_event, &r1, &err);
    check_err(rc, &err, n);
    if (rc) {
        bad1 = 1;
        kc_watch_decoder_reset(d);
    }
    kc_error_clear(&err);
    rc = kc_watch_decoder_feed(d, NULL, 0, on_event, &r1, &err);
    check_err(rc, &err, n);
    if (rc) {
        bad1 = 1;
        kc_watch_decoder_reset(d);
    }
    kc_error_clear(&err);
    rc = kc_watch_decoder_feed(d, b, n - split, on_event, &r1, &err);
    check_err(rc, &err, n);
    if (rc) {
        bad1 = 1;
        kc_watch_decoder_reset(d);
    }
    kc_error_clear(&err);
    rc = kc_watch_decoder_finish(d, on_event, &r1, &err);
    check_err(rc, &err, n);
    if (rc)
        bad1 = 1;
    kc_error_clear(&err);

    kc_watch_decoder_reset(d);
    int bad2 = feed_all(d, p, n, chunk, &r2);
    if (!bad1 && !bad2 && (r1.events != r2.events || r1.sum != r2.sum))
        abort();
    check_strict(p, n, o.flags, bad2, &r2);
    check_minify(a, split); /* exact-size copy: ASan sees any read past it */
    check_shard(p, n, data, chunk);
out:
    free(a);
    free(b);
    kc_watch_decoder_free(d);
    kc__slab_stats st;
    kc__slab_stats_get(&st);
    if (st.chunks_in_use != 0) { /* an object leaked, or the decoder kept its chunk */
        fprintf(stderr, "fuzz_watch: %zu arena chunks still in use\n", st.chunks_in_use);
        abort();
    }
    return 0;
}
