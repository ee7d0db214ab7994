/*
 * cached/read.c — the read verbs of kc_cached_client: get, list (label/field selectors), list by
 * index; from the type's informer store, or live from the API server (uncached types, call->live).
 *
 * Block-on-read (docs/read-your-writes.md): before reading, a get copies this client's entries for
 * the key and a list those of the type (under the client lock, released at once), so writes that
 * start after the read cannot extend its wait; superseded pending deletes (ryw.c) are among
 * them. Then (bor_prepare, the same for both):
 *   - writes: a get waits for its key's write to be observed (kc__cc_written_cond); a list waits
 *     for the write with the highest comparable RV first (once the watermark has passed it the
 *     others mostly hold already: one check each), then for each other write. Observed entries are
 *     forgotten (by generation, keeping any newer write).
 *   - pending deletes: never waited for, but an object still carrying a deleted UID is hidden (get
 *     → KC_ENOTFOUND, lists drop it) until the store has observed the deletion
 *     (kc__cc_deleted_cond: its DELETED event, a later state after the UID was seen, or the
 *     watermark past an RV of it with the UID gone). A read that hides the UID remembers the RV it
 *     saw it at, when the entry had none.
 * call->no_wait skips the waits, never the delete filter: a read never resurrects an object.
 */
#include "cached/internal.h"

#include "kcache/rv.h"
#include "kcache/selector.h"

#include <stdlib.h>
#include <string.h>

#define TYPE_KEY_MAX 512

static void forget(kc_cached_client *cc, const char *type, const kc__ryw_want *w)
{
    pthread_mutex_lock(&cc->lock);
    kc__ryw_forget(&cc->ryw, type, w->ns, w->name, w->gen);
    pthread_mutex_unlock(&cc->lock);
}

static void wants_free(kc__ryw_want *w, int n)
{
    for (int i = 0; i < n; i++)
        kc__ryw_want_clear(&w[i]);
    free(w);
}

/* A pending delete hides obj when it names obj's key and (uid "" or) obj's UID. */
static bool hidden_by(const kc__ryw_want *d, const kc_obj *obj)
{
    return d->delete_uid && !strcmp(d->ns, kc_obj_namespace(obj)) &&
           !strcmp(d->name, kc_obj_name(obj)) &&
           (!*d->delete_uid || !strcmp(d->delete_uid, kc_obj_uid(obj)));
}

/* obj (hidden by the pending delete d) shows d's UID at its RV: remember that RV when d has none,
 * so the entry can complete even if the store's record of the DELETED event is lost later. */
static void learn(kc_cached_client *cc, const char *type, const kc__ryw_want *d, const kc_obj *obj)
{
    const char *rv = kc_obj_resource_version(obj);
    if (d->rv || !*d->delete_uid || !kc_rv_is_canonical(rv))
        return;
    pthread_mutex_lock(&cc->lock);
    kc__ryw_refine(&cc->ryw, type, d->ns, d->name, d->gen, NULL, rv);
    pthread_mutex_unlock(&cc->lock);
}

/* ---- block-on-read -------------------------------------------------------------------------- */

/*
 * Block-on-read preparation of a read: wait for this client's writes to the type (ns "" = all
 * namespaces), or to one key when name is not NULL, and return the pending deletes still to hide
 * (*ret_hides, *ret_n_hides; caller frees with wants_free). *deadline: the call's, computed on
 * first need (kc__cc_deadline_lazy).
 */
static int bor_prepare(kc_cached_client *cc, const char *type, kc_store *store, const char *ns,
                       const char *name, const kc_cached_call_opts *call, uint64_t *deadline,
                       kc__ryw_want **ret_hides, int *ret_n_hides, kc_error *err)
{
    *ret_hides = NULL;
    *ret_n_hides = 0;
    if (cc->mode != KC_RYW_BLOCK_ON_READ)
        return 0;
    kc__ryw_want *w = NULL;
    pthread_mutex_lock(&cc->lock);
    int n = kc__ryw_collect(&cc->ryw, type, ns, name, &w);
    pthread_mutex_unlock(&cc->lock);
    if (n < 0)
        return kc_error_set(err, n, "cached client: out of memory");
    if (n == 0)
        return 0;

    int rc = 0;
    if (kc__cc_wait_enabled(cc, call)) {
        int top = -1; /* the write with the highest comparable RV: waited for first */
        for (int i = 0; i < n; i++)
            if (!w[i].delete_uid && kc_rv_is_canonical(w[i].rv) &&
                (top < 0 || kc_rv_compare(w[i].rv, w[top].rv) == KC_RV_GREATER))
                top = i;
        for (int k = -1; rc == 0 && k < n; k++) { /* k = -1: the top one; then the others */
            int i = k < 0 ? top : k;
            if (i < 0 || w[i].delete_uid || (k >= 0 && i == top))
                continue;
            kc_store_cond c = kc__ryw_want_cond(&w[i]);
            rc = kc__cc_wait(cc, store, &c, kc__cc_deadline_lazy(cc, call, deadline), err);
        }
        if (rc < 0) {
            wants_free(w, n);
            return rc;
        }
        for (int i = 0; i < n; i++)
            if (!w[i].delete_uid)
                forget(cc, type, &w[i]);
    }

    /* Keep only the pending deletes the store has not shown yet. */
    int k = 0;
    for (int i = 0; i < n; i++) {
        kc_store_cond c = kc__ryw_want_cond(&w[i]);
        if (w[i].delete_uid && kc_store_check(store, &c, NULL) != 1) {
            if (k != i) {
                w[k] = w[i];
                memset(&w[i], 0, sizeof(w[i]));
            }
            k++;
            continue;
        }
        if (w[i].delete_uid)
            forget(cc, type, &w[i]);
        kc__ryw_want_clear(&w[i]);
    }
    *ret_hides = w;
    *ret_n_hides = k;
    if (k == 0) {
        free(w);
        *ret_hides = NULL;
    }
    return 0;
}

/* ---- get ------------------------------------------------------------------------------------- */

/* Everything but the hot path of kc_cached_client_get (arguments validated, ns not NULL). */
static __attribute__((noinline)) int get_slow(kc_cached_client *cc, const kc_gvr *gvr,
                                              const char *ns, const char *name,
                                              const kc_cached_call_opts *call, kc_obj **ret_obj,
                                              kc_error *err)
{
    if ((call && call->live) || kc__cc_uncached(cc, gvr))
        return kc_client_get(cc->client, gvr, ns, name, ret_obj, err);

    uint64_t deadline = 0;
    kc_store *store = NULL;
    int rc = kc__cc_store(cc, gvr, ns, true, call, &deadline, &store, err);
    if (rc < 0)
        return rc;

    kc__ryw_want *hides = NULL;
    int n_hides = 0;
    char type[TYPE_KEY_MAX];
    if (cc->mode == KC_RYW_BLOCK_ON_READ) {
        if ((rc = kc__cc_type_key(gvr, type, sizeof(type), err)) < 0)
            return rc;
        rc = bor_prepare(cc, type, store, ns, name, call, &deadline, &hides, &n_hides, err);
        if (rc < 0)
            return rc;
    }
    kc_obj *obj = kc_store_get(store, ns, name);
    for (int h = 0; obj && h < n_hides; h++) {
        if (hidden_by(&hides[h], obj)) {
            learn(cc, type, &hides[h], obj);
            kc_obj_unref(obj);
            obj = NULL;
        }
    }
    wants_free(hides, n_hides);
    if (!obj)
        return kc_error_set(err, KC_ENOTFOUND, "%s \"%s\" not found in the cache", gvr->resource,
                            name);
    *ret_obj = obj;
    return 0;
}

int(kc_cached_client_get)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns, const char *name,
                          const kc_cached_call_opts *call, size_t call_size, kc_obj **ret_obj,
                          kc_error *err)
{
    KC__OPTS_TAKE(call, kc_cached_call_opts, err);
    if (!cc || !name || !*name || !ret_obj)
        return kc_error_set(err, KC_EINVAL, "cached client: get needs a name and ret_obj");
    ns = ns ? ns : "";
    if (!gvr || !gvr->version || !*gvr->version || !gvr->resource || !*gvr->resource)
        return kc_error_set(err, KC_EINVAL, "cached client: gvr needs a version and a resource");
    /* The hot path (discovery-style loops): a cached, synced type found by the inline lock-free
     * lookup (all-namespace informer: no namespace, or a client not restricted to one), no
     * block-on-read bookkeeping to consult, then the store's lock-free Get. Anything else — first
     * use, live/uncached reads, block-on-read, not found — takes the full path. */
    if (cc->mode != KC_RYW_BLOCK_ON_READ && !(call && call->live) && cc->n_uncached == 0 &&
        (!*ns || !cc->ns)) {
        kc__cc_type *t = NULL;
        if (*ns && atomic_load_explicit(&cc->n_ns_bound, memory_order_acquire))
            t = kc__cc_type_find(cc, gvr, ns); /* a bound informer of that namespace first */
        if (!t)
            t = kc__cc_type_find(cc, gvr, "");
        if (t && atomic_load_explicit(&t->synced, memory_order_acquire)) {
            kc_obj *obj = kc_store_get(t->store, ns, name);
            if (obj) {
                *ret_obj = obj;
                return 0;
            }
        }
    }
    return get_slow(cc, gvr, ns, name, call, ret_obj, err);
}

/* ---- lists ----------------------------------------------------------------------------------- */

static int cmp_obj(const void *a, const void *b)
{
    const kc_obj *x = *(const kc_obj *const *)a, *y = *(const kc_obj *const *)b;
    int c = strcmp(kc_obj_namespace(x), kc_obj_namespace(y));
    return c ? c : strcmp(kc_obj_name(x), kc_obj_name(y));
}

/* Filter objs (consumed) by selectors and hides (pending deletes of cc's type) into a new sorted
 * array. */
static int filter_sort(kc_obj **objs, size_t n, const kc_label_selector *ls,
                       const kc_field_selector *fs, kc_cached_client *cc, const char *type,
                       const kc__ryw_want *hides, int n_hides, kc_obj ***ret_items, size_t *ret_n,
                       kc_error *err)
{
    kc_obj **out = malloc((n ? n : 1) * sizeof(*out));
    if (!out) {
        kc_obj_array_free(objs, n);
        return kc_error_set(err, KC_ENOMEM, "cached client: out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool keep = kc_label_selector_match(ls, objs[i]) && kc_field_selector_match(fs, objs[i]);
        for (int h = 0; keep && h < n_hides; h++)
            if (hidden_by(&hides[h], objs[i])) {
                learn(cc, type, &hides[h], objs[i]);
                keep = false;
            }
        if (keep)
            out[k++] = objs[i];
        else
            kc_obj_unref(objs[i]);
    }
    free(objs);
    qsort(out, k, sizeof(*out), cmp_obj);
    *ret_items = out;
    *ret_n = k;
    return 0;
}

typedef struct live_acc {
    kc_obj **items;
    size_t n, cap;
} live_acc;

static int live_item(void *ud, kc_obj *item)
{
    live_acc *a = ud;
    if (kc__grow(&a->items, &a->cap, a->n + 1, sizeof(*a->items), 64) < 0) {
        kc_obj_unref(item);
        return KC_ENOMEM;
    }
    a->items[a->n++] = item;
    return 0;
}

static int live_list(kc_cached_client *cc, const kc_gvr *gvr, const char *ns, const char *lsel,
                     const char *fsel, kc_obj ***ret_items, size_t *ret_n, kc_error *err)
{
    kc_list_opts lo = {.label_selector = lsel, .field_selector = fsel};
    live_acc a = {0};
    int rc = kc_client_list_all(cc->client, gvr, ns, &lo, NULL, live_item, &a, err);
    if (rc < 0) {
        kc_obj_array_free(a.items, a.n);
        return rc;
    }
    return filter_sort(a.items, a.n, NULL, NULL, NULL, NULL, NULL, 0, ret_items, ret_n, err);
}

int(kc_cached_client_list)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                           const char *label_selector, const char *field_selector,
                           const kc_cached_call_opts *call, size_t call_size, kc_obj ***ret_items,
                           size_t *ret_n, kc_error *err)
{
    KC__OPTS_TAKE(call, kc_cached_call_opts, err);
    if (!cc || !ret_items || !ret_n)
        return kc_error_set(err, KC_EINVAL, "cached client: NULL argument");
    ns = ns ? ns : "";
    char type[TYPE_KEY_MAX];
    int rc = kc__cc_type_key(gvr, type, sizeof(type), err);
    if (rc < 0)
        return rc;
    if ((call && call->live) || kc__cc_uncached(cc, gvr))
        return live_list(cc, gvr, ns, label_selector, field_selector, ret_items, ret_n, err);

    kc_label_selector *ls = NULL;
    kc_field_selector *fs = NULL;
    kc__ryw_want *hides = NULL;
    int n_hides = 0;
    kc_obj **objs = NULL;
    size_t n = 0;
    if ((rc = kc_label_selector_parse(label_selector, &ls, err)) < 0)
        goto out;
    if ((rc = kc_field_selector_parse(field_selector, &fs, err)) < 0)
        goto out;
    uint64_t deadline = 0;
    kc_store *store = NULL;
    if ((rc = kc__cc_store(cc, gvr, ns, true, call, &deadline, &store, err)) < 0)
        goto out;
    if ((rc = bor_prepare(cc, type, store, ns, NULL, call, &deadline, &hides, &n_hides, err)) < 0)
        goto out;
    rc = *ns ? kc_store_list_by_namespace(store, ns, &objs, &n, NULL)
             : kc_store_list(store, &objs, &n, NULL);
    if (rc < 0) {
        kc_error_set(err, rc, "cached client: listing the store: %s", kc_strerror(rc));
        goto out;
    }
    rc = filter_sort(objs, n, ls, fs, cc, type, hides, n_hides, ret_items, ret_n, err);
out:
    wants_free(hides, n_hides);
    kc_field_selector_free(fs);
    kc_label_selector_free(ls);
    return rc;
}

int(kc_cached_client_list_by_index)(kc_cached_client *cc, const kc_gvr *gvr, const char *index_name,
                                    const char *value, const kc_cached_call_opts *call,
                                    size_t call_size, kc_obj ***ret_items, size_t *ret_n,
                                    kc_error *err)
{
    KC__OPTS_TAKE(call, kc_cached_call_opts, err);
    if (!cc || !index_name || !value || !ret_items || !ret_n)
        return kc_error_set(err, KC_EINVAL, "cached client: NULL argument");
    if (call && call->live)
        return kc_error_set(err, KC_EINVAL, "cached client: list by index reads the cache only");
    char type[TYPE_KEY_MAX];
    int rc = kc__cc_type_key(gvr, type, sizeof(type), err);
    if (rc < 0)
        return rc;
    uint64_t deadline = 0;
    kc_store *store = NULL;
    rc = kc__cc_store(cc, gvr, cc->ns, true, call, &deadline, &store, err);
    if (rc < 0)
        return rc;
    kc__ryw_want *hides = NULL;
    int n_hides = 0;
    rc = bor_prepare(cc, type, store, cc->ns, NULL, call, &deadline, &hides, &n_hides, err);
    if (rc < 0)
        return rc;
    kc_obj **objs = NULL;
    size_t n = 0;
    if (!strcmp(index_name, KC_STORE_INDEX_NAMESPACE))
        rc = kc_store_list_by_namespace(store, value, &objs, &n,
                                        NULL); /* the store's built-in index */
    else
        rc = kc_store_list_by_index(store, index_name, value, &objs, &n, NULL);
    if (rc == KC_ENOTFOUND)
        rc = kc_error_set(err, rc, "cached client: %s has no index \"%s\"", gvr->resource,
                          index_name);
    else if (rc < 0)
        rc = kc_error_set(err, rc, "cached client: index lookup: %s", kc_strerror(rc));
    else
        rc = filter_sort(objs, n, NULL, NULL, cc, type, hides, n_hides, ret_items, ret_n, err);
    wants_free(hides, n_hides);
    return rc;
}
