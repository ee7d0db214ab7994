/*
 * script.c — the fault script of the soak, the writers' pause gate, and restores.
 *
 * The script is driven by progress (successful writes), not by time, so a run with more writes
 * sees the same sequence, stretched. The run is cut into --cycles equal spans; each span plays:
 *
 *     0 %  watch delay only (--watch-delay)
 *    10 %  + watches dropped at random (2 % per event)
 *    20 %  + injected errors: 429/500/503 at 2 % each on GET, LIST, WATCH; 1 % each on writes
 *    30 %  compaction: watches resuming from older RVs get 410 Expired, informers relist
 *    35 %  watch outage for --outage ms: every watch closed at its next event, every new watch
 *          503, the history compacted halfway, so informers come back with a 410 relist
 *    50 %  throttling: LIST and WATCH 429 at 15 %, 429/503 with Retry-After: 1
 *    60 %  restart as after a restore from backup (RVs renumbered from 1), see below
 *    70 %  every watch closed after 7 events, injected errors
 *    80 %  compaction again
 *    90 %  drops only
 *
 * A restore pauses the writers (each finishes its step and parks in soak_gate), waits until both
 * caches show a barrier write and both handler registrations have been handed everything, opens
 * the reset window (shadow.c), restarts the server, waits for a barrier written after the restart
 * (the informers noticed the reset and relisted), checks each store against a live LIST (check
 * a, mid-run), closes the window once the handlers caught up, gives the writers the renumbered
 * RVs, and lets them go on. The pause is what makes the reset detectable: an informer that
 * reconnects after the new numbering has passed its old RV would resume there and silently miss
 * the renumbering (no client can detect that; docs/soak.md).
 *
 * Waits are on the gate's condition variable (CLOCK_MONOTONIC): writers signal it when the write
 * count reaches wake_at, when they park and when they exit.
 */
#include "soak.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

typedef enum { F_BASE, F_DROPS, F_ERRORS, F_THROTTLE, F_CLOSE_EVERY } fault_level;
typedef enum { S_FAULTS, S_COMPACT, S_OUTAGE, S_RESTORE } step_kind;

static const struct step {
    unsigned permille;
    step_kind kind;
    fault_level lv;
    const char *what;
} steps[] = {
    {0, S_FAULTS, F_BASE, "watch delay only"},
    {100, S_FAULTS, F_DROPS, "random watch drops"},
    {200, S_FAULTS, F_ERRORS, "injected 429/500/503"},
    {300, S_COMPACT, F_ERRORS, "compaction"},
    {350, S_OUTAGE, F_ERRORS, "watch outage with compaction"},
    {500, S_FAULTS, F_THROTTLE, "LIST/WATCH throttled (Retry-After)"},
    {600, S_RESTORE, F_ERRORS, "restart as after a restore (RVs renumbered)"},
    {700, S_FAULTS, F_CLOSE_EVERY, "watches closed every 7 events"},
    {800, S_COMPACT, F_CLOSE_EVERY, "compaction"},
    {900, S_FAULTS, F_DROPS, "random watch drops"},
};

static kc_server_faults faults_for(const soak *s, fault_level lv)
{
    kc_server_faults f = {0};
    f.watch_delay_min_ms = s->o.delay_min;
    f.watch_delay_max_ms = s->o.delay_max;
    if (lv >= F_DROPS)
        f.watch_close_prob = 0.02;
    if (lv >= F_ERRORS) {
        static const kc_server_verb reads[] = {KC_SERVER_VERB_GET, KC_SERVER_VERB_LIST,
                                               KC_SERVER_VERB_WATCH};
        static const kc_server_verb writes[] = {KC_SERVER_VERB_CREATE, KC_SERVER_VERB_UPDATE,
                                                KC_SERVER_VERB_PATCH, KC_SERVER_VERB_DELETE};
        for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
            f.rate_429[reads[i]] = f.rate_500[reads[i]] = f.rate_503[reads[i]] = 0.02;
        for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++)
            f.rate_429[writes[i]] = f.rate_500[writes[i]] = f.rate_503[writes[i]] = 0.01;
    }
    if (lv == F_THROTTLE) {
        f.rate_429[KC_SERVER_VERB_LIST] = f.rate_429[KC_SERVER_VERB_WATCH] = 0.15;
        f.retry_after_s = 1;
    }
    if (lv == F_CLOSE_EVERY)
        f.watch_close_every = 7;
    return f;
}

static void set_level(soak *s, fault_level lv)
{
    kc_server_faults f = faults_for(s, lv);
    kc_server_set_faults(s->srv, &f);
}

/* ---- the gate -------------------------------------------------------------------------------- */

bool soak_gate(soak *s)
{
    pthread_mutex_lock(&s->mu);
    if (s->pause && !s->stop) {
        s->parked++;
        pthread_cond_broadcast(&s->cv);
        while (s->pause && !s->stop)
            pthread_cond_wait(&s->cv, &s->mu);
        s->parked--;
    }
    bool go = !s->stop;
    pthread_mutex_unlock(&s->mu);
    return go;
}

void soak_count_write(soak *s)
{
    uint64_t n = atomic_fetch_add(&s->c.writes, 1) + 1;
    if (n >= atomic_load(&s->wake_at)) {
        pthread_mutex_lock(&s->mu);
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
}

void soak_writer_done(soak *s)
{
    pthread_mutex_lock(&s->mu);
    s->running--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void soak_stop(soak *s)
{
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

bool soak_stopping(soak *s)
{
    pthread_mutex_lock(&s->mu);
    bool st = s->stop;
    pthread_mutex_unlock(&s->mu);
    return st;
}

static struct timespec abs_ts(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    return ts;
}

/* Until the writers made `target` successful writes (or all exited). false when stopping. */
static bool wait_writes(soak *s, uint64_t target)
{
    pthread_mutex_lock(&s->mu);
    atomic_store(&s->wake_at, target);
    while (!s->stop && s->running > 0 && atomic_load(&s->c.writes) < target)
        pthread_cond_wait(&s->cv, &s->mu);
    atomic_store(&s->wake_at, UINT64_MAX);
    bool go = !s->stop;
    pthread_mutex_unlock(&s->mu);
    return go;
}

/* A fault lasting ms (the duration is the fault itself, not a synchronisation). */
static void hold(soak *s, unsigned ms)
{
    uint64_t deadline = soak_now_ns() + (uint64_t)ms * 1000000u;
    struct timespec ts = abs_ts(deadline);
    pthread_mutex_lock(&s->mu);
    while (!s->stop && soak_now_ns() < deadline)
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    pthread_mutex_unlock(&s->mu);
}

static void pause_writers(soak *s)
{
    pthread_mutex_lock(&s->mu);
    s->pause = true;
    while (!s->stop && s->parked < s->running)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

static void resume_writers(soak *s)
{
    pthread_mutex_lock(&s->mu);
    s->pause = false;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* ---- steps ----------------------------------------------------------------------------------- */

/* Both caches show a fresh barrier write and both handlers were handed everything. */
static void sides_at_barrier(soak *s, const char *when)
{
    char uid[SOAK_UID_MAX], rv[SOAK_RV_MAX];
    int rc = soak_barrier_write(s, uid, rv);
    if (rc < 0) {
        atomic_fetch_add(&s->c.v_catch_up, 1);
        soak_violation(s, "catch-up", "barrier write %s failed: %s", when, kc_errno_name(rc));
        return;
    }
    for (int i = 0; i < SOAK_SIDES; i++) {
        soak_side *sd = &s->side[i];
        if (soak_barrier_wait(s, sd, uid, rv, 60000) < 0) {
            atomic_fetch_add(&s->c.v_catch_up, 1);
            soak_violation(s, "catch-up",
                           "%s: the cache did not observe the barrier (rv %s) %s "
                           "within 60 s",
                           sd->name, rv, when);
        }
        if ((rc = kc_informer_reg_wait_idle(sd->reg, 30000, NULL)) < 0) {
            atomic_fetch_add(&s->c.v_catch_up, 1);
            soak_violation(s, "catch-up", "%s: handler not idle %s: %s", sd->name, when,
                           kc_errno_name(rc));
        }
    }
}

static void restore(soak *s, fault_level lv)
{
    pause_writers(s);
    if (!s->before.set) {
        s->before = (soak_before_restore){true,
                                          atomic_load(&s->c.writes),
                                          atomic_load(&s->c.v_stale),
                                          atomic_load(&s->c.v_resurrected),
                                          atomic_load(&s->c.v_phantom),
                                          atomic_load(&s->c.v_cache),
                                          atomic_load(&s->c.v_handler)};
    }
    set_level(s, F_BASE);
    sides_at_barrier(s, "before the restore");
    uint64_t before = kc_server_current_rv(s->srv);
    atomic_store(&s->reset_window, true);
    int rc = kc_server_restart(s->srv, KC_SERVER_RESTART_RESTORE, NULL);
    if (rc < 0) {
        soak_violation(s, "setup", "restart failed: %s", kc_errno_name(rc));
        atomic_fetch_add(&s->c.v_catch_up, 1);
    }
    atomic_fetch_add(&s->c.restores, 1);
    soak_progress(s, "server restored: RV %llu -> %llu", (unsigned long long)before,
                  (unsigned long long)kc_server_current_rv(s->srv));
    sides_at_barrier(s, "after the restore");
    soak_snap server = {0};
    if ((rc = soak_snap_server(s, &server)) == 0) {
        for (int i = 0; i < SOAK_SIDES; i++) {
            soak_snap st = {0};
            char label[48];
            snprintf(label, sizeof(label), "%s cache after the restore", s->side[i].name);
            if (soak_snap_store(s->side[i].store, &st) == 0)
                atomic_fetch_add(&s->c.v_cache,
                                 soak_snap_diff(s, "a-cache", &server, "server", &st, label));
            soak_snap_free(&st);
        }
        soak_writers_refresh(s, &server);
    } else {
        soak_violation(s, "setup", "LIST after the restore failed: %s", kc_errno_name(rc));
    }
    soak_snap_free(&server);
    for (int i = 0; i < SOAK_SIDES; i++)
        kc_informer_reg_wait_idle(s->side[i].reg, 30000, NULL);
    atomic_store(&s->reset_window, false);
    set_level(s, lv);
    resume_writers(s);
}

static void outage(soak *s, fault_level lv)
{
    kc_server_faults f = faults_for(s, lv);
    f.rate_503[KC_SERVER_VERB_WATCH] = 1.0;
    f.watch_close_every = 1;
    kc_server_set_faults(s->srv, &f);
    atomic_fetch_add(&s->c.outages, 1);
    hold(s, s->o.outage_ms / 2);
    kc_server_compact(s->srv);
    atomic_fetch_add(&s->c.compactions, 1);
    hold(s, s->o.outage_ms - s->o.outage_ms / 2);
    set_level(s, lv);
}

static void run_step(soak *s, const struct step *st)
{
    soak_progress(s, "%s", st->what);
    switch (st->kind) {
    case S_FAULTS:
        set_level(s, st->lv);
        break;
    case S_COMPACT:
        set_level(s, st->lv);
        kc_server_compact(s->srv);
        atomic_fetch_add(&s->c.compactions, 1);
        break;
    case S_OUTAGE:
        outage(s, st->lv);
        break;
    case S_RESTORE:
        restore(s, st->lv);
        break;
    }
}

void *soak_script_main(void *arg)
{
    soak *s = arg;
    if (!s->o.faults)
        return NULL;
    uint64_t span = s->o.writes / s->o.cycles;
    for (unsigned c = 0; c < s->o.cycles; c++) {
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
            uint64_t target = span * c + span * steps[i].permille / 1000;
            if (!wait_writes(s, target) || atomic_load(&s->c.writes) >= s->o.writes)
                return NULL;
            run_step(s, &steps[i]);
        }
    }
    return NULL;
}
