/*
 * lease_lock.c — a coordination.k8s.io/v1 Lease as a lock: client-go's tryAcquireOrRenew (spec
 * L3) over the rest layer, one attempt per call.
 *
 * State: the last Lease object observed (Get, Create or Update response), its parsed spec, the
 * raw spec text that last changed, and observed_time — the lock-clock time that text last
 * changed (L5). Expiry of someone else's lease is observed_time + leaseDurationSeconds, never
 * renewTime against our clock: renewTime only signals change.
 *
 * Writes: Create for a missing Lease; otherwise Update (PUT) of the observed object's metadata —
 * resourceVersion included, so a concurrent writer makes it 409 (L4) — with a new spec that keeps
 * strategy and preferredHolder (L2: an Update replaces the whole spec). The lock's own annotations
 * (lease_body.c) are spliced into that metadata. valid_until = t_send + RD, t_send read before the
 * request goes out (L12a), so the deadline never depends on how long the answer took.
 *
 * leaseDurationSeconds is an integer: a sub-second LD (tests) is rounded up to 1 s, which only
 * makes others wait longer. Thread-safety: none (see lease_lock.h).
 */
#include "leader/lease_body.h"
#include "leader/lease_lock.h"

#include "core/internal.h"
#include "kcache/obj.h"

#include <stdlib.h>
#include <string.h>

static const kc_gvr LEASE_GVR = {"coordination.k8s.io", "v1", "leases"};

static uint64_t default_clock(void *ud)
{
    (void)ud;
    return kc__now_ns();
}

int kc__lease_lock_new(const kc__lease_lock_opts *o, kc__lease_lock **ret, kc_error *err)
{
    if (!o || !ret || !o->client || !o->ns || !*o->ns || !o->name || !*o->name || !o->identity ||
        !*o->identity || !o->lease_duration_ns || !o->renew_deadline_ns)
        return kc_error_set(err, KC_EINVAL,
                            "lease lock: client, namespace, name, identity, "
                            "lease duration and renew deadline are required");
    kc__lease_lock *l = calloc(1, sizeof(*l));
    if (!l)
        return kc_error_set(err, KC_ENOMEM, "lease lock: out of memory");
    l->client = o->client;
    l->ns = kc__strdup(o->ns);
    l->name = kc__strdup(o->name);
    l->identity = kc__strdup(o->identity);
    l->ld_ns = o->lease_duration_ns;
    l->rd_ns = o->renew_deadline_ns;
    l->clock = o->clock ? o->clock : default_clock;
    l->clock_ud = o->clock_ud;
    l->coordinated = o->coordinated;
    if (!l->ns || !l->name || !l->identity) {
        kc__lease_lock_free(l);
        return kc_error_set(err, KC_ENOMEM, "lease lock: out of memory");
    }
    *ret = l;
    return 0;
}

void kc__lease_lock_free(kc__lease_lock *l)
{
    if (!l)
        return;
    kc__lease_record_clear(&l->rec);
    kc_obj_unref(l->obj);
    free(l->raw_spec);
    for (size_t i = 0; i < l->n_ann; i++) {
        free(l->ann[i].key);
        free(l->ann[i].value);
    }
    free(l->ns);
    free(l->name);
    free(l->identity);
    free(l);
}

/* Take obj as the observed Lease (consumed). A changed raw spec moves observed_time (L3 step 3,
 * L5). The holder no longer being us drops the fence. */
static int observe(kc__lease_lock *l, kc_obj *obj, kc_error *err)
{
    const char *spec = "{}";
    size_t n = 2;
    (void)kc_obj_get_raw(obj, "/spec", &spec, &n, NULL);
    kc__lease_record rec = {0};
    int rc = kc__lease_record_parse(obj, &rec, err);
    if (rc < 0) {
        kc_obj_unref(obj);
        return rc;
    }
    if (!l->raw_spec || strlen(l->raw_spec) != n || memcmp(l->raw_spec, spec, n) != 0) {
        char *copy = kc__strdup_n(spec, n);
        if (!copy) {
            kc__lease_record_clear(&rec);
            kc_obj_unref(obj);
            return kc_error_set(err, KC_ENOMEM, "lease lock: out of memory");
        }
        free(l->raw_spec);
        l->raw_spec = copy;
        l->observed_time = l->clock(l->clock_ud);
    }
    kc__lease_record_clear(&l->rec);
    l->rec = rec;
    l->have_rec = true;
    kc_obj_unref(l->obj);
    l->obj = obj;
    if (strcmp(l->rec.holder, l->identity) != 0)
        l->valid_until = 0;
    return 0;
}

/* The record's expiry as judged locally (L3 step 4, L5). */
static bool expired(const kc__lease_lock *l, uint64_t now)
{
    uint64_t d = l->rec.duration_s > 0 ? (uint64_t)l->rec.duration_s * KC__NS_PER_SEC : 0;
    return l->observed_time + d <= now;
}

/* Send body (create or update); on success observe the response and set the fence from t_send. */
static int send_write(kc__lease_lock *l, bool create, const char *body, size_t len, kc_error *err)
{
    kc_obj *obj = NULL;
    uint64_t t_send = l->clock(l->clock_ud); /* before the request (L12a) */
    int rc = create ? kc_client_create(l->client, &LEASE_GVR, l->ns, body, len, NULL, &obj, err)
                    : kc_client_update(l->client, &LEASE_GVR, l->ns, body, len, NULL, &obj, err);
    if (rc < 0)
        return rc;
    rc = observe(l, obj, err);
    if (rc < 0)
        return rc;
    l->valid_until = kc__lease_lock_is_holder(l) ? t_send + l->rd_ns : 0;
    return 0;
}

/* Update the observed Lease to us as holder; keep acquireTime and transitions when we hold it. */
static int write_holder(kc__lease_lock *l, bool keep, kc_error *err)
{
    char now[40];
    kc__lease_microtime(now);
    kc__lease_spec s = {
        .holder = l->identity,
        .duration_s = kc__lease_seconds(l->ld_ns),
        .acquire_time = keep && l->rec.acquire_time ? l->rec.acquire_time : now,
        .renew_time = now,
        .transitions = keep ? l->rec.transitions : l->rec.transitions + 1,
        .strategy = l->rec.strategy,
        .preferred_holder = l->rec.preferred_holder,
    };
    kc__buf b = KC__BUF_INIT(KC__BUF_DEFAULT_MAX);
    int rc = kc__lease_update_body(l, &s, &b, err);
    if (rc == 0)
        rc = send_write(l, false, b.data, b.len, err);
    kc__buf_free(&b);
    return rc;
}

static int create_lease(kc__lease_lock *l, kc_error *err)
{
    char now[40];
    kc__lease_microtime(now);
    kc__lease_spec s = {.holder = l->identity,
                        .duration_s = kc__lease_seconds(l->ld_ns),
                        .acquire_time = now,
                        .renew_time = now,
                        .transitions = 0};
    kc__buf b = KC__BUF_INIT(KC__BUF_DEFAULT_MAX);
    int rc = kc__lease_create_body(l, &s, &b, err);
    if (rc == 0)
        rc = send_write(l, true, b.data, b.len, err); /* a racing create: KC_EEXISTS (L4) */
    kc__buf_free(&b);
    return rc < 0 ? rc : 1;
}

/* Coordinated mode (L2): renew only while holder and while no one else is preferred. */
static bool coordinated_may_write(const kc__lease_lock *l)
{
    if (!kc__lease_lock_is_holder(l))
        return false;
    return !l->rec.preferred_holder || !*l->rec.preferred_holder ||
           !strcmp(l->rec.preferred_holder, l->identity);
}

int kc__lease_lock_try(kc__lease_lock *l, kc_error *err)
{
    if (!l)
        return KC_EINVAL;
    /* (1) fast path: we hold it and our observation says it is still valid */
    if (l->obj && kc__lease_lock_is_holder(l) && !expired(l, l->clock(l->clock_ud)) &&
        (!l->coordinated || coordinated_may_write(l))) {
        if (write_holder(l, true, NULL) == 0)
            return 1;
        KC__LOG_DEBUG("leader", "lease %s/%s: fast-path renew failed, re-reading", l->ns, l->name);
    }
    /* (2) Get; create when missing */
    kc_obj *obj = NULL;
    int rc = kc_client_get(l->client, &LEASE_GVR, l->ns, l->name, &obj, err);
    if (rc == KC_ENOTFOUND) {
        if (l->coordinated)
            return 0;
        kc_error_clear(err);
        return create_lease(l, err);
    }
    if (rc < 0)
        return rc;
    /* (3) observe (a changed record restarts the expiry clock) */
    rc = observe(l, obj, err);
    if (rc < 0)
        return rc;
    /* (4) held by someone else and not expired by our observation */
    bool mine = kc__lease_lock_is_holder(l);
    if (l->coordinated && !coordinated_may_write(l))
        return 0;
    if (*l->rec.holder && !mine && !expired(l, l->clock(l->clock_ud)))
        return 0;
    /* (5) update: as holder keep acquireTime and transitions (slow path), else take over */
    if (mine)
        l->slowpath++;
    rc = write_holder(l, mine, err);
    return rc < 0 ? rc : 1;
}

/* One release attempt: 1 done (or not ours), 0 conflict (re-Get done), < 0 error. */
static int release_once(kc__lease_lock *l, kc_error *err)
{
    if (!l->obj || !kc__lease_lock_is_holder(l))
        return 1;
    char now[40];
    kc__lease_microtime(now);
    kc__lease_spec s = {.holder = "",
                        .duration_s = 1,
                        .acquire_time = now,
                        .renew_time = now,
                        .transitions = l->rec.transitions,
                        .strategy = l->rec.strategy,
                        .preferred_holder = l->rec.preferred_holder};
    kc__buf b = KC__BUF_INIT(KC__BUF_DEFAULT_MAX);
    int rc = kc__lease_update_body(l, &s, &b, err);
    if (rc == 0)
        rc = send_write(l, false, b.data, b.len, err);
    kc__buf_free(&b);
    if (rc == 0)
        return 1;
    if (rc != KC_ECONFLICT)
        return rc;
    kc_obj *obj = NULL;
    rc = kc_client_get(l->client, &LEASE_GVR, l->ns, l->name, &obj, err);
    if (rc == KC_ENOTFOUND)
        return 1;
    if (rc < 0)
        return rc;
    rc = observe(l, obj, err);
    return rc < 0 ? rc : 0;
}

int kc__lease_lock_release(kc__lease_lock *l, kc_error *err)
{
    if (!l)
        return KC_EINVAL;
    l->valid_until = 0; /* guarded work must be stopped before a release (L9) */
    uint64_t deadline = l->clock(l->clock_ud) + l->rd_ns;
    int rc;
    do {
        kc_error_clear(err);
        rc = release_once(l, err);
        if (rc == 1)
            return 0;
    } while (l->clock(l->clock_ud) < deadline);
    return rc < 0 ? rc : KC_ECONFLICT;
}

bool kc__lease_lock_is_holder(const kc__lease_lock *l)
{
    return l && l->have_rec && !strcmp(l->rec.holder, l->identity);
}

uint64_t kc__lease_lock_valid_until(const kc__lease_lock *l)
{
    return l ? l->valid_until : 0;
}

const kc__lease_record *kc__lease_lock_record(const kc__lease_lock *l)
{
    return l && l->have_rec ? &l->rec : NULL;
}

uint64_t kc__lease_lock_observed_time(const kc__lease_lock *l)
{
    return l ? l->observed_time : 0;
}

kc_obj *kc__lease_lock_object(const kc__lease_lock *l)
{
    return l ? l->obj : NULL;
}

uint64_t kc__lease_lock_slowpath(const kc__lease_lock *l)
{
    return l ? l->slowpath : 0;
}

const char *kc__lease_lock_identity(const kc__lease_lock *l)
{
    return l ? l->identity : NULL;
}

int kc__lease_lock_observe(kc__lease_lock *l, kc_obj *obj, kc_error *err)
{
    if (!l || !obj)
        return KC_EINVAL;
    if (kc__lease_lock_is_holder(l))
        return 0; /* our own writes are newer than any watch event */
    return observe(l, kc_obj_ref(obj), err);
}
