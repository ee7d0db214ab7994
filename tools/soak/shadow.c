/*
 * shadow.c — check (d): a handler on each informer replays its stream into a shadow map.
 *
 * "Consistent with the store" means (docs/soak.md):
 *   1. the stream is a valid history of a map: an add is for a key the shadow does not hold, an
 *      update or delete for a key it holds, and the old object of an update (the state the
 *      handler saw last for the key) is exactly the shadow's entry — same UID, same RV;
 *   2. within one UID, RVs never go backwards — except while the soak's reset window is open:
 *      after the server restarted with its RVs renumbered from 1, the relist that installs the
 *      new numbering legitimately moves every object "back" (old and new RVs are not comparable:
 *      they count in different histories). The script opens the window only when every change
 *      before the restart has been handed to the handlers, and closes it once the relist
 *      converged and was handed over too, with every writer paused throughout: the only changes
 *      in the window are the relist's. A non-tombstone delete carries the final state, so its
 *      RV is not below the last one either; a tombstone delete carries the last state the
 *      store had, so it equals the shadow's;
 *   3. after quiescing, the shadow holds exactly the store's keys, UIDs and RVs.
 * Violations of 1–2 are reported as they happen, 3 by check.c. Each change also bumps a counter
 * and wakes waiters: check.c waits for "the store changed" on it, never by polling.
 */
#include "soak.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct sh_ent {
    struct sh_ent *next;
    char key[128];
    char uid[SOAK_UID_MAX];
    char rv[SOAK_RV_MAX];
} sh_ent;

struct soak_shadow {
    soak *s;
    soak_side *sd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sh_ent **b;
    size_t nb, n;
    uint64_t changes;
    unsigned deletes;
};

/* A violation found under the lock, printed after it is released. */
typedef struct pending {
    bool set;
    char msg[512];
} pending;

__attribute__((format(printf, 2, 3))) static void note(pending *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!p->set)
        vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
    va_end(ap);
    p->set = true;
}

static uint64_t hash(const char *k)
{
    uint64_t h = 14695981039346656037ull;
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 1099511628211ull;
    return h;
}

static void obj_key(const kc_obj *o, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", kc_obj_namespace(o), kc_obj_name(o));
}

static sh_ent **slot(soak_shadow *sh, const char *key)
{
    sh_ent **pp = &sh->b[hash(key) & (sh->nb - 1)];
    while (*pp && strcmp((*pp)->key, key))
        pp = &(*pp)->next;
    return pp;
}

static void put(sh_ent *e, const kc_obj *o)
{
    snprintf(e->uid, sizeof(e->uid), "%s", kc_obj_uid(o));
    snprintf(e->rv, sizeof(e->rv), "%s", kc_obj_resource_version(o));
}

static void finish(soak_shadow *sh, pending *p)
{
    sh->changes++;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    atomic_fetch_add(&sh->s->c.handler_events, 1);
    if (p->set) {
        atomic_fetch_add(&sh->s->c.v_handler, 1);
        soak_violation(sh->s, "d-handler", "%s: %s", sh->sd->name, p->msg);
    }
}

/* RVs of one UID going back: fine inside the reset window (counted), a violation outside. */
static void check_order(soak_shadow *sh, const char *key, const char *old_rv, const char *new_rv,
                        const char *what, pending *p)
{
    if (kc_rv_compare(new_rv, old_rv) != KC_RV_LESS)
        return;
    if (atomic_load(&sh->s->reset_window))
        atomic_fetch_add(&sh->s->c.rv_resets_seen, 1);
    else
        note(p, "%s of %s moves rv back from %s to %s (same uid, no RV reset)", what, key, old_rv,
             new_rv);
}

static void on_add(void *ud, kc_obj *obj)
{
    soak_shadow *sh = ud;
    pending p = {0};
    char key[128];
    obj_key(obj, key, sizeof(key));
    pthread_mutex_lock(&sh->mu);
    sh_ent **pp = slot(sh, key);
    if (*pp) {
        note(&p, "add of %s (uid %s rv %s) while it holds uid %s rv %s", key, kc_obj_uid(obj),
             kc_obj_resource_version(obj), (*pp)->uid, (*pp)->rv);
        put(*pp, obj);
    } else {
        sh_ent *e = calloc(1, sizeof(*e));
        if (e) {
            snprintf(e->key, sizeof(e->key), "%s", key);
            put(e, obj);
            *pp = e;
            sh->n++;
        }
    }
    finish(sh, &p);
}

static void on_update(void *ud, kc_obj *old_obj, kc_obj *new_obj)
{
    soak_shadow *sh = ud;
    pending p = {0};
    char key[128];
    obj_key(new_obj, key, sizeof(key));
    pthread_mutex_lock(&sh->mu);
    sh_ent *e = *slot(sh, key);
    const char *ouid = kc_obj_uid(old_obj), *orv = kc_obj_resource_version(old_obj);
    if (!e) {
        note(&p, "update of %s, which it does not hold", key);
    } else {
        if (strcmp(e->uid, ouid) || strcmp(e->rv, orv))
            note(&p, "update of %s from uid %s rv %s, but it last delivered uid %s rv %s", key,
                 ouid, orv, e->uid, e->rv);
        else if (!strcmp(ouid, kc_obj_uid(new_obj)))
            check_order(sh, key, orv, kc_obj_resource_version(new_obj), "update", &p);
        put(e, new_obj);
    }
    finish(sh, &p);
}

static void on_delete(void *ud, kc_obj *obj, bool tombstone)
{
    soak_shadow *sh = ud;
    pending p = {0};
    char key[128];
    obj_key(obj, key, sizeof(key));
    pthread_mutex_lock(&sh->mu);
    if (sh->s->o.plant == PLANT_DROP_DELETE && ++sh->deletes % 5 == 0) {
        pthread_mutex_unlock(&sh->mu); /* planted bug: a lost delete */
        return;
    }
    sh_ent **pp = slot(sh, key), *e = *pp;
    const char *uid = kc_obj_uid(obj), *rv = kc_obj_resource_version(obj);
    if (!e) {
        note(&p, "delete of %s, which it does not hold", key);
    } else {
        if (strcmp(e->uid, uid))
            note(&p, "delete of %s uid %s, but it holds uid %s", key, uid, e->uid);
        else if (tombstone && strcmp(e->rv, rv))
            note(&p, "tombstone delete of %s at rv %s, but it last delivered rv %s", key, rv,
                 e->rv);
        else if (!tombstone)
            check_order(sh, key, e->rv, rv, "delete", &p);
        *pp = e->next;
        free(e);
        sh->n--;
    }
    finish(sh, &p);
}

const kc_informer_handlers soak_shadow_handlers = {
    .on_add = on_add, .on_update = on_update, .on_delete = on_delete, .ud = NULL};

int soak_shadow_new(soak *s, soak_side *sd, soak_shadow **ret)
{
    soak_shadow *sh = calloc(1, sizeof(*sh));
    if (!sh)
        return KC_ENOMEM;
    sh->s = s;
    sh->sd = sd;
    size_t want = 2 * ((size_t)s->o.writers * s->o.keys + 16);
    for (sh->nb = 64; sh->nb < want; sh->nb *= 2)
        ;
    sh->b = calloc(sh->nb, sizeof(*sh->b));
    if (!sh->b) {
        free(sh);
        return KC_ENOMEM;
    }
    pthread_mutex_init(&sh->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&sh->cv, &ca);
    pthread_condattr_destroy(&ca);
    *ret = sh;
    return 0;
}

void soak_shadow_free(soak_shadow *sh)
{
    if (!sh)
        return;
    for (size_t i = 0; i < sh->nb; i++) {
        for (sh_ent *e = sh->b[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    }
    free(sh->b);
    pthread_cond_destroy(&sh->cv);
    pthread_mutex_destroy(&sh->mu);
    free(sh);
}

uint64_t soak_shadow_changes(soak_shadow *sh)
{
    pthread_mutex_lock(&sh->mu);
    uint64_t c = sh->changes;
    pthread_mutex_unlock(&sh->mu);
    return c;
}

int soak_shadow_wait_change(soak_shadow *sh, uint64_t seen, uint64_t deadline_ns)
{
    struct timespec ts = {(time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u)};
    int rc = 0;
    pthread_mutex_lock(&sh->mu);
    while (sh->changes == seen && rc == 0)
        rc = pthread_cond_timedwait(&sh->cv, &sh->mu, &ts);
    bool changed = sh->changes != seen;
    pthread_mutex_unlock(&sh->mu);
    return changed ? 0 : KC_ETIMEOUT;
}

int soak_shadow_snap(soak_shadow *sh, soak_snap *ret)
{
    pthread_mutex_lock(&sh->mu);
    soak_item *v = calloc(sh->n ? sh->n : 1, sizeof(*v));
    size_t k = 0;
    for (size_t i = 0; v && i < sh->nb; i++) {
        for (sh_ent *e = sh->b[i]; e && k < sh->n; e = e->next, k++) {
            snprintf(v[k].key, sizeof(v[k].key), "%s", e->key);
            snprintf(v[k].uid, sizeof(v[k].uid), "%s", e->uid);
            snprintf(v[k].rv, sizeof(v[k].rv), "%s", e->rv);
        }
    }
    pthread_mutex_unlock(&sh->mu);
    if (!v)
        return KC_ENOMEM;
    ret->items = v;
    ret->n = k;
    soak_snap_sort(ret);
    return 0;
}
