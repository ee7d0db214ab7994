/*
 * demo_shards_ctx.h — the state of `kcache demo shards`' parent, shared by demo_shards.c (the
 * scenario: replicas, faults, measurements) and demo_shard_watch.c (the parent's view of Leases
 * and Pods, and the stale-write verdict over it).
 */
#ifndef KC_DEMO_SHARDS_CTX_H
#define KC_DEMO_SHARDS_CTX_H

#include "demo_shards.h"

#include "kcache/cache.h"
#include "kcache/server.h"

#include <errno.h>
#include <pthread.h>
#include <sys/types.h>
#include <time.h>

typedef struct hist_ev {
    uint64_t rv;
    uint32_t range;
    int who; /* replica index of this pass, -1 for none (""), -2 another pass's */
} hist_ev;

typedef struct shards_ctx {
    const shards_opts *o;
    kc_server *srv;
    char url[256], dir[128], pass_dir[192];
    bool dir_made; /* dir exists (mkdtemp succeeded): removed at the end */
    unsigned pass; /* 1: server sharding on, 2: off */
    kc_client *client;
    kc_cache *watch; /* Leases + Pods */
    kc_informer *pods_inf;
    pid_t pid[SHARDS_MAX_REPL];
    pthread_mutex_t mu;
    int holder[SHARDS_MAX_RANGES]; /* current holder per range (who) */
    hist_ev *leases, *writes;
    size_t n_leases, cap_leases, n_writes, cap_writes;
    shards_netns netns;                    /* --netns */
    uint64_t cut_t;                        /* a network cut is on since (0: none) */
    int cut_who;                           /* the cut replica */
    uint64_t first_acq[SHARDS_MAX_RANGES]; /* first acquisition by another since cut_t */
} shards_ctx;

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline double ms_since(uint64_t t0)
{
    return (double)(now_ns() - t0) / 1e6;
}

static inline void pause_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* ---- demo_shard_watch.c ---------------------------------------------------------------------- */

/* The parent's informers on the demo namespace's Leases (holders, history) and Pods (owner
 * writes); returns once both have synced. */
int shards_watch_start(shards_ctx *c, kc_error *err);
/* "p<pass>-replica-<i>" → i for this pass; -1 for "" or NULL, -2 otherwise. */
int shards_who_of(const shards_ctx *c, const char *ident);
/* A Pod's owner annotation (new string, free()), or NULL. */
char *shards_owner_of(const kc_obj *pod);
/* A Pod's range (top bits of its uid's hash). */
uint32_t shards_range_of(const shards_ctx *c, const kc_obj *pod);
/* Appends e to the history *v (c->mu held). */
void shards_push(hist_ev **v, size_t *n, size_t *cap, hist_ev e);
/* Writes the server accepted from a replica that did not hold the Pod's range Lease then. */
unsigned shards_stale_writes(shards_ctx *c);

#endif
