/*
 * informer/watchdog.c — the streaming list's watchdog: one thread per streaming list, ending it
 * when its initial-events-end bookmark does not come.
 *
 * A streaming list (WATCH with sendInitialEvents=true) only ends its initial phase when the server
 * sends the k8s.io/initial-events-end bookmark. A server that supports the parameters but never
 * sends it (an old aggregated API, a proxy that drops bookmarks) would keep the informer unsynced
 * forever, so the watchdog fires the informer's cancel token after initial_events_timeout_ms
 * without any event, or ten times that in all, and marks the informer (initial_timed_out) so the
 * reflector says "timed out" and, in AUTO mode, falls back to a paged LIST. The reflector stops
 * the watchdog when the call returns (it then reads initial_timed_out after the join).
 *
 * Threads: the watchdog reads last_event_ns (atomic) and waits on st_cv under st_mu; stop sets
 * initial_end_seen under st_mu and joins.
 */
#include "informer/internal.h"

static void *watchdog_main(void *arg)
{
    kc_informer *inf = arg;
    uint64_t quiet = (uint64_t)inf->o.initial_events_timeout_ms * KC__NS_PER_MS;
    uint64_t hard = kc__now_ns() + quiet * 10;
    pthread_mutex_lock(&inf->st_mu);
    while (!inf->stopping && !inf->initial_end_seen) {
        uint64_t last = atomic_load(&inf->last_event_ns);
        uint64_t deadline = last + quiet;
        if (deadline > hard)
            deadline = hard;
        if (kc__now_ns() >= deadline) {
            KC__LOG_INFO("informer",
                         "informer %s: no initial-events-end bookmark; falling back to LIST",
                         inf->name);
            inf->initial_timed_out = true; /* do_watch says so (issue 29 point 12) */
            if (inf->cancel)
                kc_cancel_fire(inf->cancel);
            break;
        }
        kc__cond_wait_until(&inf->st_cv, &inf->st_mu, deadline);
    }
    pthread_mutex_unlock(&inf->st_mu);
    return NULL;
}

void kc__watchdog_start(kc__watchdog *wd, kc_informer *inf)
{
    wd->inf = inf;
    wd->started = pthread_create(&wd->th, NULL, watchdog_main, inf) == 0;
}

void kc__watchdog_stop(kc__watchdog *wd)
{
    if (!wd->started)
        return;
    kc_informer *inf = wd->inf;
    pthread_mutex_lock(&inf->st_mu);
    inf->initial_end_seen = true; /* ends the watchdog */
    pthread_cond_broadcast(&inf->st_cv);
    pthread_mutex_unlock(&inf->st_mu);
    pthread_join(wd->th, NULL);
    wd->started = false;
}
