/*
 * informer/exit.c — returning from main while informers run.
 *
 * exit() runs the exit handlers (C++ static destructors among them: simdjson's kernels, OpenSSL's
 * cleanup) while the library's threads are still decoding, dispatching and talking HTTP; they
 * then call into destroyed objects ("pure virtual method called", SIGSEGV). So every started
 * informer is listed here until it is stopped, and an exit handler stops those still listed —
 * cancel, join the reflector, join every dispatcher (a callback in progress is waited for) — before
 * anything is torn down. Exit handlers run in reverse order of registration, so ours is registered
 * after the statics the threads use have been built (kc__sj_init_statics; OpenSSL and libcurl are
 * initialised by kc_client_new, before any informer exists) and therefore runs before their
 * destructors. User code still running in other threads is the program's own business.
 *
 * The list is the one piece of process-wide mutable state of the informer layer: a mutex and an
 * array, touched only at start, stop, free and exit. The handler takes the whole list under the
 * mutex, pins each informer (kc_informer_free waits until it is unpinned, so nothing is freed
 * while the handler stops it), releases the mutex and stops them; it repeats until the list stays
 * empty. A fork child starts with an empty list (its informers have no threads).
 */
#include "informer/internal.h"

#include "json/sj.h"

#include <stdlib.h>

static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t exit_mu = PTHREAD_MUTEX_INITIALIZER;
static kc_informer **exit_list; /* exit_mu */
static size_t exit_n, exit_cap; /* exit_mu */

/* Rounds until the list stays empty (an informer started while we stop others joins it). */
static void on_exit_stop_all(void)
{
    for (;;) {
        pthread_mutex_lock(&exit_mu);
        kc_informer **v = exit_list;
        size_t n = exit_n;
        exit_list = NULL;
        exit_n = exit_cap = 0;
        for (size_t i = 0; i < n; i++) {
            v[i]->exit_registered = false;
            pthread_mutex_lock(&v[i]->st_mu); /* exit_mu → st_mu: the only nesting of the two */
            v[i]->exit_pinned = true;         /* kc_informer_free waits for the unpin */
            pthread_mutex_unlock(&v[i]->st_mu);
        }
        pthread_mutex_unlock(&exit_mu);
        if (n == 0) {
            free(v);
            return;
        }
        for (size_t i = 0; i < n; i++) {
            kc_informer_stop(v[i]);
            pthread_mutex_lock(&v[i]->st_mu);
            v[i]->exit_pinned = false;
            pthread_cond_broadcast(&v[i]->st_cv);
            pthread_mutex_unlock(&v[i]->st_mu);
        }
        free(v);
    }
}

static void fork_prepare(void)
{
    pthread_mutex_lock(&exit_mu);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&exit_mu);
}

static void fork_child(void)
{
    pthread_mutex_init(&exit_mu, NULL);
    for (size_t i = 0; i < exit_n; i++)
        exit_list[i]->exit_registered = false;
    exit_n = 0;
}

static void exit_init(void)
{
    if (!kc__json_cpu_missing()) /* else no decoder ever runs: nothing to warm up */
        kc__sj_init_statics();
    atexit(on_exit_stop_all);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void kc__inf_exit_register(kc_informer *inf)
{
    pthread_once(&exit_once, exit_init);
    pthread_mutex_lock(&exit_mu);
    if (!inf->exit_registered)
        (void)kc__grow(&exit_list, &exit_cap, exit_n + 1, sizeof(*exit_list), 16);
    if (!inf->exit_registered &&
        exit_n < exit_cap) { /* out of memory: not exit-safe, still works */
        exit_list[exit_n++] = inf;
        inf->exit_registered = true;
    }
    pthread_mutex_unlock(&exit_mu);
}

void kc__inf_exit_unregister(kc_informer *inf)
{
    pthread_mutex_lock(&exit_mu);
    for (size_t i = 0; i < exit_n && inf->exit_registered; i++) {
        if (exit_list[i] == inf) {
            exit_list[i] = exit_list[--exit_n];
            inf->exit_registered = false;
        }
    }
    pthread_mutex_unlock(&exit_mu);
}
