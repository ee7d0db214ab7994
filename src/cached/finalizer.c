/*
 * cached/finalizer.c — kc_cached_client_add_finalizer / kc_cached_client_remove_finalizer:
 * controllerutil.AddFinalizer / RemoveFinalizer followed by a write, done so that a concurrent
 * writer is never overwritten.
 *
 * Each attempt reads the object (the cache on the first attempt, so this client's own writes are
 * seen — read-your-writes; live from the server on a retry, so the retry sees the newer state that
 * made the previous attempt fail) and, when the finalizer is not yet in the wanted state, sends one
 * JSON patch (RFC 6902) through kc_cached_client_patch (block-on-write applies):
 *
 *     [{"op":"test","path":"/metadata/resourceVersion","value":"<rv read>"},
 *      {"op":"add","path":"/metadata/finalizers/-","value":"<f>"}]        (or removes by index)
 *
 * The test makes the patch apply only to the state it was computed from — the indexes of a remove
 * are only right there —, so another writer's change between the read and the patch fails it
 * (409 Conflict, or 422 from the failed test) instead of being lost. A 422 is retried only when a
 * live read shows the resourceVersion moved (else it is the server's verdict, e.g. "no new
 * finalizers can be added if the object is being deleted"). Retries: client-go's retry.DefaultRetry
 * (5 steps, 10 ms, jitter 10%).
 */
#include "cached/internal.h"

#include "kcache/finalizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIN_RETRIES    5
#define FIN_BACKOFF_MS 10

/* Read ns/name: from the cache (attempt 0: read-your-writes), else live. */
static int fin_read(kc_cached_client *cc, const kc_gvr *gvr, const char *ns, const char *name,
                    const kc_cached_call_opts *call, bool live, kc_obj **ret, kc_error *err)
{
    kc_cached_call_opts c = {0};
    if (call)
        c = *call;
    c.live = c.live || live;
    return (kc_cached_client_get)(cc, gvr, ns, name, &c, sizeof c, ret, err);
}

/* The patch for obj (kc__buf b, empty on entry): 0 and b filled; 1 when nothing needs writing. */
static int fin_patch(const kc_obj *obj, const char *fin, bool add, kc__buf *b)
{
    const char *rv = NULL;
    size_t rvl = 0;
    if (kc_obj_get_raw(obj, "/metadata/resourceVersion", &rv, &rvl, NULL) < 0)
        rv = "\"\"", rvl = 2;
    kc__buf_printf(b, "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":%.*s}",
                   (int)rvl, rv);
    size_t n = kc_obj_finalizer_count(obj), changes = 0;
    if (add) {
        if (kc_obj_has_finalizer(obj, fin))
            return 1;
        const char *arr = NULL;
        size_t al = 0;
        bool have = kc_obj_get_raw(obj, "/metadata/finalizers", &arr, &al, NULL) == 0 && al > 0 &&
                    arr[0] == '[';
        if (have)
            kc__buf_printf(b,
                           ",{\"op\":\"add\",\"path\":\"/metadata/finalizers/-\",\"value\":"
                           "\"%s\"}",
                           fin);
        else
            kc__buf_printf(b,
                           ",{\"op\":\"add\",\"path\":\"/metadata/finalizers\",\"value\":"
                           "[\"%s\"]}",
                           fin);
        changes = 1;
    } else {
        for (size_t k = n; k-- > 0;) { /* highest index first: the lower ones do not move */
            char ptr[48];
            snprintf(ptr, sizeof ptr, "/metadata/finalizers/%zu", k);
            char *s = NULL;
            size_t sl = 0;
            if (kc_obj_get_string(obj, ptr, &s, &sl, NULL) == 0 && sl == strlen(fin) &&
                memcmp(s, fin, sl) == 0) {
                kc__buf_printf(b, ",{\"op\":\"remove\",\"path\":\"%s\"}", ptr);
                changes++;
            }
            free(s);
        }
    }
    kc__buf_append_char(b, ']');
    return changes ? 0 : 1;
}

/* The resourceVersion of ns/name on the server now differs from rv (or the object is gone). */
static bool rv_moved(kc_cached_client *cc, const kc_gvr *gvr, const char *ns, const char *name,
                     const char *rv)
{
    kc_obj *o = NULL;
    if (kc_client_get(cc->client, gvr, ns, name, &o, NULL) < 0)
        return true;
    bool moved = strcmp(kc_obj_resource_version(o), rv) != 0;
    kc_obj_unref(o);
    return moved;
}

static int fin_change(kc_cached_client *cc, const kc_gvr *gvr, const char *ns, const char *name,
                      const char *fin, bool add, const kc_cached_call_opts *call, kc_obj **ret_obj,
                      kc_error *err)
{
    if (!cc || !gvr || !name || !*name || !fin)
        return kc_error_set(err, KC_EINVAL, "cached client: finalizer: NULL argument");
    const char *bad = kc__check_qualified_name(fin, strlen(fin));
    if (bad)
        return kc_error_set(err, KC_EINVAL, "cached client: finalizer \"%s\": %s", fin, bad);
    ns = ns ? ns : "";
    kc__rng rng;
    kc__rng_seed_auto(&rng);
    int rc = 0;
    for (int attempt = 0; attempt <= FIN_RETRIES; attempt++) {
        if (attempt > 0) /* retry.DefaultRetry: 10 ms, factor 1, jitter 0.1 */
            kc__sleep_ns((uint64_t)FIN_BACKOFF_MS * KC__NS_PER_MS +
                         kc__rng_range(&rng, 0, FIN_BACKOFF_MS * KC__NS_PER_MS / 10));
        kc_obj *cur = NULL;
        kc_error_clear(err);
        rc = fin_read(cc, gvr, ns, name, call, attempt > 0, &cur, err);
        if (rc == KC_ENOTFOUND && !add) { /* gone: nothing to remove */
            kc_error_clear(err);
            if (ret_obj)
                *ret_obj = NULL;
            return 0;
        }
        if (rc < 0)
            return rc;
        kc__buf b = KC__BUF_INIT(64 * 1024);
        int none = fin_patch(cur, fin, add, &b);
        if (none == 1 || !b.data) {
            kc__buf_free(&b);
            if (none == 1) { /* already in the wanted state: no write */
                if (ret_obj)
                    *ret_obj = cur;
                else
                    kc_obj_unref(cur);
                return 0;
            }
            kc_obj_unref(cur);
            return kc_error_set(err, KC_ENOMEM, "cached client: finalizer: out of memory");
        }
        rc = (kc_cached_client_patch)(cc, gvr, ns, name, KC_PATCH_JSON, b.data, b.len, NULL, 0,
                                      call, call ? sizeof(*call) : 0, ret_obj, err);
        kc__buf_free(&b);
        bool retry =
            rc == KC_ECONFLICT ||
            (rc == KC_EUNPROCESSABLE && rv_moved(cc, gvr, ns, name, kc_obj_resource_version(cur)));
        kc_obj_unref(cur);
        if (!retry)
            return rc;
    }
    return kc_error_set(err, KC_ECONFLICT,
                        "cached client: %s finalizer \"%s\" of %s \"%s\": still conflicting after "
                        "%d retries",
                        add ? "adding" : "removing", fin, gvr->resource, name, FIN_RETRIES);
}

int(kc_cached_client_add_finalizer)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                                    const char *name, const char *finalizer,
                                    const kc_cached_call_opts *call, size_t call_size,
                                    kc_obj **ret_obj, kc_error *err)
{
    KC__OPTS_TAKE(call, kc_cached_call_opts, err);
    return fin_change(cc, gvr, ns, name, finalizer, true, call, ret_obj, err);
}

int(kc_cached_client_remove_finalizer)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                                       const char *name, const char *finalizer,
                                       const kc_cached_call_opts *call, size_t call_size,
                                       kc_obj **ret_obj, kc_error *err)
{
    KC__OPTS_TAKE(call, kc_cached_call_opts, err);
    return fin_change(cc, gvr, ns, name, finalizer, false, call, ret_obj, err);
}
