/*
 * soak.h — the fault soak (`make soak`, `kcache_soak`): shared types of its parts.
 *
 * The soak runs N writer threads against the embedded API server while a fault script drops
 * watches, delays events, injects 429/500/503, compacts and restarts the server as after a
 * restore from backup (RVs go back). Two caches watch the same ConfigMaps: one behind a
 * block-on-write cached client, one behind a block-on-read cached client, each informer with a
 * handler that replays its stream into a shadow map. It counts violations of four promises
 * (docs/soak.md): (a) cache == server after quiescing, (b) no stale read after a blocking write,
 * (c) no resurrected delete, (d) a handler stream consistent with the store.
 *
 * Parts: main.c (flags, set-up, the run), report.c (summary, BENCH lines), writer.c (writers and
 * their read checks), script.c (the fault script, the writer pause gate, restores), shadow.c
 * (handler shadows), check.c (server snapshots, barriers, cache == server). Only the public API
 * (kcache/…) is used: the soak is what any user could write from the headers.
 */
#ifndef KC_SOAK_H
#define KC_SOAK_H

#include "kcache/cached_client.h"
#include "kcache/rv.h"
#include "kcache/server.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SOAK_NS      "soak"
#define SOAK_BARRIER "soak-barrier"
#define SOAK_UID_MAX 64
#define SOAK_RV_MAX  32
#define SOAK_SIDES   2

extern const kc_gvr soak_cm; /* v1 configmaps */

/* What --plant breaks on purpose, to show that a check can fail (the run then exits 0 only when
 * the matching check reported a violation). */
typedef enum soak_plant {
    PLANT_NONE = 0,
    PLANT_NO_WAIT,     /* every cached write and read with no_wait: (b) and (c) must fire */
    PLANT_DROP_DELETE, /* the shadow handlers ignore every 5th delete: (d) must fire */
    PLANT_NO_QUIESCE,  /* compare cache and server without waiting for the cache: (a) must fire */
} soak_plant;

typedef struct soak_opts {
    unsigned writes;    /* successful writes to reach (the run stops a little after) */
    unsigned writers;   /* writer threads, alternately block-on-write and block-on-read */
    unsigned keys;      /* ConfigMaps owned by each writer */
    unsigned cycles;    /* repetitions of the fault script over the run */
    unsigned delay_min; /* watch event delay (ms) */
    unsigned delay_max; /*   "   */
    bool faults;        /* run the fault script (else only the delay) */
    uint64_t seed;      /* PRNG seed of writers and server */
    int64_t timeout_ms; /* read-your-writes bound of both cached clients */
    unsigned max_s;     /* give up (and fail) after this many seconds */
    unsigned outage_ms; /* length of each watch outage */
    soak_plant plant;
    const char *trace; /* --trace: print every write and read of this key */
    bool verbose;      /* print every violation (else the first 20) */
    bool quiet;        /* no progress on stderr */
} soak_opts;

/* Counters, all monotonic. Violations are the v_ fields. */
typedef struct soak_counters {
    atomic_ulong writes, creates, foreign_creates, updates, patches, deletes, bursts;
    atomic_ulong write_errors, conflicts, write_not_caught_up;
    atomic_ulong reads, list_reads, read_not_caught_up, read_errors;
    atomic_ulong late_after_timeout; /* objects seen after a delete whose wait timed out */
    atomic_ulong handler_events, rv_resets_seen;
    atomic_ulong compactions, restores, outages;
    atomic_ulong v_stale, v_resurrected, v_phantom, v_cache, v_handler, v_catch_up;
} soak_counters;

/* Violations counted before the first restore (a bug there can hide behind what follows). */
typedef struct soak_before_restore {
    bool set;
    unsigned long writes, stale, resurrected, phantom, cache, handler;
} soak_before_restore;

typedef struct soak_shadow soak_shadow;
typedef struct soak_writer soak_writer;

/* One cache with its cached client, informer, store and handler shadow. */
typedef struct soak_side {
    const char *name; /* "bow" or "bor" */
    kc_ryw_mode mode;
    kc_cache *cache;
    kc_cached_client *cc;
    kc_informer *inf;
    kc_store *store;
    kc_informer_reg *reg;
    soak_shadow *shadow;
} soak_side;

typedef struct soak {
    soak_opts o;
    kc_server *srv;
    kc_config *cfg;
    kc_client *client; /* plain client: foreign writes, live reads, barriers */
    soak_side side[SOAK_SIDES];
    soak_writer *w;
    soak_counters c;
    soak_before_restore before; /* written by the script thread, read after it is joined */
    uint64_t t0_ns;

    /* pause gate and progress (mu guards pause, parked, running, stop) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool pause, stop;
    unsigned parked, running;
    atomic_uint_fast64_t wake_at; /* writers signal cv when writes reaches it */

    atomic_bool reset_window; /* an RV reset is being relisted: RVs may go back */
    pthread_mutex_t print_mu;
    atomic_ulong printed;
} soak;

/* ---- main.c ---------------------------------------------------------------------------------- */
uint64_t soak_now_ns(void);
double soak_elapsed_s(const soak *s);
/* Report one violation (counted by the caller) with its details; printed up to a bound. */
void soak_violation(soak *s, const char *check, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void soak_progress(soak *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* With --verbose: an event worth seeing that is not a violation (KC_ENOT_CAUGHT_UP). */
void soak_note(soak *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* splitmix64 */
typedef struct soak_rng {
    uint64_t x;
} soak_rng;
uint64_t soak_rng_next(soak_rng *r);
unsigned soak_rng_below(soak_rng *r, unsigned n);

/* ---- report.c -------------------------------------------------------------------------------- */
void soak_print_header(const soak *s);
/* Summary and BENCH lines; returns the exit status. */
int soak_report(soak *s, double run_s, bool finished);

/* ---- writer.c -------------------------------------------------------------------------------- */
int soak_writers_new(soak *s);
void soak_writers_free(soak *s);
void *soak_writer_main(void *arg);
soak_writer *soak_writer_at(soak *s, unsigned i);
/* Latencies (ms) of the writers' successful cached writes of one mode; caller frees. */
double *soak_write_latencies(soak *s, kc_ryw_mode mode, size_t *ret_n);
double *soak_read_latencies(soak *s, kc_ryw_mode mode, size_t *ret_n);

/* ---- check.c --------------------------------------------------------------------------------- */
typedef struct soak_item {
    char key[128]; /* "ns/name" */
    char uid[SOAK_UID_MAX];
    char rv[SOAK_RV_MAX];
} soak_item;

typedef struct soak_snap {
    soak_item *items; /* sorted by key */
    size_t n;
} soak_snap;

/* Live LIST of every ConfigMap (retried while faults answer). 0 or a KC_E code. */
int soak_snap_server(soak *s, soak_snap *ret);
/* The store's ConfigMaps. */
int soak_snap_store(kc_store *st, soak_snap *ret);
void soak_snap_free(soak_snap *sn);
void soak_snap_sort(soak_snap *sn);
const soak_item *soak_snap_find(const soak_snap *sn, const char *key);
/* Differences between a and b (keys, uids, RVs), each reported as a violation of check. */
size_t soak_snap_diff(soak *s, const char *check, const soak_snap *a, const char *la,
                      const soak_snap *b, const char *lb);
/* Write the barrier ConfigMap (create or update) through the plain client; its uid and RV. */
int soak_barrier_write(soak *s, char *ret_uid, char *ret_rv);
/* Wait until the side's store holds the barrier at exactly uid and rv: 0 or KC_ETIMEOUT. */
int soak_barrier_wait(soak *s, soak_side *sd, const char *uid, const char *rv, int64_t timeout_ms);
/* Faults off, barrier, compare each store with the server (check a) and each shadow with its
 * store (check d). */
void soak_final_checks(soak *s);
/* writer.c: while every writer is parked, set their models to the server's state (fresh). */
void soak_writers_refresh(soak *s, const soak_snap *server);

/* ---- shadow.c -------------------------------------------------------------------------------- */
int soak_shadow_new(soak *s, soak_side *sd, soak_shadow **ret);
void soak_shadow_free(soak_shadow *sh);
extern const kc_informer_handlers soak_shadow_handlers; /* ud = the soak_shadow */
/* Number of changes delivered so far; wait until it passes seen (0) or the deadline (KC_ETIMEOUT).
 */
uint64_t soak_shadow_changes(soak_shadow *sh);
int soak_shadow_wait_change(soak_shadow *sh, uint64_t seen, uint64_t deadline_ns);
/* Copy the shadow's contents as a snapshot. */
int soak_shadow_snap(soak_shadow *sh, soak_snap *ret);

/* ---- script.c -------------------------------------------------------------------------------- */
void *soak_script_main(void *arg);
/* Writers: block while paused; returns false once the run is stopping. */
bool soak_gate(soak *s);
void soak_count_write(soak *s);
/* A writer thread ends (the script stops waiting for it to park). */
void soak_writer_done(soak *s);
/* Stop everything (deadline or end); wakes the script and the writers. */
void soak_stop(soak *s);
bool soak_stopping(soak *s);

#endif
