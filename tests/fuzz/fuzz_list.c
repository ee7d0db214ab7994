/*
 * fuzz_list.c — libFuzzer target for the LIST decoder.
 *
 * The first byte picks the decode flags (strip / keep managedFields / metadata only); the rest is
 * the body. Bit 3 of the first byte switches the object arena (src/core/slab.c) on for this input
 * (it is off by default in sanitizer builds): after the input every arena chunk must have ended —
 * the leak check LeakSanitizer cannot make inside the arena. It is decoded twice: from an unpadded
 * exact-size copy (ASan catches any over-read) and from a padded copy with KC_DECODE_INPUT_PADDED.
 * Both runs must agree on the result code and the number of items. Each delivered object is
 * exercised through every accessor, a JSON Pointer lookup, and must decode again from its own
 * stored text to the same metadata. KC_EPARSE must name a byte offset within the body.
 *
 * It is decoded a third time in windows (json/sj_list.cpp) of 1-76 bytes (the high nibble of the
 * first byte): accepted exactly when the one-pass decode accepts it, with as many items.
 *
 * What the one-pass decode accepts is one document with balanced brackets (json_oracle.h).
 *
 * Then the body is decoded with KC_DECODE_STRICT: what strict mode accepts the default accepts,
 * with the same items, and it must be valid JSON by simdjson's DOM parser (json_oracle.h). And
 * the decoders' minifier must agree with the reference minifier on the body.
 */
#include "core/slab.h"
#include "json/sj.h" /* kc__sj_list_window_set */
#include "kcache/decode.h"

#include "json_oracle.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct run {
    size_t items;
    unsigned flags;
};

static void check_obj(const kc_obj *o, unsigned flags)
{
    unsigned again_flags = KC_DECODE_KEEP_MANAGED_FIELDS | (flags & KC_DECODE_STRICT);
    size_t len;
    const char *j = kc_obj_json(o, &len);
    if (j[len] != '\0' || kc_obj_heap_size(o) < len)
        abort();
    for (size_t i = 0; i < kc_obj_label_count(o); i++) {
        const char *k, *v;
        if (kc_obj_label_at(o, i, &k, &v) || kc_obj_label(o, k) == NULL)
            abort();
    }
    (void)kc_obj_rv_int(o);
    (void)kc_obj_generation(o);
    check_cstrings(o);
    char *s = NULL;
    if (kc_obj_get_string(o, "/metadata/name", &s, NULL, NULL) == 0)
        free(s);
    const char *raw;
    size_t rl;
    if (kc_obj_get_raw(o, "/spec", &raw, &rl, NULL) == 0 && (raw < j || raw + rl > j + len))
        abort();
    /* the stored text decodes again to the same metadata */
    kc_decode_opts keep = {.flags = again_flags, .max_object_size = 0};
    kc_obj *again = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_obj_parse(j, len, &keep, &again, &err) != 0) {
        fprintf(stderr, "stored text does not decode again: %s at %lld\n%.*s\n", err.message,
                (long long)err.offset, (int)len, j);
        abort();
    }
    if (strcmp(kc_obj_name(again), kc_obj_name(o)) || strcmp(kc_obj_kind(again), kc_obj_kind(o)) ||
        strcmp(kc_obj_uid(again), kc_obj_uid(o)) ||
        strcmp(kc_obj_resource_version(again), kc_obj_resource_version(o)) ||
        kc_obj_label_count(again) != kc_obj_label_count(o))
        abort();
    size_t l2;
    kc_obj_json(again, &l2);
    if (l2 != len)
        abort();
    kc_obj_unref(again);
}

static int on_item(void *ud, kc_obj *obj)
{
    struct run *r = ud;
    r->items++;
    check_obj(obj, r->flags);
    kc_obj_unref(obj);
    return 0;
}

/* Strict mode against the default run (rc1, items1) and the DOM oracle. */
static void check_strict(const char *body, size_t len, unsigned flags, int rc1, size_t items1)
{
    kc_decode_opts o = {.flags = flags | KC_DECODE_STRICT, .max_object_size = 1 << 16};
    struct run r = {0, flags | KC_DECODE_STRICT};
    kc_error err = KC_ERROR_INIT;
    int rc = kc_list_decode(body, len, &o, NULL, on_item, &r, &err);
    check_err(rc, &err, len);
    kc_error_clear(&err);
    if (rc)
        return;
    if (rc1 != 0 || r.items != items1) {
        fprintf(stderr, "strict accepted (%zu items) what the default did not (%d, %zu)\n", r.items,
                rc1, items1);
        abort();
    }
    check_valid_json(body, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 1 << 20)
        return 0;
    unsigned flags = data[0] % 3 == 1   ? KC_DECODE_KEEP_MANAGED_FIELDS
                     : data[0] % 3 == 2 ? KC_DECODE_METADATA_ONLY
                                        : 0;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    kc__slab_set_enabled((data[0] & 8) != 0);

    char *exact = malloc(len ? len : 1);
    char *padded = malloc(len + KC_DECODE_PADDING);
    if (!exact || !padded) {
        free(exact);
        free(padded);
        return 0;
    }
    memcpy(exact, body, len);
    memcpy(padded, body, len);
    memset(padded + len, data[0] & 4 ? ' ' : 'x', KC_DECODE_PADDING); /* ' ': parsed in place */

    kc_decode_opts o1 = {.flags = flags, .max_object_size = 1 << 16};
    struct run r1 = {0, flags}, r2 = {0, flags};
    kc_list_meta meta;
    kc_error err = KC_ERROR_INIT;
    int rc1 = kc_list_decode(exact, len, &o1, &meta, on_item, &r1, &err);
    if (rc1 == 0) {
        kc_list_meta_clear(&meta);
        check_one_document(exact, len);
    }
    check_err(rc1, &err, len);
    kc_error_clear(&err);

    kc_decode_opts o2 = {.flags = flags | KC_DECODE_INPUT_PADDED, .max_object_size = 1 << 16};
    kc_list_decoder *dec = NULL;
    (void)kc_list_decoder_new(&o2, &dec, NULL);
    if (dec) {
        int rc2 = kc_list_decoder_decode(dec, padded, len, NULL, on_item, &r2, &err);
        if (rc2 != rc1 || r2.items != r1.items)
            abort();
        check_err(rc2, &err, len);
        kc_error_clear(&err);
        kc_list_decoder_free(dec);
    }
    struct run r3 = {0, flags};
    kc__sj_list_window_set(1, 1 + (size_t)(data[0] >> 4) * 5);
    int rc3 = kc_list_decode(exact, len, &o1, NULL, on_item, &r3, &err);
    kc__sj_list_window_set(0, 0);
    check_err(rc3, &err, len);
    kc_error_clear(&err);
    if ((rc3 == 0) != (rc1 == 0) || (rc1 == 0 && r3.items != r1.items)) {
        fprintf(stderr, "in windows: %d (%zu items), in one pass: %d (%zu items)\n", rc3, r3.items,
                rc1, r1.items);
        abort();
    }
    check_strict(exact, len, flags, rc1, r1.items);
    check_minify(exact, len);
    free(exact);
    free(padded);
    kc__slab_stats st;
    kc__slab_stats_get(&st);
    if (st.chunks_in_use != 0) { /* an object leaked, or a thread kept its chunk */
        fprintf(stderr, "fuzz_list: %zu arena chunks still in use\n", st.chunks_in_use);
        abort();
    }
    return 0;
}
