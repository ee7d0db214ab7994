/*
 * fuzz_watch.c — libFuzzer target for the watch stream decoder.
 *
 * The first two bytes choose a split point and a chunk size; the rest is the stream. It is fed in
 * two parts at the split point, then in chunks of the chosen size, then finished — after a
 * KC_EPARSE/KC_ETOOLARGE the decoder is reset and fed the rest, as a client would. The events of
 * the two-part feed and of the chunked feed must agree when neither failed. Every event's object
 * and error are read through the accessors.
 */
#include "kcache/decode.h"

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
            if (err.code != rc)
                abort();
            bad = 1;
            kc_watch_decoder_reset(d);
        }
        kc_error_clear(&err);
    }
    kc_error err = KC_ERROR_INIT;
    if (kc_watch_decoder_finish(d, on_event, r, &err))
        bad = 1;
    kc_error_clear(&err);
    return bad;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 1 << 20)
        return 0;
    size_t n = size - 2;
    const char *p = (const char *)data + 2;
    size_t split = n ? data[0] * n / 255 : 0;
    size_t chunk = 1 + data[1] % 64;

    kc_decode_opts o = {data[1] & 0x80 ? KC_DECODE_METADATA_ONLY : 0, 4096};
    kc_watch_decoder *d = kc_watch_decoder_new(&o);
    if (!d)
        return 0;
    /* exact-size copies so ASan sees any read past the chunk */
    char *a = malloc(split ? split : 1), *b = malloc(n - split ? n - split : 1);
    if (!a || !b)
        goto out;
    memcpy(a, p, split);
    memcpy(b, p + split, n - split);

    struct run r1 = {0, 0}, r2 = {0, 0};
    int bad1 = 0;
    kc_error err = KC_ERROR_INIT;
    if (kc_watch_decoder_feed(d, a, split, on_event, &r1, &err)) {
        bad1 = 1;
        kc_watch_decoder_reset(d);
    }
    kc_error_clear(&err);
    if (kc_watch_decoder_feed(d, b, n - split, on_event, &r1, &err)) {
        bad1 = 1;
        kc_watch_decoder_reset(d);
    }
    kc_error_clear(&err);
    if (kc_watch_decoder_finish(d, on_event, &r1, &err))
        bad1 = 1;
    kc_error_clear(&err);

    kc_watch_decoder_reset(d);
    int bad2 = feed_all(d, p, n, chunk, &r2);
    if (!bad1 && !bad2 && (r1.events != r2.events || r1.sum != r2.sum))
        abort();
out:
    free(a);
    free(b);
    kc_watch_decoder_free(d);
    return 0;
}
