/*
 * writer.c — the soak's writers and the read checks (b) and (c).
 *
 * Each writer owns `keys` ConfigMaps (w<id>-k<j>, label writer=w<id>) that nobody else writes, so
 * it knows exactly what its cache must show. Per key it keeps a model: exists, uid, RV of the last
 * state the server returned, whether that state is *promised* (fresh: the write returned 0 — a
 * block-on-write wait that completed, or a block-on-read write that was recorded), and every UID
 * it deleted (strict when the delete returned 0). Writers with an even id use the block-on-write
 * client, odd ids the block-on-read one.
 *
 * One step: pick a key; create it when absent — 10 % of creates by the plain client ("someone
 * else": no promise), 3 in 10 of those deleted at once by this client with the UID precondition;
 * 1 in 9 of own creates deleted at once; no read between, the sequences of issue 16 point 1 —,
 * else update (PUT with the RV), merge-patch or delete (half with a UID precondition). Then read
 * through the writer's cached client: the written key, one random key (block-on-read: half of
 * them with no_wait, which must still hide deleted objects), the two most recently deleted keys,
 * every 8th step the writer's keys (list by label), and after a create → delete the key after
 * every change the cache applies, for twice the longest watch delay.
 * Each object read is judged against the model:
 *   - a UID this writer deleted (strict)          → resurrected   (check c)
 *   - fresh, absent or RV below the model's RV    → stale         (check b)
 *   - an object the model says cannot exist       → phantom
 * KC_ENOT_CAUGHT_UP (a wait that hit its bound) is counted, never judged: it is the documented
 * "cache still behind" answer. A write the server refused (injected 429/500/503, or a 404/409 from
 * a wrong model) re-reads the key live and makes no promise.
 * The fault script may pause writers between steps (restores): while parked, their models are
 * refreshed from the server by the script thread (the gate's mutex orders the accesses).
 */
#include "soak.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct dead_uid {
    char uid[SOAK_UID_MAX];
    bool strict;
} dead_uid;

typedef struct skey {
    char name[48];
    bool exists, fresh, unknown;
    char uid[SOAK_UID_MAX];
    char rv[SOAK_RV_MAX];
    unsigned ver;
    dead_uid *dead;
    size_t n_dead, cap_dead;
} skey;

typedef struct lat {
    double *v;
    size_t n, cap;
} lat;

struct soak_writer {
    soak *s;
    unsigned id;
    soak_side *side;
    skey *keys;
    soak_rng rng;
    char label[32];
    lat wlat, rlat;
    int recent[2];     /* the two most recently deleted keys, -1 = none */
    bool precondition; /* the next delete carries the UID precondition */
    unsigned steps;
};

static void lat_add(lat *l, double ms)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 256;
        double *g = realloc(l->v, nc * sizeof(*g));
        if (!g)
            return;
        l->v = g;
        l->cap = nc;
    }
    l->v[l->n++] = ms;
}

static double ms_since(uint64_t t0)
{
    return (double)(soak_now_ns() - t0) / 1e6;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

/* --trace NAME: every write and read of that key, to follow a violation back to its cause. */
__attribute__((format(printf, 3, 4))) static void trace(const soak_writer *w, const skey *k,
                                                        const char *fmt, ...)
{
    if (!w->s->o.trace || strcmp(w->s->o.trace, k->name))
        return;
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&w->s->print_mu);
    printf("TRACE [%.3f s] %s %s: ", soak_elapsed_s(w->s), w->side->name, k->name);
    vprintf(fmt, ap);
    printf("\n");
    pthread_mutex_unlock(&w->s->print_mu);
    va_end(ap);
}

/* ---- the model ------------------------------------------------------------------------------- */

static const dead_uid *dead_find(const skey *k, const char *uid)
{
    for (size_t i = 0; i < k->n_dead; i++)
        if (!strcmp(k->dead[i].uid, uid))
            return &k->dead[i];
    return NULL;
}

static void model_set(skey *k, const kc_obj *obj, bool fresh)
{
    k->exists = true;
    k->fresh = fresh;
    k->unknown = false;
    copy_str(k->uid, sizeof(k->uid), kc_obj_uid(obj));
    copy_str(k->rv, sizeof(k->rv), kc_obj_resource_version(obj));
}

static void model_deleted(skey *k, bool strict)
{
    if (k->n_dead == k->cap_dead) {
        size_t nc = k->cap_dead ? k->cap_dead * 2 : 4;
        dead_uid *g = realloc(k->dead, nc * sizeof(*g));
        if (g) {
            k->dead = g;
            k->cap_dead = nc;
        }
    }
    if (k->n_dead < k->cap_dead) {
        copy_str(k->dead[k->n_dead].uid, SOAK_UID_MAX, k->uid);
        k->dead[k->n_dead++].strict = strict;
    }
    k->exists = false;
    k->fresh = strict;
    k->unknown = false;
    k->uid[0] = k->rv[0] = '\0';
}

/* After a refused or doubtful write: learn the key's state from the server (no promise). */
static void resync(soak_writer *w, skey *k)
{
    for (int tries = 0; tries < 200 && !soak_stopping(w->s); tries++) {
        kc_obj *obj = NULL;
        int rc = kc_client_get(w->s->client, &soak_cm, SOAK_NS, k->name, &obj, NULL);
        if (rc == 0) {
            model_set(k, obj, false);
            kc_obj_unref(obj);
            return;
        }
        if (rc == KC_ENOTFOUND) {
            k->exists = k->fresh = k->unknown = false;
            k->uid[0] = k->rv[0] = '\0';
            return;
        }
    }
    k->unknown = true; /* judged again after its next successful write */
}

/* ---- judging what a read returned ------------------------------------------------------------ */

/* may_lag: the read did not wait (no_wait), so only (c) and phantoms are judged. */
static void judge(soak_writer *w, skey *k, const kc_obj *obj, const char *via, bool may_lag)
{
    soak *s = w->s;
    trace(w, k, "%s -> %s uid %s rv %s (model: %s uid %s rv %s%s)", via, obj ? "object" : "none",
          obj ? kc_obj_uid(obj) : "-", obj ? kc_obj_resource_version(obj) : "-",
          k->exists ? "exists" : "absent", k->uid, k->rv, k->fresh ? ", promised" : "");
    if (k->unknown)
        return;
    if (obj) {
        const char *uid = kc_obj_uid(obj), *rv = kc_obj_resource_version(obj);
        const dead_uid *d = dead_find(k, uid);
        if (d && d->strict) {
            atomic_fetch_add(&s->c.v_resurrected, 1);
            soak_violation(s, "c-resurrected",
                           "%s w%u %s: %s returned uid %s rv %s, which this client deleted",
                           w->side->name, w->id, k->name, via, uid, rv);
        } else if (d) {
            atomic_fetch_add(&s->c.late_after_timeout, 1);
        } else if (!k->exists || strcmp(uid, k->uid)) {
            atomic_fetch_add(&s->c.v_phantom, 1);
            soak_violation(s, "phantom", "%s w%u %s: %s returned uid %s rv %s; expected %s",
                           w->side->name, w->id, k->name, via, uid, rv,
                           k->exists ? k->uid : "no object");
        } else if (k->fresh && !may_lag && kc_rv_compare(rv, k->rv) == KC_RV_LESS) {
            atomic_fetch_add(&s->c.v_stale, 1);
            soak_violation(s, "b-stale", "%s w%u %s: %s returned rv %s after the write of rv %s",
                           w->side->name, w->id, k->name, via, rv, k->rv);
        }
    } else if (k->exists && k->fresh && !may_lag) {
        atomic_fetch_add(&s->c.v_stale, 1);
        soak_violation(s, "b-stale", "%s w%u %s: %s found nothing after the write of rv %s",
                       w->side->name, w->id, k->name, via, k->rv);
    }
}

static kc_cached_call_opts call_opts(const soak_writer *w)
{
    kc_cached_call_opts c = {.no_wait = w->s->o.plant == PLANT_NO_WAIT};
    return c;
}

/* no_wait: a read that skips the block-on-read wait; it must still hide deleted objects. */
static void check_get(soak_writer *w, skey *k, bool timed, bool no_wait)
{
    soak *s = w->s;
    kc_cached_call_opts call = call_opts(w);
    call.no_wait |= no_wait;
    kc_obj *obj = NULL;
    kc_error e = KC_ERROR_INIT;
    uint64_t t0 = soak_now_ns();
    int rc = kc_cached_client_get(w->side->cc, &soak_cm, SOAK_NS, k->name, &call, &obj, &e);
    if (timed)
        lat_add(&w->rlat, ms_since(t0));
    atomic_fetch_add(&s->c.reads, 1);
    if (rc == KC_ENOT_CAUGHT_UP) {
        trace(w, k, "get -> KC_ENOT_CAUGHT_UP");
        soak_note(s, "%s w%u get %s: KC_ENOT_CAUGHT_UP", w->side->name, w->id, k->name);
        atomic_fetch_add(&s->c.read_not_caught_up, 1);
    } else if (rc == 0 || rc == KC_ENOTFOUND) {
        judge(w, k, obj, no_wait ? "get (no_wait)" : "get", no_wait);
    } else {
        atomic_fetch_add(&s->c.read_errors, 1);
        soak_violation(s, "read-error", "%s w%u get %s: %s %s", w->side->name, w->id, k->name,
                       kc_errno_name(rc), e.message ? e.message : "");
    }
    kc_obj_unref(obj);
    kc_error_clear(&e);
}

static void check_list(soak_writer *w)
{
    soak *s = w->s;
    char sel[48];
    snprintf(sel, sizeof(sel), "writer=%s", w->label);
    kc_cached_call_opts call = call_opts(w);
    kc_obj **items = NULL;
    size_t n = 0;
    kc_error e = KC_ERROR_INIT;
    int rc =
        kc_cached_client_list(w->side->cc, &soak_cm, SOAK_NS, sel, NULL, &call, &items, &n, &e);
    atomic_fetch_add(&s->c.list_reads, 1);
    if (rc == KC_ENOT_CAUGHT_UP) {
        soak_note(s, "%s w%u list: KC_ENOT_CAUGHT_UP", w->side->name, w->id);
        atomic_fetch_add(&s->c.read_not_caught_up, 1);
    } else if (rc < 0) {
        atomic_fetch_add(&s->c.read_errors, 1);
        soak_violation(s, "read-error", "%s w%u list: %s %s", w->side->name, w->id,
                       kc_errno_name(rc), e.message ? e.message : "");
    } else {
        bool *seen = calloc(s->o.keys, sizeof(*seen));
        for (size_t i = 0; seen && i < n; i++) {
            unsigned id, j;
            if (sscanf(kc_obj_name(items[i]), "w%u-k%u", &id, &j) != 2 || id != w->id ||
                j >= s->o.keys)
                continue;
            seen[j] = true;
            judge(w, &w->keys[j], items[i], "list", false);
        }
        for (unsigned j = 0; seen && j < s->o.keys; j++)
            if (!seen[j])
                judge(w, &w->keys[j], NULL, "list", false);
        free(seen);
    }
    kc_obj_array_free(items, n);
    kc_error_clear(&e);
}

/* ---- writes ---------------------------------------------------------------------------------- */

static int body(const soak_writer *w, const skey *k, bool with_rv, char *buf, size_t cap)
{
    char rv[64] = "";
    if (with_rv)
        snprintf(rv, sizeof(rv), ",\"resourceVersion\":\"%s\"", k->rv);
    return snprintf(buf, cap,
                    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
                    "\"namespace\":\"" SOAK_NS "\",\"labels\":{\"soak\":\"w\",\"writer\":\"%s\"}"
                    "%s},\"data\":{\"v\":\"%u\"}}",
                    k->name, w->label, rv, k->ver);
}

typedef enum { OP_CREATE, OP_FOREIGN, OP_UPDATE, OP_PATCH, OP_DELETE } op_kind;

/* One write; returns the call's code. *ret_obj: the server's object (may stay NULL). */
static int write_op(soak_writer *w, skey *k, op_kind op, kc_obj **ret_obj, kc_error *e)
{
    soak *s = w->s;
    kc_cached_client *cc = w->side->cc;
    kc_cached_call_opts call = call_opts(w);
    char buf[512];
    k->ver++;
    switch (op) {
    case OP_FOREIGN: {
        int len = body(w, k, false, buf, sizeof(buf));
        return kc_client_create(s->client, &soak_cm, SOAK_NS, buf, (size_t)len, NULL, ret_obj, e);
    }
    case OP_CREATE: {
        int len = body(w, k, false, buf, sizeof(buf));
        return kc_cached_client_create(cc, &soak_cm, SOAK_NS, buf, (size_t)len, NULL, &call,
                                       ret_obj, e);
    }
    case OP_UPDATE: {
        int len = body(w, k, true, buf, sizeof(buf));
        return kc_cached_client_update(cc, &soak_cm, SOAK_NS, buf, (size_t)len, NULL, &call,
                                       ret_obj, e);
    }
    case OP_PATCH: {
        int len = snprintf(buf, sizeof(buf), "{\"data\":{\"v\":\"%u\"}}", k->ver);
        return kc_cached_client_patch(cc, &soak_cm, SOAK_NS, k->name, KC_PATCH_MERGE, buf,
                                      (size_t)len, NULL, &call, ret_obj, e);
    }
    case OP_DELETE: {
        kc_delete_opts d = {0};
        if (w->precondition || soak_rng_below(&w->rng, 2))
            d.precondition_uid = k->uid;
        w->precondition = false;
        return kc_cached_client_delete(cc, &soak_cm, SOAK_NS, k->name, &d, &call, ret_obj, e);
    }
    }
    return KC_EINVAL;
}

static void count_op(soak *s, op_kind op)
{
    static const size_t off[] = {
        [OP_CREATE] = offsetof(soak_counters, creates),
        [OP_FOREIGN] = offsetof(soak_counters, foreign_creates),
        [OP_UPDATE] = offsetof(soak_counters, updates),
        [OP_PATCH] = offsetof(soak_counters, patches),
        [OP_DELETE] = offsetof(soak_counters, deletes),
    };
    atomic_fetch_add((atomic_ulong *)((char *)&s->c + off[op]), 1);
    soak_count_write(s);
}

/* Write and update the model. Returns true when the server applied the write. */
static bool do_write(soak_writer *w, skey *k, op_kind op)
{
    soak *s = w->s;
    kc_obj *obj = NULL;
    kc_error e = KC_ERROR_INIT;
    uint64_t t0 = soak_now_ns();
    int rc = write_op(w, k, op, &obj, &e);
    static const char *const names[] = {"create", "foreign create", "update", "patch", "delete"};
    trace(w, k, "%s -> %s, returned uid %s rv %s", names[op], rc ? kc_errno_name(rc) : "ok",
          obj ? kc_obj_uid(obj) : "-", obj ? kc_obj_resource_version(obj) : "-");
    bool applied = rc == 0 || rc == KC_ENOT_CAUGHT_UP;
    if (applied) {
        if (op != OP_FOREIGN && rc == 0)
            lat_add(&w->wlat, ms_since(t0));
        if (rc == KC_ENOT_CAUGHT_UP) {
            soak_note(s, "%s w%u write %s: KC_ENOT_CAUGHT_UP", w->side->name, w->id, k->name);
            atomic_fetch_add(&s->c.write_not_caught_up, 1);
        }
        if (op == OP_DELETE)
            model_deleted(k, rc == 0);
        else if (obj)
            model_set(k, obj, op != OP_FOREIGN && rc == 0);
        else
            resync(w, k);
        count_op(s, op);
    } else {
        atomic_fetch_add(&s->c.write_errors, 1);
        if (rc == KC_ECONFLICT || rc == KC_ENOTFOUND || rc == KC_EEXISTS)
            atomic_fetch_add(&s->c.conflicts, 1);
        resync(w, k);
    }
    kc_obj_unref(obj);
    kc_error_clear(&e);
    return applied;
}

static void remember_deleted(soak_writer *w, unsigned j)
{
    if (w->recent[0] != (int)j) {
        w->recent[1] = w->recent[0];
        w->recent[0] = (int)j;
    }
}

/*
 * After a create → delete with no read between (issue 16 point 1: the cache may not even have
 * seen the ADDED event yet), read the key after every change the cache applies, for twice the
 * longest watch delay: the deleted object must never show up, from get or list.
 */
static void read_after_burst(soak_writer *w, skey *k)
{
    soak *s = w->s;
    uint64_t deadline = soak_now_ns() + (2 * (uint64_t)s->o.delay_max + 100) * 1000000u;
    for (unsigned n = 0;; n++) {
        uint64_t seen = soak_shadow_changes(w->side->shadow);
        check_get(w, k, false, false);
        if (n % 4 == 3)
            check_list(w);
        if (soak_shadow_wait_change(w->side->shadow, seen, deadline) < 0)
            break;
    }
}

static void step(soak_writer *w)
{
    soak *s = w->s;
    unsigned j = soak_rng_below(&w->rng, s->o.keys);
    skey *k = &w->keys[j];
    unsigned r = soak_rng_below(&w->rng, 100);
    if (!k->exists) {
        /* r < 10: by another client, and r < 3 of those deleted at once (UID precondition);
         * r >= 90: own, deleted at once */
        op_kind op = r < 10 ? OP_FOREIGN : OP_CREATE;
        if (do_write(w, k, op) && (r < 3 || r >= 90) && k->exists) {
            atomic_fetch_add(&s->c.bursts, 1);
            w->precondition = op == OP_FOREIGN;
            if (do_write(w, k, OP_DELETE)) {
                remember_deleted(w, j);
                read_after_burst(w, k);
            }
        }
    } else if (r < 35) {
        do_write(w, k, OP_UPDATE);
    } else if (r < 70) {
        do_write(w, k, OP_PATCH);
    } else if (do_write(w, k, OP_DELETE)) {
        remember_deleted(w, j);
    }
    check_get(w, k, true, false);
    /* a random key; by the block-on-read client half the time without waiting */
    bool no_wait = w->side->mode == KC_RYW_BLOCK_ON_READ && soak_rng_below(&w->rng, 2);
    check_get(w, &w->keys[soak_rng_below(&w->rng, s->o.keys)], false, no_wait);
    for (int i = 0; i < 2; i++)
        if (w->recent[i] >= 0 && w->recent[i] != (int)j)
            check_get(w, &w->keys[w->recent[i]], false, false);
    if (++w->steps % 8 == 0)
        check_list(w);
}

void *soak_writer_main(void *arg)
{
    soak_writer *w = arg;
    soak *s = w->s;
    while (atomic_load(&s->c.writes) < s->o.writes && soak_gate(s))
        step(w);
    soak_writer_done(s);
    return NULL;
}

/* ---- set-up and figures ---------------------------------------------------------------------- */

int soak_writers_new(soak *s)
{
    s->w = calloc(s->o.writers, sizeof(*s->w));
    if (!s->w)
        return KC_ENOMEM;
    for (unsigned i = 0; i < s->o.writers; i++) {
        soak_writer *w = &s->w[i];
        w->s = s;
        w->id = i;
        w->side = &s->side[i % SOAK_SIDES];
        w->rng.x = s->o.seed * 0x9e3779b97f4a7c15ull + i + 1;
        w->recent[0] = w->recent[1] = -1;
        snprintf(w->label, sizeof(w->label), "w%02u", i);
        w->keys = calloc(s->o.keys, sizeof(*w->keys));
        if (!w->keys)
            return KC_ENOMEM;
        for (unsigned j = 0; j < s->o.keys; j++)
            snprintf(w->keys[j].name, sizeof(w->keys[j].name), "w%02u-k%02u", i, j);
    }
    return 0;
}

void soak_writers_free(soak *s)
{
    for (unsigned i = 0; s->w && i < s->o.writers; i++) {
        for (unsigned j = 0; s->w[i].keys && j < s->o.keys; j++)
            free(s->w[i].keys[j].dead);
        free(s->w[i].keys);
        free(s->w[i].wlat.v);
        free(s->w[i].rlat.v);
    }
    free(s->w);
    s->w = NULL;
}

soak_writer *soak_writer_at(soak *s, unsigned i)
{
    return i < s->o.writers ? &s->w[i] : NULL;
}

static double *gather(soak *s, kc_ryw_mode mode, bool reads, size_t *ret_n)
{
    size_t n = 0;
    for (unsigned i = 0; i < s->o.writers; i++)
        if (s->w[i].side->mode == mode)
            n += reads ? s->w[i].rlat.n : s->w[i].wlat.n;
    double *v = malloc((n ? n : 1) * sizeof(*v));
    size_t k = 0;
    for (unsigned i = 0; v && i < s->o.writers; i++) {
        const lat *l = reads ? &s->w[i].rlat : &s->w[i].wlat;
        if (s->w[i].side->mode == mode && l->n) {
            memcpy(v + k, l->v, l->n * sizeof(*v));
            k += l->n;
        }
    }
    *ret_n = v ? k : 0;
    return v;
}

double *soak_write_latencies(soak *s, kc_ryw_mode mode, size_t *ret_n)
{
    return gather(s, mode, false, ret_n);
}

double *soak_read_latencies(soak *s, kc_ryw_mode mode, size_t *ret_n)
{
    return gather(s, mode, true, ret_n);
}

/* Called by the script thread while every writer is parked: the models take the server's state
 * (after a restore the RVs were renumbered) and the promise that the cache now holds it. */
void soak_writers_refresh(soak *s, const soak_snap *server)
{
    for (unsigned i = 0; i < s->o.writers; i++) {
        for (unsigned j = 0; j < s->o.keys; j++) {
            skey *k = &s->w[i].keys[j];
            char key[128];
            snprintf(key, sizeof(key), SOAK_NS "/%s", k->name);
            const soak_item *it = soak_snap_find(server, key);
            k->unknown = false;
            k->fresh = true;
            k->exists = it != NULL;
            copy_str(k->uid, sizeof(k->uid), it ? it->uid : "");
            copy_str(k->rv, sizeof(k->rv), it ? it->rv : "");
        }
    }
}
