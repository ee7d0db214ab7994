/*
 * leader.c — kc_leader_elector's handle (kcache/leader.h): options and their validation (spec
 * L6), the default identity, start / stop / free, accessors, the gates — callbacks the elector
 * is handed (the controller hands it one for kc_controller_opts.leader_elector) — and the L11
 * metrics. The run itself — campaign, renew, loss, release — is leader_run.c.
 *
 * Ownership: the elector owns its Lease lock (kc__lease_lock, driven only by the run thread) and
 * its fence. A gate's ud is borrowed: whoever added the gate removes it before freeing ud.
 */
#include "leader/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int check_timings(int64_t ld, int64_t rd, int64_t rp, kc_error *err)
{
    if (ld <= 0 || rd <= 0 || rp <= 0)
        return kc_error_set(err, KC_EINVAL, "leader elector: durations must be > 0");
    if (ld <= rd)
        return kc_error_set(err, KC_EINVAL,
                            "leader elector: lease duration (%lld ms) must exceed renew deadline "
                            "(%lld ms)",
                            (long long)ld, (long long)rd);
    if (rd * 10 <= rp * 12)
        return kc_error_set(err, KC_EINVAL,
                            "leader elector: renew deadline (%lld ms) must exceed 1.2 x retry "
                            "period (%lld ms)",
                            (long long)rd, (long long)rp);
    return 0;
}

/* "<hostname>_<pid>_<16 hex>": unique per process and per elector (client-go: hostname_uuid). */
static char *default_identity(kc__rng *r)
{
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
        snprintf(host, sizeof(host), "kcache");
    char buf[320];
    snprintf(buf, sizeof(buf), "%s_%ld_%016llx", host, (long)getpid(),
             (unsigned long long)kc__rng_next(r));
    return kc__strdup(buf);
}

static void elector_destroy(kc_leader_elector *el)
{
    kc__lease_lock_free(el->lock);
    kc_fence_free(el->fence);
    free(el->ns);
    free(el->name);
    free(el->identity);
    free(el->holder);
    pthread_cond_destroy(&el->cv);
    pthread_mutex_destroy(&el->mu);
    pthread_mutex_destroy(&el->gate_mu);
    free(el);
}

static int elector_build(kc_leader_elector *el, const kc_leader_elector_opts *o, kc_error *err)
{
    const char *ns = o->ns && *o->ns ? o->ns : kc_client_namespace(el->client);
    el->ns = kc__strdup(ns && *ns ? ns : "default");
    el->name = kc__strdup(o->name);
    el->identity =
        o->identity && *o->identity ? kc__strdup(o->identity) : default_identity(&el->rng);
    el->holder = kc__strdup("");
    if (!el->ns || !el->name || !el->identity || !el->holder)
        return kc_error_set(err, KC_ENOMEM, "leader elector: out of memory");
    int rc = kc_fence_new(&el->fence, err);
    if (rc < 0)
        return rc;
    kc__lease_lock_opts lo = {.client = el->client,
                              .ns = el->ns,
                              .name = el->name,
                              .identity = el->identity,
                              .lease_duration_ns = el->ld_ns,
                              .renew_deadline_ns = el->rd_ns,
                              .coordinated = o->coordinated};
    return kc__lease_lock_new(&lo, &el->lock, err);
}

int(kc_leader_elector_new)(kc_client *client, const kc_leader_elector_opts *opts, size_t opts_size,
                           kc_leader_elector **ret, kc_error *err)
{
    if (!client || !opts || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_leader_elector_new: client, opts, ret required");
    KC__OPTS_TAKE(opts, kc_leader_elector_opts, err);
    if (!opts->name || !*opts->name)
        return kc_error_set(err, KC_EINVAL, "leader elector: the Lease name is required");
    int64_t ld =
        opts->lease_duration_ms ? opts->lease_duration_ms : KC_LEADER_DEFAULT_LEASE_DURATION_MS;
    int64_t rd =
        opts->renew_deadline_ms ? opts->renew_deadline_ms : KC_LEADER_DEFAULT_RENEW_DEADLINE_MS;
    int64_t rp = opts->retry_period_ms ? opts->retry_period_ms : KC_LEADER_DEFAULT_RETRY_PERIOD_MS;
    int rc = check_timings(ld, rd, rp, err);
    if (rc < 0)
        return rc;
    kc_leader_elector *el = calloc(1, sizeof(*el));
    if (!el)
        return kc_error_set(err, KC_ENOMEM, "leader elector: out of memory");
    pthread_mutex_init(&el->mu, NULL);
    pthread_mutex_init(&el->gate_mu, NULL);
    if (kc__cond_init_monotonic(&el->cv) < 0) {
        pthread_mutex_destroy(&el->mu);
        pthread_mutex_destroy(&el->gate_mu);
        free(el);
        return kc_error_set(err, KC_ENOMEM, "leader elector: no condition variable");
    }
    el->client = client;
    el->o = *opts;
    el->ld_ns = (uint64_t)ld * KC__NS_PER_MS;
    el->rd_ns = (uint64_t)rd * KC__NS_PER_MS;
    el->rp_ns = (uint64_t)rp * KC__NS_PER_MS;
    kc__rng_seed_auto(&el->rng);
    rc = elector_build(el, opts, err);
    if (rc < 0) {
        elector_destroy(el);
        return rc;
    }
    *ret = el;
    return 0;
}

/* Join the thread of a run (caller is the controlling thread; mu not held). */
static void join_run(kc_leader_elector *el)
{
    pthread_mutex_lock(&el->mu);
    bool live = el->thread_live;
    el->thread_live = false;
    pthread_mutex_unlock(&el->mu);
    if (live)
        pthread_join(el->thread, NULL);
}

int kc_leader_elector_start(kc_leader_elector *el, kc_error *err)
{
    if (!el)
        return kc_error_set(err, KC_EINVAL, "kc_leader_elector_start: NULL elector");
    pthread_mutex_lock(&el->mu);
    kc__le_state st = el->state;
    bool own = el->thread_live && pthread_equal(el->thread, pthread_self());
    pthread_mutex_unlock(&el->mu);
    if (st == KC__LE_RUNNING)
        return kc_error_set(err, KC_EBUSY, "leader elector %s: already running", el->name);
    if (own) /* from the run's own callback: it cannot join itself */
        return kc_error_set(err, KC_EBUSY, "leader elector %s: start from its own callback",
                            el->name);
    join_run(el); /* a run that ended by itself, or is ending (its callbacks finish first) */
    pthread_mutex_lock(&el->mu);
    el->stopping = false;
    el->state = KC__LE_RUNNING;
    el->thread_live = pthread_create(&el->thread, NULL, kc__leader_run, el) == 0;
    if (!el->thread_live)
        el->state = KC__LE_IDLE;
    bool ok = el->thread_live;
    pthread_mutex_unlock(&el->mu);
    return ok ? 0 : kc_error_set(err, KC_EIO, "leader elector %s: cannot start a thread", el->name);
}

int kc_leader_elector_stop(kc_leader_elector *el)
{
    if (!el)
        return KC_EINVAL;
    pthread_mutex_lock(&el->mu);
    el->stopping = true;
    pthread_cond_broadcast(&el->cv);
    pthread_mutex_unlock(&el->mu);
    join_run(el);
    return 0;
}

void kc_leader_elector_free(kc_leader_elector *el)
{
    if (!el)
        return;
    kc_leader_elector_stop(el);
    elector_destroy(el);
}

bool kc_leader_elector_is_leader(kc_leader_elector *el)
{
    return el && kc_fence_valid(el->fence);
}

int kc_leader_elector_leader(kc_leader_elector *el, char **ret)
{
    if (!el || !ret)
        return KC_EINVAL;
    pthread_mutex_lock(&el->mu);
    char *s = kc__strdup(el->holder);
    pthread_mutex_unlock(&el->mu);
    if (!s)
        return KC_ENOMEM;
    *ret = s;
    return 0;
}

const char *kc_leader_elector_identity(kc_leader_elector *el)
{
    return el ? el->identity : NULL;
}

kc_fence *kc_leader_elector_fence(kc_leader_elector *el)
{
    return el ? el->fence : NULL;
}

char *kc_leader_elector_metrics_render(void *ud)
{
    kc_leader_elector *el = ud;
    if (!el)
        return NULL;
    kc__buf b = KC__BUF_INIT(KC__BUF_DEFAULT_MAX);
    int rc = kc__buf_printf(
        &b,
        "# HELP leader_election_master_status Gauge of if the reporting system is master of the "
        "relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to "
        "identify the lease.\n"
        "# TYPE leader_election_master_status gauge\n"
        "leader_election_master_status{name=\"%s\"} %d\n"
        "# HELP leader_election_slowpath_total Total number of slow path exercised in renewing "
        "leader leases. 'name' is the string used to identify the lease.\n"
        "# TYPE leader_election_slowpath_total counter\n"
        "leader_election_slowpath_total{name=\"%s\"} %llu\n",
        el->name, kc_leader_elector_is_leader(el) ? 1 : 0, el->name,
        (unsigned long long)atomic_load(&el->slowpath));
    if (rc < 0) {
        kc__buf_free(&b);
        return NULL;
    }
    return kc__buf_steal(&b, NULL);
}

/* ---- gates ----------------------------------------------------------------------------------- */

void kc__leader_gates_set(kc_leader_elector *el, bool active)
{
    pthread_mutex_lock(&el->gate_mu);
    for (size_t i = 0; i < el->n_gates; i++)
        el->gates[i].set(el->gates[i].ud, active);
    pthread_mutex_unlock(&el->gate_mu);
}

int kc__leader_elector_add_gate(kc_leader_elector *el, kc__leader_gate_fn set, void *ud)
{
    if (!el || !set)
        return KC_EINVAL;
    pthread_mutex_lock(&el->gate_mu);
    int rc = 0;
    if (el->n_gates == KC__LEADER_GATES_MAX)
        rc = KC_ETOOLARGE;
    else {
        el->gates[el->n_gates++] = (kc__leader_gate){set, ud};
        set(ud, atomic_load(&el->leading));
    }
    pthread_mutex_unlock(&el->gate_mu);
    return rc;
}

void kc__leader_elector_remove_gate(kc_leader_elector *el, kc__leader_gate_fn set, void *ud)
{
    if (!el)
        return;
    pthread_mutex_lock(&el->gate_mu);
    for (size_t i = 0; i < el->n_gates; i++)
        if (el->gates[i].set == set && el->gates[i].ud == ud) {
            el->gates[i] = el->gates[--el->n_gates];
            break;
        }
    pthread_mutex_unlock(&el->gate_mu);
}

void kc__leader_elector_test_pause(kc_leader_elector *el, bool paused)
{
    if (!el)
        return;
    pthread_mutex_lock(&el->mu);
    el->paused = paused;
    pthread_cond_broadcast(&el->cv);
    pthread_mutex_unlock(&el->mu);
}
