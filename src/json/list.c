/*
 * list.c — LIST response bodies → list metadata + one kc_obj per item.
 *
 * sj.cpp makes the body compact into a padded scratch buffer, runs simdjson On-Demand over it once
 * and reports each items[] element as a span plus its extracted metadata; kc__obj_build then copies
 * the span minus metadata.managedFields into the object's single allocation, injecting the list's
 * apiVersion and kind (minus "List") when the item lacks them; an item that has them must agree
 * with the list (check_item_type).
 *
 * kc_list_decode is one-shot: its scratch (compact copy of the body + simdjson's structural index,
 * together ~2-5x the body, or of a ~4 MiB window of a body over 16 MiB: sj_list.cpp) is freed
 * after a call when over 16 MiB — cold memory. A kc_list_decoder keeps
 * it between calls (warm), for callers that decode many LIST pages.
 *
 * With a shard filter (kc__list_decode_ex, json/decode_internal.h) the walker stops reading an
 * item's metadata once its uid or namespace is out of range (sj_meta.cpp); such items, and those
 * whose absent field hashes out of range, are never built. metadata.shardInfo.selector reaches the
 * REST layer through kc__list_ext, kc_list_meta being frozen.
 */
#include "core/internal.h"
#include "core/slab.h"
#include "json/decode_internal.h"
#include "json/obj_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kc_list_decode keeps its per-thread scratch between calls for bodies up to this size (a LIST
 * page of a few thousand objects), so paged LISTs do not fault in fresh pages per page. */
#define KC__LIST_KEEP ((size_t)16 << 20)

struct kc_list_decoder {
    kc_decode_opts opts;
    kc__sj_ctx *ctx;
};

void kc_list_meta_clear(kc_list_meta *meta)
{
    if (!meta)
        return;
    free(meta->api_version);
    free(meta->kind);
    free(meta->resource_version);
    free(meta->continue_token);
    memset(meta, 0, sizeof *meta);
    meta->remaining_item_count = -1;
}

struct list_state {
    unsigned flags;
    size_t max;
    kc_list_item_cb on_item;
    void *ud;
    kc_list_meta meta;
    const kc_shard_selector *shard; /* the filter (kc__list_decode_ex) */
    kc__list_ext ext;
    const char *const *keep; /* kc_decode_opts.keep (borrowed for the call) */
};

struct redo {
    struct list_state *st;
    const kc__sj_list_info *info;
    kc_obj *obj;
};

static int redo_cb(void *ud, const kc__sj_meta *m, kc__sj_err *e)
{
    struct redo *rd = ud;
    return kc__obj_build(m, rd->st->flags, rd->st->max, rd->info, rd->st->keep, &rd->obj, e);
}

static bool str_eq(kc__sj_str a, const char *b, size_t bn)
{
    return a.n == bn && (bn == 0 || memcmp(a.p, b, bn) == 0);
}

/* An item that says what it is must be what the list holds: kind = the list's kind minus "List"
 * and apiVersion = the list's (a Secret inside a ConfigMapList would otherwise be stored, and
 * served, as a ConfigMap; issue 29 point 11). Items usually omit both (absent is fine). Not
 * checked when the list's kind is not "<Kind>List" (the generic v1 "List" holds any kind) or when
 * the list does not say. Offsets: m's spans are the body's (the walk of the list itself). */
static int check_item_type(const kc__sj_meta *m, const kc__sj_list_info *list, kc__sj_err *e)
{
    kc__sj_str lk = list->kind;
    if (!list->has_kind || lk.n <= 4 || memcmp(lk.p + lk.n - 4, "List", 4) != 0)
        return 0;
    size_t kn = lk.n - 4;
    if (m->has_kind && !str_eq(m->kind, lk.p, kn)) {
        e->offset = m->off + (int64_t)m->kind_off;
        snprintf(e->msg, sizeof e->msg, "kind \"%.*s\" in a %.*s (expected \"%.*s\"): refused",
                 (int)m->kind.n, m->kind.p, (int)lk.n, lk.p, (int)kn, lk.p);
    } else if (m->has_api_version && list->has_api_version &&
               !str_eq(m->api_version, list->api_version.p, list->api_version.n)) {
        e->offset = m->off + (int64_t)m->apiv_off;
        snprintf(e->msg, sizeof e->msg,
                 "apiVersion \"%.*s\" in a %.*s of apiVersion \"%.*s\": refused",
                 (int)m->api_version.n, m->api_version.p, (int)lk.n, lk.p, (int)list->api_version.n,
                 list->api_version.p);
    } else {
        return 0;
    }
    e->code = KC_EPARSE;
    return KC_EPARSE;
}

static int item_cb(void *ud, const kc__sj_list_info *info, const kc__sj_meta *m, kc__sj_err *e)
{
    struct list_state *st = ud;
    if (!kc__shard_keep(st->shard, m))
        return 0; /* outside the shard filter: never built */
    if ((m->has_kind || m->has_api_version) && check_item_type(m, info, e))
        return KC_EPARSE;
    kc_obj *obj = NULL;
    int r = kc__obj_build(m, st->flags | KC__BUILD_CHECK_WS, st->max, info, st->keep, &obj, e);
    if (r == KC__OBJ_NOT_COMPACT && kc__sj_ws_outside_strings(m->text, m->len) == m->len) {
        /* Whitespace only inside strings (a condition message, an annotation): the item is its
         * own minified form and the spans just walked are exact. */
        r = kc__obj_build(m, st->flags, st->max, info, st->keep, &obj, e);
    } else if (r == KC__OBJ_NOT_COMPACT) {
        /* Whitespace between the item's tokens (pretty-printed): decode it again from a minified
         * copy, so that the stored text is minified and cut spans are exact. */
        kc__sj_ctx *tctx = kc__sj_thread_ctx();
        if (!tctx) {
            e->code = KC_ENOMEM;
            snprintf(e->msg, sizeof e->msg, "out of memory");
            return KC_ENOMEM;
        }
        if (m->len > st->max * 2 + 4096) {
            e->code = KC_ETOOLARGE;
            e->offset = m->text - info->text_base + info->base_off;
            snprintf(e->msg, sizeof e->msg, "item of %zu bytes is over the limit of %zu", m->len,
                     st->max);
            return KC_ETOOLARGE;
        }
        struct redo rd = {st, info, NULL};
        r = kc__sj_object(tctx, m->text, m->len, (st->flags & KC_DECODE_STRICT) != 0, redo_cb, &rd,
                          e);
        if (r && e->offset >= 0)
            e->offset += m->text - info->text_base + info->base_off;
        obj = rd.obj;
    }
    if (r)
        return r;
    if (!st->on_item) {
        kc_obj_unref(obj);
        return 0;
    }
    r = st->on_item(st->ud, obj);
    if (r) { /* "items[i]: " is put before the message (sj_list.cpp); the offset is the item's */
        e->code = r;
        e->offset = m->text - info->text_base + info->base_off;
        snprintf(e->msg, sizeof e->msg, "stopped by the item callback (%s)", kc_errno_name(r));
    }
    return r;
}

static char *dup_str(kc__sj_str s, bool has, bool *oom)
{
    if (!has)
        return NULL;
    char *p = malloc(s.n + 1);
    if (!p) {
        *oom = true;
        return NULL;
    }
    memcpy(p, s.p, s.n);
    p[s.n] = '\0';
    return p;
}

static int list_cb(void *ud, const kc__sj_list_info *info, kc__sj_err *e)
{
    struct list_state *st = ud;
    bool oom = false;
    st->meta.api_version = dup_str(info->api_version, info->has_api_version, &oom);
    st->meta.kind = dup_str(info->kind, info->has_kind, &oom);
    st->meta.resource_version = dup_str(info->rv, info->has_rv, &oom);
    st->meta.continue_token = dup_str(info->cont, info->has_cont, &oom);
    st->meta.remaining_item_count = info->has_remaining ? info->remaining : -1;
    st->ext.has_shard_info = info->has_shard_info;
    st->ext.shard_selector =
        dup_str(info->shard_selector, info->has_shard_info && info->shard_selector.p, &oom);
    if (oom) {
        kc_list_meta_clear(&st->meta);
        kc__list_ext_clear(&st->ext);
        e->code = KC_ENOMEM;
        snprintf(e->msg, sizeof e->msg, "out of memory");
        return KC_ENOMEM;
    }
    return 0;
}

void kc__list_ext_clear(kc__list_ext *ext)
{
    if (!ext)
        return;
    free(ext->shard_selector);
    memset(ext, 0, sizeof *ext);
}

static int decode(kc__sj_ctx *ctx, const kc_decode_opts *opts, const kc_shard_selector *shard,
                  const char *body, size_t len, kc_list_meta *ret_meta, kc__list_ext *ret_ext,
                  kc_list_item_cb on_item, void *ud, kc_error *err)
{
    if (!body && len)
        return kc_error_set(err, KC_EINVAL, "kc_list_decode: NULL body");
    if (!shard && opts) /* the caller's own filter (kc_decode_opts.shard) */
        shard = opts->shard;
    struct list_state st = {kc__decode_flags(opts) | KC__BUILD_ARENA,
                            kc__decode_max(opts),
                            on_item,
                            ud,
                            {0},
                            shard,
                            {0},
                            opts ? opts->keep : NULL};
    st.meta.remaining_item_count = -1;
    kc__sj_err e = {0, -1, ""};
    bool padded = opts && (opts->flags & KC_DECODE_INPUT_PADDED) && body;
    kc__sj_ctx_set_shard(ctx, st.shard);
    /* the raw text item_cb accepts at most (a pretty-printed item minifies to half or less) */
    size_t max_item = st.max * 2 + 4096;
    int r = kc__sj_list(ctx, body ? body : "", len, padded, (st.flags & KC_DECODE_STRICT) != 0,
                        max_item, item_cb, list_cb, &st, &e);
    kc__sj_ctx_set_shard(ctx, NULL);
    if (r) {
        kc_list_meta_clear(&st.meta);
        kc__list_ext_clear(&st.ext);
        if (e.code != r) {
            e.code = r;
            e.offset = -1;
            e.msg[0] = '\0';
        }
        kc__sj_err_to(&e, 0, err);
        return r;
    }
    if (ret_meta)
        *ret_meta = st.meta;
    else
        kc_list_meta_clear(&st.meta);
    if (ret_ext)
        *ret_ext = st.ext;
    else
        kc__list_ext_clear(&st.ext);
    return 0;
}

/* kc_list_decode's body; opts is already a full-size copy (or NULL). */
static int decode_thread(const kc_decode_opts *opts, const kc_shard_selector *shard,
                         const char *body, size_t len, kc_list_meta *ret_meta,
                         kc__list_ext *ret_ext, kc_list_item_cb on_item, void *ud, kc_error *err)
{
    /* The thread's list scratch, unless a callback of an outer kc_list_decode on this thread is
     * running (then a private one). */
    static _Thread_local bool busy;
    int crc = kc__json_cpu_check(err);
    if (crc)
        return crc;
    kc__sj_ctx *ctx = busy ? NULL : kc__sj_thread_list_ctx();
    bool shared = ctx != NULL;
    if (!ctx)
        ctx = kc__sj_ctx_new();
    if (!ctx)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    busy = busy || shared;
    int r = decode(ctx, opts, shard, body, len, ret_meta, ret_ext, on_item, ud, err);
    if (shared) {
        busy = false;
        kc__sj_ctx_trim(ctx, KC__LIST_KEEP);
    } else {
        kc__sj_ctx_free(ctx);
    }
    return r;
}

int kc__list_decode_ex(const char *body, size_t len, const kc_decode_opts *opts,
                       const kc_shard_selector *shard, kc_list_meta *ret_meta,
                       kc__list_ext *ret_ext, kc_list_item_cb on_item, void *ud, kc_error *err)
{
    return decode_thread(opts, shard, body, len, ret_meta, ret_ext, on_item, ud, err);
}

int(kc_list_decode)(const char *body, size_t len, const kc_decode_opts *opts, size_t opts_size,
                    kc_list_meta *ret_meta, kc_list_item_cb on_item, void *ud, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_decode_opts, err);
    int rc = decode_thread(opts, NULL, body, len, ret_meta, NULL, on_item, ud, err);
    kc__slab_release_thread(); /* the bulk is over */
    return rc;
}

int(kc_list_decoder_new)(const kc_decode_opts *opts, size_t opts_size, kc_list_decoder **ret,
                         kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_decode_opts, err);
    if (!ret)
        return kc_error_set(err, KC_EINVAL, "kc_list_decoder_new: ret is NULL");
    int crc = kc__json_cpu_check(err);
    if (crc)
        return crc;
    kc_list_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return kc_error_set(err, KC_ENOMEM, "list decoder: out of memory");
    if (opts)
        d->opts = *opts;
    d->ctx = kc__sj_ctx_new();
    if (!d->ctx) {
        free(d);
        return kc_error_set(err, KC_ENOMEM, "list decoder: out of memory");
    }
    *ret = d;
    return 0;
}

int kc_list_decoder_decode(kc_list_decoder *dec, const char *body, size_t len,
                           kc_list_meta *ret_meta, kc_list_item_cb on_item, void *ud, kc_error *err)
{
    if (!dec)
        return kc_error_set(err, KC_EINVAL, "kc_list_decoder_decode: NULL decoder");
    return decode(dec->ctx, &dec->opts, NULL, body, len, ret_meta, NULL, on_item, ud, err);
}

void kc_list_decoder_trim(kc_list_decoder *dec)
{
    if (dec)
        kc__sj_ctx_trim(dec->ctx, 0);
}

void kc_list_decoder_free(kc_list_decoder *dec)
{
    if (!dec)
        return;
    kc__slab_release_thread(); /* the calling thread's arena chunk, when it decoded with dec */
    kc__sj_ctx_free(dec->ctx);
    free(dec);
}
