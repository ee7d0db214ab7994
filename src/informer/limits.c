/*
 * informer/limits.c — the bounds of one full list, paged or streaming (issue 29 points 4 and 7).
 *
 * A server that never ends a list — continue tokens forever, or a streaming list that never sends
 * its initial-events-end bookmark while ADDED events keep coming — would grow the batch the list
 * is built in without limit (2 GiB in about a second was measured). Every item of a list goes
 * through kc__list_limits_add, which counts it (items, and bytes as kc_obj_heap_size: what the
 * batch holds) against kc_informer_opts.max_list_items / max_list_bytes and adds it to the batch;
 * past a limit it returns KC_ETOOLARGE and keeps a message naming the limit, which
 * kc__list_limits_result puts in the list's kc_error (the decoders only see the callback's code).
 * The reflector then fails the list like any other list error: on_fail, with its backoff. Pages
 * are bounded by the pager (kc_list_opts.max_pages, set by kc__list_limits_opts).
 *
 * Defaults (informer.c applies them; zero = default, < 0 = no limit): 10,000,000 items,
 * 8 GiB, and max_list_items / page_size + 1000 pages.
 */
#include "informer/internal.h"

#include <string.h>

void kc__list_limits_init(kc__list_limits *l, kc_informer *inf, kc_store_batch *b)
{
    memset(l, 0, sizeof *l);
    l->inf = inf;
    l->batch = b;
    kc_error_init(&l->err);
}

int kc__list_limits_add(kc__list_limits *l, kc_obj *obj)
{
    const kc_informer_opts *o = &l->inf->o;
    l->items++;
    l->bytes += kc_obj_heap_size(obj);
    if (o->max_list_items > 0 && l->items > (uint64_t)o->max_list_items)
        return l->rc = kc_error_set(&l->err, KC_ETOOLARGE,
                                    "list of %s: more than %lld items "
                                    "(kc_informer_opts.max_list_items); a list that never ends?",
                                    l->inf->name, (long long)o->max_list_items);
    if (o->max_list_bytes > 0 && l->bytes > (uint64_t)o->max_list_bytes)
        return l->rc = kc_error_set(&l->err, KC_ETOOLARGE,
                                    "list of %s: items over %lld bytes after %llu items "
                                    "(kc_informer_opts.max_list_bytes); a list that never ends?",
                                    l->inf->name, (long long)o->max_list_bytes,
                                    (unsigned long long)l->items);
    return kc__inf_batch_add(l->inf, l->batch, obj); /* keeps the store's reason (verify.c) */
}

int kc__list_limits_result(kc__list_limits *l, int rc, kc_error *err)
{
    if (l->rc && rc == l->rc) {
        if (err) {
            kc_error_clear(err);
            *err = l->err;
            kc_error_init(&l->err);
        }
    }
    kc_error_clear(&l->err);
    return rc;
}

void kc__list_limits_opts(const kc_informer *inf, kc_list_opts *lo)
{
    lo->max_pages = inf->o.max_list_pages > 0 ? inf->o.max_list_pages : 0;
}
