/*
 * store.c — storage of the embedded API server: per-resource hash maps ns/name → kc_obj, the
 * global resourceVersion counter, the bounded event history ring, and paging snapshots.
 *
 * Layout: each kc__rsrc owns a hash map of kc__entry (core's kc__htab; key (ns, name) as a
 * kc__hkey, joined "ns\0name\0" in the entry, so a lookup needs no buffer). A key-sorted array of
 * entry pointers is rebuilt lazily when inserts or removals made it dirty (updates replace
 * entry->obj in place and keep the order). The stored kc_obj text is the serialized form: a LIST is
 * the concatenation. History: a ring of the last `history` events of all resources (global RV
 * order). `floor` is the RV below which events were dropped: a watch from RV N >= floor can be
 * replayed exactly. Renumbering (restart as after a restore from backup): every object gets RV 1..N
 * in the order of its current RV, built before any is swapped in so that running out of memory
 * changes nothing. Snapshots: a paged LIST keeps its item references (immutable objects) so that
 * every page of one list reads the same state; a bounded table, least recently created evicted (→
 * 410 Expired). Every function here runs with srv->mu held, except the object parse helpers.
 */
#include "server/storage/storage_internal.h"

#include "server/storage/hub_index.h"

#include <stdlib.h>
#include <string.h>

/* Cache e's nodeName (r->node_indexed): located once per write, so that a node's LIST or a node
 * agent's initial watch state compares a span instead of searching every pod's JSON. */
static void entry_node(const kc__rsrc *r, kc__entry *e)
{
    if (!r->node_indexed)
        return;
    const char *raw = NULL;
    size_t len = 0;
    if (kc_obj_get_raw(e->obj, "/spec/nodeName", &raw, &len, NULL) < 0)
        raw = NULL, len = 0;
    e->node_known = kc__pin_value_of(raw, len, &e->node, &e->node_len);
}

bool kc__entry_on_node(const kc__rsrc *r, const kc__entry *e, const char *node)
{
    if (!r->node_indexed || !e->node_known)
        return true;
    return e->node_len == strlen(node) && memcmp(e->node, node, e->node_len) == 0;
}

kc__entry *kc__store_find(kc__rsrc *r, const char *ns, const char *name)
{
    kc__hkey k;
    kc__hkey_init(&k, 2, r->namespaced ? ns : "", name, NULL);
    return (kc__entry *)kc__htab_find_key(&r->map, &k, NULL);
}

static int insert(kc__rsrc *r, kc_obj *obj)
{
    kc__hkey k;
    kc__hkey_init(&k, 2, r->namespaced ? kc_obj_namespace(obj) : "", kc_obj_name(obj), NULL);
    kc__entry *e = malloc(sizeof(*e) + k.klen + 1);
    if (!e)
        return KC_ENOMEM;
    kc__hkey_write(&k, e->key);
    e->h = (kc__hent){k.hash, k.klen, e->key};
    e->ns = e->key;
    e->name = e->key + k.len[0] + 1;
    e->obj = kc_obj_ref(obj);
    entry_node(r, e);
    if (kc__htab_insert(&r->map, &e->h) != 0) {
        kc_obj_unref(e->obj);
        free(e);
        return KC_ENOMEM;
    }
    r->sorted_dirty = true;
    r->n_owned += kc_obj_owner_count(obj) != 0;
    return 0;
}

static void unlink_entry(kc__rsrc *r, kc__entry *e)
{
    r->n_owned -= kc_obj_owner_count(e->obj) != 0;
    kc__htab_remove_ent(&r->map, &e->h);
    kc_obj_unref(e->obj);
    free(e);
    r->sorted_dirty = true;
}

static int entry_cmp(const void *a, const void *b)
{
    const kc__entry *x = *(kc__entry *const *)a, *y = *(kc__entry *const *)b;
    int c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->name, y->name);
}

kc__entry **kc__store_sorted(kc__rsrc *r, size_t *ret_n)
{
    if (r->sorted_dirty || !r->sorted) {
        kc__entry **s = realloc(r->sorted, (r->map.n ? r->map.n : 1) * sizeof(*s));
        if (!s) {
            *ret_n = 0;
            return NULL;
        }
        size_t k = 0;
        for (size_t i = 0; i < r->map.cap; i++)
            if (KC__HTAB_AT(&r->map, i))
                s[k++] = (kc__entry *)KC__HTAB_AT(&r->map, i);
        qsort(s, k, sizeof(*s), entry_cmp);
        r->sorted = s;
        r->n_sorted = k;
        r->sorted_dirty = false;
    }
    *ret_n = r->n_sorted;
    return r->sorted;
}

void kc__store_clear_rsrc(kc__rsrc *r)
{
    for (size_t i = 0; i < r->map.cap; i++) {
        kc__entry *e = (kc__entry *)KC__HTAB_AT(&r->map, i);
        if (e) {
            kc_obj_unref(e->obj);
            free(e);
        }
    }
    kc__htab_free(&r->map);
    r->sorted_dirty = true;
    r->n_owned = 0;
    r->changes++;
}

/* ---- history -------------------------------------------------------------------------------- */

static void hist_push(kc_server *srv, kc__rsrc *r, kc_watch_type type, kc_obj *obj, kc_obj *old,
                      uint64_t rv)
{
    if (srv->hist_len == srv->hist_cap) {
        kc__hist *h = &srv->hist[srv->hist_head];
        srv->floor = h->rv;
        kc_obj_unref(h->obj);
        kc_obj_unref(h->old);
        srv->hist_head = (srv->hist_head + 1) % srv->hist_cap;
        srv->hist_len--;
    }
    kc__hist *h = &srv->hist[(srv->hist_head + srv->hist_len) % srv->hist_cap];
    h->rsrc = r;
    h->type = type;
    h->obj = kc_obj_ref(obj);
    h->old = kc_obj_ref(old);
    h->rv = rv;
    srv->hist_len++;
}

void kc__store_compact_locked(kc_server *srv)
{
    for (size_t i = 0; i < srv->hist_len; i++) {
        kc__hist *h = &srv->hist[(srv->hist_head + i) % srv->hist_cap];
        kc_obj_unref(h->obj);
        kc_obj_unref(h->old);
    }
    srv->hist_head = srv->hist_len = 0;
    srv->floor = srv->rv;
    kc__snap_clear(srv);
}

static int by_rv(const void *a, const void *b)
{
    uint64_t x = kc_obj_rv_int((*(kc__entry *const *)a)->obj);
    uint64_t y = kc_obj_rv_int((*(kc__entry *const *)b)->obj);
    return x < y ? -1 : x > y;
}

int kc__store_renumber_locked(kc_server *srv, uint64_t *ret_n)
{
    size_t n = 0, k = 0;
    for (size_t i = 0; i < srv->n_rsrcs; i++)
        n += srv->rsrcs[i]->map.n;
    kc__entry **es = malloc((n ? n : 1) * sizeof(*es));
    kc_obj **nu = calloc(n ? n : 1, sizeof(*nu));
    int rc = es && nu ? 0 : KC_ENOMEM;
    for (size_t i = 0; rc == 0 && i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        for (size_t b = 0; b < r->map.cap; b++)
            if (KC__HTAB_AT(&r->map, b))
                es[k++] = (kc__entry *)KC__HTAB_AT(&r->map, b);
    }
    if (rc == 0)
        qsort(es, n, sizeof(*es), by_rv);
    /* every new object first, so that a failure changes nothing */
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = kc__obj_with_rv(srv, es[i]->obj, (uint64_t)i + 1, &nu[i], NULL);
    for (size_t i = 0; i < n && nu; i++) {
        if (rc == 0) {
            kc_obj_unref(es[i]->obj);
            es[i]->obj = nu[i]; /* in place: the key order is unchanged */
        } else {
            kc_obj_unref(nu[i]);
        }
    }
    free(es);
    free(nu);
    for (size_t i = 0; rc == 0 && i < srv->n_rsrcs; i++) { /* the cached spans moved */
        kc__rsrc *r = srv->rsrcs[i];
        for (size_t b = 0; r->node_indexed && b < r->map.cap; b++)
            if (KC__HTAB_AT(&r->map, b))
                entry_node(r, (kc__entry *)KC__HTAB_AT(&r->map, b));
    }
    if (rc == 0)
        *ret_n = n;
    return rc;
}

int kc__store_commit(kc_server *srv, kc__rsrc *r, kc_watch_type type, kc_obj *obj, kc_obj *old,
                     uint64_t rv)
{
    /* old is usually the entry's object: keep it alive across the swap below */
    kc_obj *hold = kc_obj_ref(old);
    if (type == KC_WATCH_ADDED) {
        if (insert(r, obj) != 0) {
            kc_obj_unref(hold);
            return KC_ENOMEM;
        }
    } else {
        kc__entry *e = kc__store_find(r, kc_obj_namespace(obj), kc_obj_name(obj));
        if (!e) {
            kc_obj_unref(hold);
            return KC_EINVAL;
        }
        if (type == KC_WATCH_MODIFIED) {
            kc_obj *prev = e->obj;
            r->n_owned += (kc_obj_owner_count(obj) != 0) - (kc_obj_owner_count(prev) != 0);
            e->obj = kc_obj_ref(obj);
            entry_node(r, e);
            kc_obj_unref(prev);
        } else {
            unlink_entry(r, e);
        }
    }
    if (rv > srv->rv)
        srv->rv = rv;
    r->changes++;
    hist_push(srv, r, type, obj, old, rv);
    kc__hub_event ev = {.type = type, .obj = obj, .old = old, .rv = rv};
    kc__shard_event_hash(srv, &ev);
    kc__hub_publish(srv->hub, r, &ev);
    if (srv->ctl && srv->ctl->committed)
        srv->ctl->committed(srv, r, type, obj, old);
    pthread_cond_broadcast(&srv->cond);
    kc_obj_unref(hold);
    return 0;
}

/* ---- snapshots ------------------------------------------------------------------------------ */

static void snap_release(kc__snapshot *s)
{
    for (size_t i = 0; i < s->n; i++)
        kc_obj_unref(s->items[i]);
    free(s->items);
    memset(s, 0, sizeof(*s));
}

uint64_t kc__snap_put(kc_server *srv, kc__rsrc *r, uint64_t rv, kc_obj **items, size_t n)
{
    kc__snapshot *slot = &srv->snaps[0];
    for (size_t i = 0; i < KC__MAX_SNAPSHOTS; i++) {
        if (!srv->snaps[i].id) {
            slot = &srv->snaps[i];
            break;
        }
        if (srv->snaps[i].created_ms < slot->created_ms)
            slot = &srv->snaps[i];
    }
    snap_release(slot);
    slot->id = ++srv->next_snap_id;
    slot->rv = rv;
    slot->rsrc = r;
    slot->items = items;
    slot->n = n;
    slot->created_ms = kc__now_ms();
    return slot->id;
}

kc__snapshot *kc__snap_get(kc_server *srv, uint64_t id)
{
    uint64_t now = kc__now_ms();
    for (size_t i = 0; i < KC__MAX_SNAPSHOTS; i++) {
        kc__snapshot *s = &srv->snaps[i];
        if (s->id && now - s->created_ms > 5 * 60 * 1000)
            snap_release(s);
        else if (s->id == id && id)
            return s->rv >= srv->floor || s->rv == srv->rv ? s : NULL;
    }
    return NULL;
}

void kc__snap_clear(kc_server *srv)
{
    for (size_t i = 0; i < KC__MAX_SNAPSHOTS; i++)
        snap_release(&srv->snaps[i]);
}

/* ---- init / destroy ------------------------------------------------------------------------- */

int kc__store_init(kc_server *srv)
{
    srv->hist_cap = srv->opts.history ? srv->opts.history : 10000;
    srv->hist = calloc(srv->hist_cap, sizeof(*srv->hist));
    if (!srv->hist)
        return KC_ENOMEM;
    srv->dopts.flags = KC_DECODE_KEEP_MANAGED_FIELDS;
    srv->dopts.max_object_size = (srv->opts.max_body ? srv->opts.max_body : 3u << 20) * 2 + 4096;
    return 0;
}

void kc__store_set_crd_hooks(kc_server *srv, const kc__crd_hooks *hooks)
{
    srv->crd = hooks;
}

void kc__store_destroy(kc_server *srv)
{
    if (srv->hist)
        kc__store_compact_locked(srv);
    free(srv->hist);
    srv->hist = NULL;
    kc__snap_clear(srv);
    for (size_t i = 0; i < srv->n_rsrcs; i++)
        kc__rsrc_free(srv->rsrcs[i]);
    for (size_t i = 0; i < srv->n_retired; i++)
        kc__rsrc_free(srv->retired[i]);
    free(srv->rsrcs);
    free(srv->retired);
    srv->rsrcs = srv->retired = NULL;
    srv->n_rsrcs = srv->n_retired = 0;
}

/* ---- object helpers ------------------------------------------------------------------------- */

int kc__obj_from_json(kc_server *srv, const char *json, size_t len, kc_obj **ret, kc_error *err)
{
    size_t elen = 0;
    char *esc = kc__go_json_escape(json, len, &elen);
    int rc = kc_obj_parse(esc ? esc : json, esc ? elen : len, &srv->dopts, ret, err);
    free(esc);
    return rc;
}

int kc__obj_from_doc(kc_server *srv, const json_t *doc, kc_obj **ret, kc_error *err)
{
    char *s = json_dumps(doc, JSON_COMPACT);
    if (!s)
        return kc_error_set(err, KC_ENOMEM, "out of memory encoding object");
    int rc = kc__obj_from_json(srv, s, strlen(s), ret, err);
    free(s);
    return rc;
}

json_t *kc__doc_from_obj(const kc_obj *obj)
{
    size_t len;
    const char *s = kc_obj_json(obj, &len);
    return json_loadb(s, len, 0, NULL);
}

int kc__obj_with_rv(kc_server *srv, const kc_obj *obj, uint64_t rv, kc_obj **ret, kc_error *err)
{
    json_t *doc = kc__doc_from_obj(obj);
    if (!doc)
        return kc_error_set(err, KC_ENOMEM, "cannot decode stored object");
    char s[24];
    kc__rv_str(rv, s);
    int rc = kc__meta_set_str(doc, "resourceVersion", s);
    if (rc == 0)
        rc = kc__obj_from_doc(srv, doc, ret, err);
    json_decref(doc);
    return rc;
}
