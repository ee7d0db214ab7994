/*
 * informer/shard.c — sharded informers (server-side sharded list and watch, KEP-5866;
 * docs/informer.md, "Sharded informers"): the ranges an informer watches, their changes, and
 * what the API server makes of them.
 *
 * The ranges become one kc_shard_selector (kcache/shard.h). The reflector sends its canonical
 * text as shardSelector on every LIST page and WATCH, and hands the same selector to the
 * decoders as their filter, so out-of-range objects are dropped before they are built whether the
 * server filtered or not (an old server ignores the parameter and a watch has no echo; a watch
 * may reconnect to an older server). Every complete LIST tells whether the server filtered: each
 * page's metadata.shardInfo.selector must be the sent text byte for byte, else the server is
 * "non-sharding" (controller-semantics S8, S13.1). A streaming list has no list metadata, so
 * before one whose answer is unknown the reflector probes with LIST limit=1 (S13.3).
 *
 * Changes: kc_informer_set_shard_ranges parks the new selector in shard_next (st_mu) and fires
 * the cancel token of the call in flight; kc__inf_new_cancel fires a new token at once while a
 * change is pending, so no call starts with stale ranges. The reflector takes the change between
 * calls (it is the only user of inf->shard, which the decoders borrow) and relists from scratch;
 * the store's relist swap turns the difference into deletes and adds for the handlers. Setting
 * the ranges already asked for is a no-op (no relist). No range at all (a field with n 0: a
 * sharded replica that holds nothing) empties the store and holds it synced and empty without a
 * request until the ranges change (kc__inf_shard_hold_none).
 */
#include "informer/internal.h"

#include <stdlib.h>
#include <string.h>

int kc__inf_shard_build(kc_shard_field field, const kc_shard_range *ranges, size_t n,
                        const char *what, kc_shard_selector **ret, kc_error *err)
{
    *ret = NULL;
    if (field == KC_SHARD_FIELD_NONE) {
        if (n || ranges)
            return kc_error_set(err, KC_EINVAL,
                                "%s: shard ranges given without a shard field (uid or namespace)",
                                what);
        return 0;
    }
    if (field != KC_SHARD_FIELD_UID && field != KC_SHARD_FIELD_NAMESPACE)
        return kc_error_set(err, KC_EINVAL, "%s: unknown shard field %d", what, (int)field);
    if (n == 0) /* the union of no range: nothing (a replica holding no range); *ret NULL */
        return 0;
    if (!ranges)
        return kc_error_set(err, KC_EINVAL, "%s: %zu ranges but no array", what, n);
    kc_error e = KC_ERROR_INIT;
    int rc = kc_shard_selector_new(field, ranges, n, ret, &e);
    if (rc < 0)
        kc_error_set(err, rc, "%s: %s", what, e.message ? e.message : kc_strerror(rc));
    kc_error_clear(&e);
    return rc;
}

int kc__inf_shard_from_opts(const kc_informer_opts *o, kc_shard_selector **ret, kc_error *err)
{
    return kc__inf_shard_build(o->shard_field, o->shard_ranges, o->shard_ranges_count,
                               "kc_informer_opts.shard_field/shard_ranges", ret, err);
}

static void bound(kc__buf *b, const kc_shard_range *r, bool end)
{
    if (end && r->end_max)
        kc__buf_append_str(b, "10000000000000000");
    else
        kc__buf_printf(b, "%016llx", (unsigned long long)(end ? r->end : r->start));
}

int kc__inf_shard_id(kc__buf *b, kc_shard_field none_field, const kc_shard_selector *sel)
{
    if (!sel)
        return kc__buf_printf(b, "(shard %s:none)",
                              none_field == KC_SHARD_FIELD_UID ? "uid" : "namespace");
    kc_shard_field f = kc_shard_selector_field(sel);
    kc__buf_printf(b, "(shard %s:", f == KC_SHARD_FIELD_UID ? "uid" : "namespace");
    for (size_t i = 0; i < kc_shard_selector_count(sel); i++) {
        const kc_shard_range *r = kc_shard_selector_range(sel, i);
        if (i)
            kc__buf_append_str(b, ",");
        bound(b, r, false);
        kc__buf_append_str(b, "-");
        bound(b, r, true);
    }
    return kc__buf_append_str(b, ")");
}

/* Two selectors (NULL: unsharded) ask for the same objects: same field, same canonical text. */
static bool same_selector(const kc_shard_selector *a, bool a_none, const kc_shard_selector *b,
                          bool b_none)
{
    if (a_none || b_none)
        return a_none && b_none;
    if (!a || !b)
        return a == b;
    return kc_shard_selector_field(a) == kc_shard_selector_field(b) &&
           strcmp(kc_shard_selector_string(a), kc_shard_selector_string(b)) == 0;
}

int kc_informer_set_shard_ranges(kc_informer *inf, kc_shard_field field,
                                 const kc_shard_range *ranges, size_t n, kc_error *err)
{
    if (!inf)
        return kc_error_set(err, KC_EINVAL, "kc_informer_set_shard_ranges: informer is NULL");
    kc_shard_selector *sel = NULL;
    int rc = kc__inf_shard_build(field, ranges, n, "kc_informer_set_shard_ranges", &sel, err);
    if (rc < 0)
        return rc;
    bool none = field != KC_SHARD_FIELD_NONE && !sel; /* the union of no range: nothing */
    pthread_mutex_lock(&inf->st_mu);
    if (inf->stopping) {
        pthread_mutex_unlock(&inf->st_mu);
        kc_shard_selector_free(sel);
        return kc_error_set(err, KC_ESTOPPED, "informer %s: stopped", inf->name);
    }
    /* The same objects as the ranges already asked for (pending, else in force): nothing to do,
     * no relist. inf->shard is the reflector's, but it replaces it only under st_mu (take). */
    bool same = inf->shard_change ? same_selector(sel, none, inf->shard_next, inf->shard_next_none)
                                  : same_selector(sel, none, inf->shard, inf->shard_none);
    if (same) {
        pthread_mutex_unlock(&inf->st_mu);
        kc_shard_selector_free(sel);
        return 0;
    }
    kc_shard_selector *old = inf->shard_next;
    inf->shard_next = sel;
    inf->shard_next_none = none;
    inf->shard_change = true;
    if (inf->cancel)
        kc_cancel_fire(inf->cancel);     /* the list or watch in flight has the old ranges */
    pthread_cond_broadcast(&inf->st_cv); /* a backoff sleep (or holding no range) ends too */
    pthread_mutex_unlock(&inf->st_mu);
    kc_shard_selector_free(old);
    KC__LOG_INFO("informer", "informer %s: shard ranges changed to %s; relisting", inf->name,
                 sel    ? kc_shard_selector_string(sel)
                 : none ? "(no range)"
                        : "(unsharded)");
    return 0;
}

bool kc__inf_shard_take(kc_informer *inf)
{
    pthread_mutex_lock(&inf->st_mu);
    bool change = inf->shard_change;
    kc_shard_selector *old = NULL;
    if (change) {
        old = inf->shard;
        inf->shard = inf->shard_next;
        inf->shard_none = inf->shard_next_none;
        inf->shard_next = NULL;
        inf->shard_next_none = false;
        inf->shard_change = false;
        inf->server_sharding = KC_INFORMER_SHARDING_UNKNOWN;
    }
    pthread_mutex_unlock(&inf->st_mu);
    kc_shard_selector_free(old); /* no call in flight borrows it: we are between calls */
    return change;
}

void kc__inf_shard_hold_none(kc_informer *inf, int (*install_empty)(void *ud), void *ud)
{
    while (install_empty(ud) < 0) /* only KC_ENOMEM: retry after a pause */
        if (kc__inf_sleep(inf, 100 * KC__NS_PER_MS))
            return;
    /* kc__inf_sleep ends early on stop or on a range change (st_cv); the period only bounds it */
    while (!kc__inf_sleep(inf, 3600 * KC__NS_PER_SEC) && !kc__inf_shard_pending(inf))
        ;
}

bool kc__inf_shard_pending(kc_informer *inf)
{
    pthread_mutex_lock(&inf->st_mu);
    bool p = inf->shard_change;
    pthread_mutex_unlock(&inf->st_mu);
    return p;
}

static void set_sharding(kc_informer *inf, kc_informer_server_sharding v, const char *why)
{
    pthread_mutex_lock(&inf->st_mu);
    kc_informer_server_sharding was = inf->server_sharding;
    inf->server_sharding = v;
    pthread_mutex_unlock(&inf->st_mu);
    if (was == v)
        return;
    if (v == KC_INFORMER_SHARDING_NO)
        KC__LOG_INFO("informer",
                     "informer %s: the API server does not shard (%s); filtering client-side",
                     inf->name, why);
    else
        KC__LOG_DEBUG("informer", "informer %s: the API server shards (%s)", inf->name, why);
}

void kc__inf_shard_note_list(kc_informer *inf, const kc__list_echo *echo)
{
    if (!inf->shard || !echo->pages)
        return;
    bool all = echo->pages_echoed == echo->pages;
    set_sharding(inf, all ? KC_INFORMER_SHARDING_YES : KC_INFORMER_SHARDING_NO,
                 all ? "shardInfo echoed on every page" : "shardInfo absent or different");
}

static int drop_item(void *ud, kc_obj *item)
{
    (void)ud;
    kc_obj_unref(item);
    return 0;
}

void kc__inf_shard_probe(kc_informer *inf)
{
    if (!inf->shard)
        return;
    pthread_mutex_lock(&inf->st_mu);
    bool known = inf->server_sharding != KC_INFORMER_SHARDING_UNKNOWN;
    pthread_mutex_unlock(&inf->st_mu);
    if (known)
        return;
    kc_cancel *c = kc__inf_new_cancel(inf);
    if (!c)
        return;
    kc_list_opts lo = {.label_selector = inf->o.label_selector,
                       .field_selector = inf->o.field_selector,
                       .limit = 1,
                       .metadata_only = inf->o.metadata_only,
                       .decode = inf->o.decode,
                       .decode_size = inf->o.decode_size,
                       .cancel = c,
                       .shard_selector = kc_shard_selector_string(inf->shard)};
    kc_list_meta meta = {0};
    kc__list_echo echo = {0};
    kc_error err = KC_ERROR_INIT;
    /* One page only: the echo is all it is for. A failure leaves the answer unknown (the
     * streaming list that follows reports its own errors). */
    int rc = kc__client_list_page(inf->client, &inf->gvr, inf->o.ns, &lo, inf->shard, &meta, &echo,
                                  drop_item, NULL, &err);
    kc__inf_drop_cancel(inf, c);
    if (rc == 0)
        kc__inf_shard_note_list(inf, &echo);
    kc_list_meta_clear(&meta);
    kc_error_clear(&err);
}
