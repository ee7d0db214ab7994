/*
 * demo_shards.h — `kcache demo shards`: R replica processes of a sharded controller over the
 * embedded API server (demo_shards.c: the parent — server, replicas, faults, measurements;
 * demo_shard_watch.c: the parent's view of Leases and Pods; demo_shard_replica.c: one replica;
 * demo_shard_check.c: the overlap check over the replicas' logs; demo_shard_netns.c: the
 * network-cut fault and its check).
 */
#ifndef KC_DEMO_SHARDS_H
#define KC_DEMO_SHARDS_H

#include "kcache/client.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SHARDS_NS          "demo-shards"
#define SHARDS_PREFIX      "demo"
#define SHARDS_OWNER_ANNOT "demo.kcache.io/owner"
#define SHARDS_MAX_REPL    16
#define SHARDS_MAX_RANGES  256

typedef struct shards_opts {
    unsigned replicas; /* R, default 4 */
    unsigned objects;  /* pods, default 20000 */
    unsigned ranges;   /* K, default 16 */
    int64_t ld_ms, rd_ms, rp_ms;
    bool fallback; /* also run with the server's sharding off */
    bool netns;    /* also cut the last replica off in a network namespace of its own (root) */
    bool json, progress, verbose; /* verbose: each violation and share on stderr */
} shards_opts;

/* The network cut of one pass (demo_shard_netns.c): replica `replica` runs in a network
 * namespace; its veth is taken down until its ranges are held by others (+ 2 retry periods), then
 * up again. */
typedef struct shards_cut {
    bool ran;
    unsigned replica;
    uint64_t t_cut, t_restore;       /* CLOCK_MONOTONIC ns */
    bool held[SHARDS_MAX_RANGES];    /* its ranges at the cut */
    uint64_t acq[SHARDS_MAX_RANGES]; /* first acquisition of each by another replica after the
                                       cut: the Lease's acquireTime on CLOCK_MONOTONIC; 0 none */
    double takeover_ms;              /* cut → every range of it held by others */
    double rejoin_ms;                /* link up → balanced again, it included */
    double margin_ms; /* min over its ranges of acquisition − its fence's last deadline; 0 none */
    unsigned late;    /* ranges acquired by another before its fence had passed (must be 0) */
} shards_cut;

/* One pass (server-side sharding on, or off = fallback). */
typedef struct shards_pass {
    bool ran;
    double balanced_ms;      /* replicas started → every range held, floor/ceil balanced */
    double converged_ms;     /* → every object reconciled by its range's holder */
    double ingest_share_max; /* max over replicas of bytes received ÷ one unsharded informer */
    double ingest_share[SHARDS_MAX_REPL];
    double failover_ms; /* SIGKILL → every range of the killed replica held by another */
    unsigned
        stale_leader_writes; /* writes the server accepted from a replica not holding the range */
    unsigned overlap_violations; /* reconciles of one key by two replicas at once */
    unsigned unowned_after_converge;
    unsigned reconciles;
    unsigned fenced_refusals; /* writes a replica refused itself: range not held any more */
    shards_cut cut;           /* --netns */
} shards_pass;

typedef struct shards_result {
    unsigned replicas, objects, ranges;
    int64_t lease_duration_ms;
    shards_pass on, off;
    double fallback_decode_cpu_ratio; /* client-side filter, watch stream: quarter ÷ full CPU */
    double fallback_list_decode_cpu_ratio; /* the same for the LIST body */
} shards_result;

/* The parent: run the scenario. 0, or a negative code with err saying why. */
int demo_shards_run(const shards_opts *o, shards_result *ret, kc_error *err);
void demo_shards_print(const shards_result *r, bool json);
/* The same table as section 5 of `kcache demo` (heading and indent of its other sections). */
void demo_shards_print_section(const shards_result *r);
/* "shards":{…} without surrounding braces (the section of `kcache demo --json`). */
void demo_shards_print_json(const shards_result *r);
/* No violation in any pass: stale writes, overlapping reconciles, unowned objects all 0. */
bool demo_shards_clean(const shards_result *r);

/* `kcache demo shards …` (argv[0] "shards"): exit status. */
int demo_shards_cmd(int argc, char **argv);

/* The replica process (hidden `kcache demo shards --replica …`): exit status. */
int demo_shard_replica_main(int argc, char **argv);

/* ---- demo_shard_check.c ---------------------------------------------------------------------- */

/* Reconcile intervals of every replica's log in dir (lines "R <replica> <key> <start_ns>
 * <end_ns>"): pairs of intervals of one key from two replicas that intersect; the first ten are
 * described on detail when not NULL. */
unsigned shards_check_overlap(const char *dir, unsigned replicas, unsigned *ret_reconciles,
                              FILE *detail);

/* ---- demo_shard_cpu.c ------------------------------------------------------------------------ */

/* The client-side filter's decode CPU for a quarter range ÷ full decode, on the demo's Pods as a
 * watch stream (*ret_watch) and as one LIST body (*ret_list): medians of 5 alternated runs. 0, or
 * a negative code (both -1 then). */
int shards_fallback_cpu(kc_client *cl, double *ret_watch, double *ret_list);

/* ---- demo_shard_netns.c ---------------------------------------------------------------------- */

typedef struct shards_netns {
    bool on, made;
    char ns[40], host_if[16], ns_if[16], host_ip[32];
    int fd; /* /run/netns/<ns>, for setns in the cut replica's child */
} shards_netns;

/* Namespace, veth pair and addresses; the server is to listen on n->host_ip. 0, or KC_EUNSUPPORTED
 * (not root) / KC_EIO (an `ip` step failed: err names it), nothing left behind. */
int shards_netns_setup(shards_netns *n, kc_error *err);
/* In a forked child before exec: join the namespace. 0 or -1 (errno). */
int shards_netns_enter(const shards_netns *n);
/* The namespace's end of the veth up or down; false when `ip` failed. */
bool shards_netns_link(const shards_netns *n, bool up);
void shards_netns_teardown(shards_netns *n);
/* The cut replica's fence log (DIR/replica-ID.fence, "F <range> <valid_until_ns> <at_ns>"): for
 * each range it held at the cut, its last deadline granted before the link came back against
 * w->acq; sets w->margin_ms and returns the ranges acquired too early (described on detail). */
unsigned shards_check_cut(const char *dir, shards_cut *w, unsigned ranges, FILE *detail);

#endif
