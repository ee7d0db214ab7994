/*
 * list.c — LIST of a collection (spec §4; #59–#70): option validation, label/field selectors
 * (unsupported fields → 400), resourceVersion / resourceVersionMatch semantics, Exact reads of a
 * past RV (the current state rolled back through the event history; compacted → 410), RV beyond
 * the current one → 504 ResourceVersionTooLarge, and paging.
 *
 * Paging: the first page of a limited list stores the whole filtered result (object references)
 * as a snapshot (store.c); continue tokens name the snapshot, its RV and the next position, so
 * every page reads one consistent state with the first page's RV. A token whose snapshot was
 * evicted or compacted → 410 Expired; garbage → 400. Token: base64url (no padding) of
 * {"v":"meta.k8s.io/v1","rv":N,"id":S,"pos":P}. RV "0" lists ignore limit (allowed by the API).
 * The store lock is held only to collect references; encoding happens after unlocking.
 * fieldSelector=spec.nodeName=X (a node agent's list): the store caches each pod's nodeName at
 * write time (kc__entry_on_node), so the other nodes' pods are skipped without a JSON match or a
 * reference; history rolled back over them still goes through the full selector.
 * Sharded lists (shardSelector, shard.c): each page keeps the items of the shard in its stretch
 * of the snapshot, so a page may be short but paging ends and returns each match once (S9).
 */
#include "server/api/api_internal.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

/* ---- continue tokens ------------------------------------------------------------------------ */

static char *token_encode(uint64_t rv, uint64_t id, size_t pos)
{
    json_t *t = json_pack("{s:s,s:I,s:I,s:I}", "v", "meta.k8s.io/v1", "rv", (json_int_t)rv, "id",
                          (json_int_t)id, "pos", (json_int_t)pos);
    char *js = t ? json_dumps(t, JSON_COMPACT) : NULL;
    json_decref(t);
    if (!js)
        return NULL;
    size_t n = strlen(js);
    char *out = malloc(4 * ((n + 2) / 3) + 1);
    if (out) {
        int l = EVP_EncodeBlock((unsigned char *)out, (unsigned char *)js, (int)n);
        while (l > 0 && out[l - 1] == '=')
            l--;
        out[l] = 0;
        for (char *p = out; *p; p++)
            *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
    }
    free(js);
    return out;
}

static int token_decode(const char *tok, uint64_t *rv, uint64_t *id, size_t *pos)
{
    size_t n = strlen(tok);
    if (n == 0 || n > 1024)
        return KC_EINVAL;
    char in[1032];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = tok[i];
        c = c == '-' ? '+' : c == '_' ? '/' : c;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/' || c == '='))
            return KC_EINVAL;
        in[k++] = c;
    }
    while (k % 4)
        in[k++] = '=';
    unsigned char out[800];
    int l = EVP_DecodeBlock(out, (unsigned char *)in, (int)k);
    if (l <= 0)
        return KC_EINVAL;
    while (l > 0 && out[l - 1] == 0)
        l--;
    json_t *t = json_loadb((char *)out, (size_t)l, 0, NULL);
    json_t *jr = json_object_get(t, "rv"), *ji = json_object_get(t, "id"),
           *jp = json_object_get(t, "pos");
    int rc = KC_EINVAL;
    if (json_is_integer(jr) && json_is_integer(ji) && json_is_integer(jp) &&
        json_integer_value(jr) >= 0 && json_integer_value(jp) >= 0) {
        *rv = (uint64_t)json_integer_value(jr);
        *id = (uint64_t)json_integer_value(ji);
        *pos = (size_t)json_integer_value(jp);
        rc = 0;
    }
    json_decref(t);
    return rc;
}

/* ---- state at a past RV --------------------------------------------------------------------- */

typedef struct vec {
    kc_obj **v;
    size_t n, cap;
} vec;

static int key_cmp(kc_obj *o, const char *ns, const char *name)
{
    int c = strcmp(kc_obj_namespace(o), ns);
    return c ? c : strcmp(kc_obj_name(o), name);
}

static size_t lower_bound(vec *a, const char *ns, const char *name)
{
    size_t lo = 0, hi = a->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (key_cmp(a->v[mid], ns, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int vec_set(vec *a, kc_obj *o, bool remove)
{
    const char *ns = kc_obj_namespace(o), *name = kc_obj_name(o);
    size_t i = lower_bound(a, ns, name);
    bool found = i < a->n && key_cmp(a->v[i], ns, name) == 0;
    if (remove) {
        if (found) {
            kc_obj_unref(a->v[i]);
            memmove(&a->v[i], &a->v[i + 1], (a->n - i - 1) * sizeof(*a->v));
            a->n--;
        }
        return 0;
    }
    if (found) {
        kc_obj_unref(a->v[i]);
        a->v[i] = kc_obj_ref(o);
        return 0;
    }
    if (kc__grow(&a->v, &a->cap, a->n + 1, sizeof(*a->v), 64) < 0)
        return KC_ENOMEM;
    memmove(&a->v[i + 1], &a->v[i], (a->n - i) * sizeof(*a->v));
    a->v[i] = kc_obj_ref(o);
    a->n++;
    return 0;
}

/* Collect the objects of r in scope (ns NULL = all; node non-NULL: the pods that can be on node,
 * by the store's cached nodeName — a superset the selector then filters) at rv `at` (mu held). */
static int collect(kc_server *srv, kc__rsrc *r, const char *ns, const char *node, uint64_t at,
                   vec *out)
{
    size_t n;
    kc__entry **s = kc__store_sorted(r, &n);
    out->v = malloc((n ? n : 1) * sizeof(*out->v));
    out->cap = n ? n : 1;
    out->n = 0;
    if (!out->v || (n && !s))
        return KC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if ((ns && strcmp(s[i]->ns, ns) != 0) || (node && !kc__entry_on_node(r, s[i], node)))
            continue;
        out->v[out->n++] = kc_obj_ref(s[i]->obj);
    }
    if (at >= srv->rv)
        return 0;
    for (size_t k = srv->hist_len; k-- > 0;) {
        kc__hist *h = &srv->hist[(srv->hist_head + k) % srv->hist_cap];
        if (h->rv <= at)
            break;
        if (h->rsrc != r || (ns && strcmp(kc_obj_namespace(h->obj), ns) != 0))
            continue;
        int rc =
            h->type == KC_WATCH_ADDED ? vec_set(out, h->obj, true) : vec_set(out, h->old, false);
        if (rc)
            return rc;
    }
    return 0;
}

static void vec_free(vec *a)
{
    for (size_t i = 0; i < a->n; i++)
        kc_obj_unref(a->v[i]);
    free(a->v);
}

/* ---- the verb ------------------------------------------------------------------------------- */

static int expired(kc_error *err, const char *msg)
{
    return kc__fail(err, 410, "Expired", "%s", msg);
}

/* The query's resourceVersion rules (spec §3): 0 and *want (0 = latest), *exact (serve at want),
 * or the 400/422 failure. */
static int check_list_query(kc__req *req, uint64_t *want, bool *exact)
{
    kc__query *q = &req->q;
    kc_error *err = &req->err;
    const char *m = q->rv_match && *q->rv_match ? q->rv_match : NULL;
    bool has_rv = q->rv && *q->rv;
    bool has_cont = q->cont && *q->cont;
    if (q->send_initial_set)
        return kc__fail(err, 422, "Invalid",
                        "sendInitialEvents: Forbidden: sendInitialEvents is "
                        "forbidden for list");
    if (m && strcmp(m, "NotOlderThan") && strcmp(m, "Exact"))
        return kc__fail(err, 422, "Invalid", "resourceVersionMatch: Unsupported value: \"%s\"", m);
    if (m && !has_rv)
        return kc__fail(err, 422, "Invalid",
                        "resourceVersionMatch: Forbidden: "
                        "resourceVersionMatch is forbidden unless "
                        "resourceVersion is provided");
    if (m && has_cont)
        return kc__fail(err, 422, "Invalid",
                        "resourceVersionMatch: Forbidden: "
                        "resourceVersionMatch is forbidden when continue is "
                        "provided");
    if (m && !strcmp(m, "Exact") && !strcmp(q->rv, "0"))
        return kc__fail(err, 422, "Invalid",
                        "resourceVersionMatch: Forbidden: "
                        "resourceVersionMatch \"exact\" is forbidden for "
                        "resourceVersion \"0\"");
    if (has_cont && has_rv && strcmp(q->rv, "0") != 0)
        return kc__fail(err, 400, "BadRequest",
                        "specifying resource version is not allowed when "
                        "using continue");
    *want = 0;
    if (has_rv && strcmp(q->rv, "0") != 0 && kc_rv_parse(q->rv, want, NULL) != 0)
        return kc__fail(err, 400, "BadRequest", "invalid resource version: %s", q->rv);
    *exact = *want && ((m && !strcmp(m, "Exact")) || (!m && q->limit > 0 && !q->cont));
    return 0;
}

/* The label and field selectors of the query, or the 400 failure (*ls, *fs freed by the caller). */
static int parse_list_selectors(kc__req *req, kc__rsrc *r, kc_label_selector **ls,
                                kc_field_selector **fs)
{
    kc_error perr = KC_ERROR_INIT;
    int rc = 0;
    if (kc_label_selector_parse(req->q.label_sel, ls, &perr) != 0)
        rc = kc__fail(&req->err, 400, "BadRequest", "unable to parse requirement: %s",
                      perr.message ? perr.message : "invalid label selector");
    else if (kc_field_selector_parse(req->q.field_sel, fs, &perr) != 0)
        rc = kc__fail(&req->err, 400, "BadRequest", "invalid field selector: %s",
                      perr.message ? perr.message : "parse error");
    kc_error_clear(&perr);
    if (rc)
        return rc;
    const char *bad = kc__rsrc_bad_field(r, *fs);
    if (bad)
        return kc__fail(&req->err, 400, "BadRequest",
                        "\"%s\" is not a known field selector: only "
                        "\"metadata.name\", \"metadata.namespace\"",
                        bad);
    return 0;
}

/* One page of a list: the items (references), the continue token, remainingItemCount (-1 when
 * not reported) and the list's resourceVersion. */
typedef struct list_page {
    kc_obj **items;
    size_t n;
    char *cont;
    int64_t remaining;
    uint64_t rv;
} list_page;

/* Sharded paging (S9): the references of src[pos..n) whose shard key is in sel (NULL = all),
 * at most lim (0 = no bound), into dst; then past the non-matching items that follow, so that a
 * page never ends just before an empty one. Returns the position after the page. */
static size_t take_page(kc_obj *const *src, size_t n, size_t pos, size_t lim,
                        const kc_shard_selector *sel, kc_obj **dst, size_t *ret_k)
{
    size_t k = 0;
    for (; pos < n && (!lim || k < lim); pos++)
        if (kc_shard_selector_match(sel, src[pos]))
            dst[k++] = kc_obj_ref(src[pos]);
    while (sel && pos < n && !kc_shard_selector_match(sel, src[pos]))
        pos++;
    *ret_k = k;
    return pos;
}

/* The next page of a continued list, from its snapshot (srv->mu held). The snapshot holds the
 * label/field-selected items of the first page's request; the shard selector is the one this
 * page's request repeats (the token does not carry it, S9). */
static int list_continue_locked(kc__req *req, kc__rsrc *r, bool filtered,
                                const kc_shard_selector *sel, list_page *pg)
{
    kc_server *srv = req->srv;
    kc__query *q = &req->q;
    uint64_t trv, id;
    size_t pos;
    if (token_decode(q->cont, &trv, &id, &pos) != 0)
        return kc__fail(&req->err, 400, "BadRequest", "invalid continue token");
    kc__snapshot *s = trv < srv->floor && trv != srv->rv ? NULL : kc__snap_get(srv, id);
    if (!s || s->rsrc != r || s->rv != trv || pos > s->n)
        return expired(&req->err, "The provided continue parameter is too old to display a "
                                  "consistent list result. You can start a new list without the "
                                  "continue parameter.");
    size_t lim = q->limit > 0 ? (size_t)q->limit : 0;
    size_t cap = lim && lim < s->n - pos ? lim : s->n - pos;
    pg->items = malloc((cap ? cap : 1) * sizeof(*pg->items));
    if (!pg->items)
        return kc_error_set(&req->err, KC_ENOMEM, "out of memory");
    size_t end = take_page(s->items, s->n, pos, lim, sel, pg->items, &pg->n);
    pg->rv = s->rv;
    if (end < s->n) {
        pg->cont = token_encode(s->rv, s->id, end);
        if (!filtered)
            pg->remaining = (int64_t)(s->n - end);
    }
    return 0;
}

/* Keep the items of a that are in sel (in place). */
static void vec_shard(vec *a, const kc_shard_selector *sel)
{
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (kc_shard_selector_match(sel, a->v[i]))
            a->v[k++] = a->v[i];
        else
            kc_obj_unref(a->v[i]);
    }
    a->n = k;
}

/* A new list at resourceVersion at, filtered; the first page and a snapshot for the rest when
 * it has a limit (srv->mu held). The snapshot keeps every label/field-selected item; the shard
 * selector picks each page's items from it (S9). */
static int list_fresh_locked(kc__req *req, kc__rsrc *r, uint64_t at, const kc_label_selector *ls,
                             const kc_field_selector *fs, const kc_shard_selector *sel,
                             bool filtered, list_page *pg)
{
    kc_server *srv = req->srv;
    kc__query *q = &req->q;
    const char *ns = req->route.has_ns ? req->route.ns : NULL;
    pg->rv = at;
    vec all;
    const char *ptr, *node = kc__watch_node_pin(fs, &ptr);
    int rc = collect(srv, r, ns, node, at, &all);
    if (rc != 0) {
        vec_free(&all);
        return kc_error_set(&req->err, rc, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < all.n; i++) {
        if ((!ls || kc_label_selector_match(ls, all.v[i])) &&
            (!fs || kc_field_selector_match(fs, all.v[i])))
            all.v[k++] = all.v[i];
        else
            kc_obj_unref(all.v[i]);
    }
    all.n = k;
    bool page = q->limit > 0 && strcmp(q->rv ? q->rv : "", "0") != 0 && all.n > (size_t)q->limit;
    if (!page) {
        vec_shard(&all, sel);
        pg->items = all.v;
        pg->n = all.n;
        return 0;
    }
    pg->items = malloc((size_t)q->limit * sizeof(*pg->items));
    if (!pg->items) {
        vec_free(&all);
        return kc_error_set(&req->err, KC_ENOMEM, "out of memory");
    }
    size_t end = take_page(all.v, all.n, 0, (size_t)q->limit, sel, pg->items, &pg->n);
    if (end == all.n) { /* the shard's items all fit in this page */
        vec_free(&all);
        return 0;
    }
    size_t total = all.n;
    uint64_t id = kc__snap_put(srv, r, at, all.v, all.n);
    pg->cont = token_encode(at, id, end);
    if (!filtered)
        pg->remaining = (int64_t)(total - end);
    return 0;
}

int kc__verb_list(kc__req *req, kc__rsrc *r)
{
    kc_server *srv = req->srv;
    kc_error *err = &req->err;
    uint64_t want = 0;
    bool exact = false;
    int rc = check_list_query(req, &want, &exact);
    if (rc)
        return rc;
    kc_label_selector *ls = NULL;
    kc_field_selector *fs = NULL;
    kc_shard_selector *sel = NULL;
    rc = parse_list_selectors(req, r, &ls, &fs);
    if (rc)
        goto out_sel;
    rc = kc__shard_selector_of(req, &sel);
    if (rc)
        goto out_sel;
    /* remainingItemCount is not reported for selected lists, sharded ones included (S9) */
    bool filtered = !kc_label_selector_empty(ls) || !kc_field_selector_empty(fs) || sel;
    list_page pg = {NULL, 0, NULL, -1, 0};
    pthread_mutex_lock(&srv->mu);
    pg.rv = srv->rv;
    if (want > srv->rv) {
        rc = kc__fail(err, 504, "Timeout",
                      "Timeout: Too large resource version: %llu, current: "
                      "%llu",
                      (unsigned long long)want, (unsigned long long)srv->rv);
        kc__fail_cause(err, "ResourceVersionTooLarge", NULL, "Too large resource version");
        err->retry_after_s = 1;
    } else if (req->q.cont && *req->q.cont) {
        rc = list_continue_locked(req, r, filtered, sel, &pg);
    } else if (exact && want < srv->floor) {
        rc = expired(err, "The resourceVersion for the provided list is too old.");
    } else {
        rc = list_fresh_locked(req, r, exact ? want : srv->rv, ls, fs, sel, filtered, &pg);
    }
    pthread_mutex_unlock(&srv->mu);
    req->shard_echo = kc_shard_selector_string(sel); /* S8: canonical, iff sharded */
    if (rc == 0 && r->is_crd && (rc = kc__convert_objs(req, r, pg.items, pg.n)) != 0) {
        for (size_t i = 0; i < pg.n; i++) /* CV7, CV8: the list fails as a whole */
            kc_obj_unref(pg.items[i]);
        free(pg.items);
    }
    if (rc == 0)
        rc = kc__reply_list(req, r, pg.items, pg.n, pg.rv, pg.cont, pg.remaining);
    free(pg.cont);
    req->shard_echo = NULL;
out_sel:
    kc_shard_selector_free(sel);
    kc_label_selector_free(ls);
    kc_field_selector_free(fs);
    return rc;
}
