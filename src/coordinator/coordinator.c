/*
 * coordinator/coordinator.c — kc_shard_coordinator: options, lifecycle, the coordinator's thread,
 * listeners and the public accessors (design: docs/scale-out.md; one poll: coord_poll.c; the
 * assignment rules: shard_assign.c; admission of keys: shard_gate.c).
 *
 * The thread polls at the machine's wake time plus a jitter in [0, 0.2·RP] (A16, L7), waiting on
 * a monotonic condition variable so stop and kill wake it at once. Stop turns the machine to
 * leaving (target 0: every range drains, nothing is acquired) and keeps polling — waiting on the
 * gate for the draining ranges' reconciles rather than for RP — until nothing is held, bounded by
 * drain_timeout_ms (past it the remaining ranges are released anyway); then the member Lease is
 * released (A12: ranges first, then the member) and the thread ends.
 *
 * Timings: a Lease stores whole seconds, so LD in effect is rounded up to a whole second and the
 * machine uses that value; RD and RP are used as given.
 */
#include "coordinator/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kc_gvr LEASE_GVR = {"coordination.k8s.io", "v1", "leases"};

static int opts_check(const kc_shard_coordinator_opts *o, uint32_t k, kc_error *err)
{
    if (!o->ns || !*o->ns || !o->prefix || !*o->prefix || !o->identity || !*o->identity)
        return kc_error_set(err, KC_EINVAL,
                            "shard coordinator: ns, prefix and identity are required");
    if (strlen(o->identity) >= KC__SHARD_ID_MAX || strlen(o->prefix) > 200)
        return kc_error_set(err, KC_EINVAL, "shard coordinator: identity or prefix too long");
    if (k == 0 || k > KC__SHARD_MAX_RANGES || (k & (k - 1)) != 0)
        return kc_error_set(err, KC_EINVAL,
                            "shard coordinator: ranges must be a power of two up to %u (got %u)",
                            KC__SHARD_MAX_RANGES, k);
    return 0;
}

static int timings(kc_shard_coordinator *c, const kc_shard_coordinator_opts *o, kc_error *err)
{
    int64_t ld = o->lease_duration_ms ? o->lease_duration_ms : 15000;
    int64_t rd = o->renew_deadline_ms ? o->renew_deadline_ms : 10000;
    int64_t rp = o->retry_period_ms ? o->retry_period_ms : 2000;
    if (rp <= 0 || rd * 10 <= rp * 12 || ld <= rd) /* L6: LD > RD > 1.2·RP > 0 */
        return kc_error_set(err, KC_EINVAL,
                            "shard coordinator: timings need lease duration > renew deadline > "
                            "1.2 x retry period > 0 (got %lld, %lld, %lld ms)",
                            (long long)ld, (long long)rd, (long long)rp);
    c->ld_ms = ((uint64_t)ld + 999) / 1000 * 1000;
    c->rd_ms = (uint64_t)rd;
    c->rp_ms = (uint64_t)rp;
    c->drain_timeout_ms = o->drain_timeout_ms ? o->drain_timeout_ms : 30000;
    return 0;
}

static int make_locks(kc_shard_coordinator *c, kc_error *err)
{
    char name[300], kbuf[16];
    snprintf(name, sizeof name, "%s%s", c->member_prefix, c->identity);
    kc__lease_lock_opts lo = {.client = c->client,
                              .ns = c->ns,
                              .name = name,
                              .identity = c->identity,
                              .lease_duration_ns = c->ld_ms * KC__NS_PER_MS,
                              .renew_deadline_ns = c->rd_ms * KC__NS_PER_MS};
    int rc = kc__lease_lock_new(&lo, &c->member, err);
    snprintf(kbuf, sizeof kbuf, "%u", c->k);
    for (uint32_t r = 0; rc == 0 && r < c->k; r++) {
        snprintf(name, sizeof name, "%s-range-%u", c->prefix, r);
        rc = kc__lease_lock_new(&lo, &c->rl[r], err);
        if (rc == 0)
            rc = kc__lease_lock_set_annotation(c->rl[r], KC__SHARD_K_ANNOTATION, kbuf);
    }
    return rc;
}

static void coord_destroy(kc_shard_coordinator *c)
{
    kc_informer_free(c->inf);
    kc__lease_lock_free(c->member);
    for (uint32_t r = 0; c->rl && r < c->k; r++)
        kc__lease_lock_free(c->rl[r]);
    free(c->rl);
    for (size_t i = 0; i < c->n_mobs; i++)
        free(c->mobs[i].name);
    free(c->mobs);
    free(c->robs);
    free(c->acts);
    kc__shard_assign_free(c->a);
    kc__shard_gate_free(c->g);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->cb_mu);
    pthread_cond_destroy(&c->cv);
    free(c->ns);
    free(c->prefix);
    free(c->identity);
    free(c->member_prefix);
    free(c);
}

static int build(kc_shard_coordinator *c, const kc_shard_coordinator_opts *o, kc_error *err)
{
    c->ns = kc__strdup(o->ns);
    c->prefix = kc__strdup(o->prefix);
    c->identity = kc__strdup(o->identity);
    c->member_prefix = malloc(strlen(o->prefix) + sizeof("-member-"));
    c->rl = calloc(c->k, sizeof(*c->rl));
    c->robs = calloc(c->k, sizeof(*c->robs));
    c->acts = calloc(c->k, sizeof(*c->acts));
    c->mobs = calloc(KC__COORD_MAX_MEMBERS, sizeof(*c->mobs));
    c->a = kc__shard_assign_new(c->k, o->identity, c->ld_ms, c->rp_ms);
    c->g = kc__shard_gate_new(c->k);
    if (!c->ns || !c->prefix || !c->identity || !c->member_prefix || !c->rl || !c->robs ||
        !c->acts || !c->mobs || !c->a || !c->g)
        return kc_error_set(err, KC_ENOMEM, "shard coordinator: out of memory");
    sprintf(c->member_prefix, "%s-member-", o->prefix);
    kc__rng_seed_auto(&c->rng);
    c->lis[0] = (kc__coord_listener){o->on_gained, o->on_lost, NULL, o->ud};
    c->n_lis = 1;
    return make_locks(c, err);
}

int(kc_shard_coordinator_new)(kc_client *client, const kc_shard_coordinator_opts *opts,
                              size_t opts_size, kc_shard_coordinator **ret, kc_error *err)
{
    if (!client || !opts || !ret)
        return kc_error_set(err, KC_EINVAL,
                            "kc_shard_coordinator_new: client, opts and ret are required");
    KC__OPTS_TAKE(opts, kc_shard_coordinator_opts, err);
    uint32_t k = opts->ranges ? opts->ranges : 64;
    int rc = opts_check(opts, k, err);
    if (rc < 0)
        return rc;
    kc_shard_coordinator *c = calloc(1, sizeof(*c));
    if (!c)
        return kc_error_set(err, KC_ENOMEM, "shard coordinator: out of memory");
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->cb_mu, NULL);
    if (kc__cond_init_monotonic(&c->cv) != 0) {
        free(c);
        return kc_error_set(err, KC_ENOMEM, "shard coordinator: cannot make a condition variable");
    }
    c->client = client;
    c->k = k;
    rc = timings(c, opts, err);
    if (rc == 0)
        rc = build(c, opts, err);
    if (rc < 0) {
        coord_destroy(c);
        return rc;
    }
    *ret = c;
    return 0;
}

/* ---- thread ---------------------------------------------------------------------------------- */

/* While leaving: wait for a draining range's reconciles (bounded by RP and the drain bound). */
static void wait_drains(kc_shard_coordinator *c, uint64_t now)
{
    for (uint32_t r = 0; r < c->k; r++)
        if (kc__shard_assign_mine(c->a, r) == KC__SHARD_DRAINING) {
            uint64_t left = c->leave_deadline_ms > now ? c->leave_deadline_ms - now : 0;
            (void)kc__shard_gate_wait_idle(c->g, r, (int64_t)(left < c->rp_ms ? left : c->rp_ms));
            return;
        }
}

/* One leaving round; true when the thread is done. */
static bool leave_round(kc_shard_coordinator *c)
{
    uint64_t now = kc__now_ms();
    if (!c->leaving) {
        c->leaving = true;
        c->leave_deadline_ms = now + (uint64_t)c->drain_timeout_ms;
        kc__shard_assign_leave(c->a);
    }
    (void)kc__coord_poll(c, now);
    if (!kc__shard_assign_none_held(c->a) && kc__now_ms() >= c->leave_deadline_ms) {
        KC__LOG_WARN("controller", "shard coordinator %s: drain bound passed, releasing anyway",
                     c->identity);
        kc__coord_release_all(c);
        pthread_mutex_lock(&c->mu);
        c->stop_rc = KC_ETIMEOUT;
        pthread_mutex_unlock(&c->mu);
    }
    if (!kc__shard_assign_none_held(c->a)) {
        wait_drains(c, kc__now_ms());
        return false;
    }
    if (kc__lease_lock_release(c->member, NULL) < 0) /* then the member Lease (A12) */
        atomic_fetch_add(&c->n_write_errors, 1);
    return true;
}

static void *coord_main(void *arg)
{
    kc_shard_coordinator *c = arg;
    uint64_t next = kc__now_ms();
    for (;;) {
        pthread_mutex_lock(&c->mu);
        while (!c->stop_req && !c->kill_req && kc__now_ms() < next)
            (void)kc__cond_wait_until(&c->cv, &c->mu, next * KC__NS_PER_MS);
        bool kill = c->kill_req, stop = c->stop_req;
        pthread_mutex_unlock(&c->mu);
        if (kill)
            break;
        if (stop) {
            if (leave_round(c))
                break;
            continue;
        }
        uint64_t wake = kc__coord_poll(c, kc__now_ms());
        next = wake + kc__rng_range(&c->rng, 0, c->rp_ms / 5); /* jitter j = 0.2 (A16) */
    }
    pthread_mutex_lock(&c->mu);
    c->thread_done = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static int start_informer(kc_shard_coordinator *c, kc_error *err)
{
    char iname[300];
    snprintf(iname, sizeof iname, "leases/%s (shard coordinator %s)", c->ns, c->prefix);
    kc_informer_opts io = {.ns = c->ns, .name = iname, .optional = true};
    int rc = kc_informer_new(c->client, &LEASE_GVR, &io, &c->inf, err);
    if (rc == 0)
        rc = kc_informer_start(c->inf, err);
    if (rc == 0)
        rc = kc_informer_wait_synced(c->inf, (int64_t)(10 * c->ld_ms), err);
    return rc;
}

int kc_shard_coordinator_start(kc_shard_coordinator *c, kc_error *err)
{
    if (!c)
        return kc_error_set(err, KC_EINVAL, "kc_shard_coordinator_start: NULL");
    pthread_mutex_lock(&c->mu);
    int rc = c->state == KC__COORD_NEW
                 ? 0
                 : kc_error_set(err, c->state == KC__COORD_STOPPED ? KC_ESTOPPED : KC_EBUSY,
                                "shard coordinator: already started");
    if (rc == 0)
        c->state = KC__COORD_RUNNING;
    pthread_mutex_unlock(&c->mu);
    if (rc < 0)
        return rc;
    rc = start_informer(c, err);
    if (rc == 0) {
        rc = kc__lease_lock_try(c->member, err);
        rc = rc < 0 ? rc : 0;
    }
    if (rc == 0 && pthread_create(&c->th, NULL, coord_main, c) != 0)
        rc = kc_error_set(err, KC_ENOMEM, "shard coordinator: cannot create its thread");
    pthread_mutex_lock(&c->mu);
    c->thread_started = rc == 0;
    if (rc < 0)
        c->state = KC__COORD_STOPPED;
    pthread_mutex_unlock(&c->mu);
    if (rc < 0 && c->inf)
        kc_informer_stop(c->inf);
    return rc;
}

static int finish(kc_shard_coordinator *c, bool kill)
{
    pthread_mutex_lock(&c->mu);
    if (kill)
        c->kill_req = true;
    else
        c->stop_req = true;
    bool join = c->thread_started;
    c->thread_started = false;
    c->state = KC__COORD_STOPPED;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (join)
        pthread_join(c->th, NULL);
    if (kill)
        for (uint32_t r = 0; r < c->k; r++)
            kc__shard_gate_drop(c->g, r);
    if (c->inf)
        kc_informer_stop(c->inf);
    pthread_mutex_lock(&c->mu);
    int rc = c->stop_rc;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int kc_shard_coordinator_stop(kc_shard_coordinator *c)
{
    return c ? finish(c, false) : KC_EINVAL;
}

void kc__shard_coordinator_kill(kc_shard_coordinator *c)
{
    if (c)
        (void)finish(c, true);
}

void kc_shard_coordinator_free(kc_shard_coordinator *c)
{
    if (!c)
        return;
    (void)finish(c, false);
    coord_destroy(c);
}

/* ---- listeners and accessors ----------------------------------------------------------------- */

int kc__shard_coordinator_listen(kc_shard_coordinator *c, kc_shard_range_fn gained,
                                 kc_shard_range_fn lost, kc_shard_range_fn resumed, void *ud)
{
    if (!c)
        return KC_EINVAL;
    pthread_mutex_lock(&c->cb_mu);
    int rc = c->n_lis < KC__COORD_MAX_LISTENERS ? 0 : KC_ETOOLARGE;
    if (rc == 0)
        c->lis[c->n_lis++] = (kc__coord_listener){gained, lost, resumed, ud};
    pthread_mutex_unlock(&c->cb_mu);
    return rc;
}

void kc__shard_coordinator_unlisten(kc_shard_coordinator *c, void *ud)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->cb_mu); /* waits for a call in progress */
    size_t w = 1;                  /* [0] is the options' callbacks */
    for (size_t i = 1; i < c->n_lis; i++)
        if (c->lis[i].ud != ud)
            c->lis[w++] = c->lis[i];
    c->n_lis = w;
    pthread_mutex_unlock(&c->cb_mu);
}

kc__shard_gate *kc__shard_coordinator_gate(kc_shard_coordinator *c)
{
    return c ? c->g : NULL;
}

uint32_t kc_shard_coordinator_ranges(const kc_shard_coordinator *c)
{
    return c ? c->k : 0;
}

uint32_t kc_shard_coordinator_range_of(const kc_shard_coordinator *c, uint64_t h)
{
    return c ? kc__shard_gate_range_of(c->g, h) : 0;
}

bool kc_shard_coordinator_holds(kc_shard_coordinator *c, uint32_t r)
{
    return c && kc__shard_gate_valid(c->g, r, kc__now_ms());
}

const kc_fence *kc_shard_coordinator_fence(kc_shard_coordinator *c, uint32_t r)
{
    return c ? kc__shard_gate_fence(c->g, r) : NULL;
}

void(kc_shard_coordinator_get_stats)(kc_shard_coordinator *c, kc_shard_coordinator_stats *ret,
                                     size_t ret_size)
{
    kc_shard_coordinator_stats st;
    memset(&st, 0, sizeof st);
    if (c) {
        st.ranges = c->k;
        pthread_mutex_lock(&c->mu);
        st.held = c->st_held;
        st.draining = c->st_draining;
        st.target = c->st_target;
        st.live_members = c->st_live;
        st.refused = c->st_refused;
        pthread_mutex_unlock(&c->mu);
        st.polls = atomic_load(&c->n_polls);
        st.acquired = atomic_load(&c->n_acquired);
        st.released = atomic_load(&c->n_released);
        st.lost = atomic_load(&c->n_lost);
        st.write_errors = atomic_load(&c->n_write_errors);
    }
    kc__result_copy(ret, ret_size, &st, sizeof st);
}
