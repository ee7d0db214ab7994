/*
 * demo_common.h — shared pieces of `kcache demo` (cmd_demo.c: flags, set-up and tear-down;
 * demo_run.c: the scenarios 1-2; demo_controller.c: scenario 4, the controller; demo_webhook.c:
 * scenario 6, the webhook; demo_report.c:
 * statistics, progress line, table and --json).
 */
#ifndef KC_DEMO_COMMON_H
#define KC_DEMO_COMMON_H

#include "demo_shards.h"

#include "kcache/cached_client.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The three create-then-read modes, in report order. */
enum { DEMO_NO_WAIT = 0, DEMO_BLOCK_ON_WRITE = 1, DEMO_BLOCK_ON_READ = 2, DEMO_MODES = 3 };

typedef struct demo_opts {
    unsigned n;         /* Secrets per mode */
    unsigned n_pv;      /* PersistentVolumes for discovery */
    unsigned n_ctrl;    /* Migrations of the controller scenario; 0 = skip it */
    unsigned n_shards;  /* Pods of the scale-out scenario (embedded only); 0 = skip it */
    unsigned n_webhook; /* admissions per run of the webhook scenario; 0 = skip it */
    unsigned workers;   /* concurrent writer threads per mode (and reconcile workers) */
    unsigned delay_min_ms, delay_max_ms;
    int64_t timeout_ms; /* read-your-writes bound */
    const char *kubeconfig;
    bool json;
    bool progress; /* one-line progress on stderr */
} demo_opts;

typedef struct demo_mode_result {
    unsigned n;             /* creates attempted */
    unsigned stale;         /* reads right after the create that missed it or saw an older RV */
    unsigned not_caught_up; /* calls that returned KC_ENOT_CAUGHT_UP */
    unsigned errors;        /* creates or reads that failed outright */
    double write_p50_ms, write_p99_ms;
    double read_p50_ms, read_p99_ms;
    double seconds; /* wall time of the mode */
} demo_mode_result;

/* Scenario 6 (demo_webhook.c): admissions while the webhook's cache syncs, and a rotation. */
typedef struct demo_wh_result {
    unsigned n;                                          /* admissions per run */
    unsigned secrets;                                    /* Secrets the webhook's cache lists */
    unsigned list_delay_ms;                              /* per page of that LIST */
    unsigned wrong_ungated, failed_ungated;              /* no_cache_wait: partial cache */
    unsigned wrong_gated, not_ready_gated, failed_gated; /* gated: waited, or the policy */
    unsigned failed_rotation;                            /* any non-admission, mid-rotation */
    bool rotated;                                        /* the rotation succeeded */
    double ungated_s, gated_s, rotate_ms;
    double gated_p99_ms, admission_p50_ms, admission_p99_ms;
} demo_wh_result;

typedef struct demo_results {
    bool embedded;
    unsigned workers;
    unsigned delay_min_ms, delay_max_ms;
    demo_mode_result modes[DEMO_MODES];
    unsigned disc_n;
    double disc_api_s, disc_cache_s, disc_ratio;
    double synced_ms;
    /* scenario 4 (demo_controller.c) */
    bool ctrl_done;
    unsigned ctrl_n;
    unsigned ctrl_failed_stale_no_ryw, ctrl_failed_stale_ryw, ctrl_before_sync;
    unsigned ctrl_reconciles_no_ryw, ctrl_reconciles_ryw, ctrl_reconciles_restart;
    double ctrl_all_ready_ms, ctrl_reconcile_p99_ms;
    /* scenario 5: `kcache demo shards`, small (demo_shards.c) */
    bool shards_done;
    shards_result shards;
    /* scenario 6: webhook (demo_webhook.c) */
    bool wh_done;
    demo_wh_result wh;
} demo_results;

/* What the scenarios run against (set up by cmd_demo.c). */
typedef struct demo_env {
    kc_client *client;
    kc_cache *cache;
    kc_cached_client *cc[DEMO_MODES]; /* one cached client per mode over the same cache */
    const char *ns;                   /* namespace of the Secrets */
    const char *pv_selector;          /* label selector of the demo's PVs; NULL = every PV */
    const char *run_id;               /* unique per run: name prefix */
} demo_env;

extern const char *const demo_mode_names[DEMO_MODES];  /* "no_wait", … (JSON keys) */
extern const char *const demo_mode_labels[DEMO_MODES]; /* "no wait", … (table) */
extern const kc_gvr demo_secrets, demo_pvs, demo_namespaces;

/* Scenario 1 for one mode. 0 or a negative code (err says why) for a set-up failure. */
int demo_create_then_read(const demo_env *env, const demo_opts *o, int mode, demo_mode_result *ret,
                          kc_error *err);
/* Scenario 2: read every demo PV one by one through API GETs, then through the cache. */
int demo_discovery(const demo_env *env, const demo_opts *o, demo_results *ret, kc_error *err);

/* Scenario 4: the Migration controller with read-your-writes off, on, and restarted over existing
 * objects, on its own embedded server. 0 or a negative code (err says why). */
int demo_controller(const demo_opts *o, demo_results *ret, kc_error *err);

/* Scenario 6: a validating webhook reading a syncing cache, ungated and gated, then a certificate
 * rotation under load, on its own embedded server. 0 or a negative code (err says why). */
int demo_webhook(const demo_opts *o, demo_wh_result *ret, kc_error *err);
/* No wrong answer with the gating on, no failed admission (rotation included), rotated. */
bool demo_webhook_clean(const demo_wh_result *w);

/* ---- demo_report.c --------------------------------------------------------------------------- */

/* p-th percentile (0..100, nearest rank) of n values (sorted in place). 0 when n == 0. */
double demo_percentile(double *v, size_t n, double p);

/* A decimal unsigned argument in [min, max] (no sign, no trailing text) into *ret (cmd_demo.c). */
bool demo_parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret);

/* Progress line on stderr (only when enabled): "\r<label> done/total" at most every 100 ms. */
typedef struct demo_progress {
    bool enabled;
    const char *label;
    unsigned total;
    atomic_uint done;
    _Atomic uint64_t last_ns;
} demo_progress;
void demo_progress_start(demo_progress *p, bool enabled, const char *label, unsigned total);
void demo_progress_tick(demo_progress *p);
void demo_progress_end(demo_progress *p);

void demo_print_table(const demo_results *r, const demo_opts *o);
void demo_print_json(const demo_results *r);
/* Section 6 of the table; its --json member (without a leading comma). */
void demo_webhook_print_section(const demo_wh_result *w);
void demo_webhook_print_json(const demo_wh_result *w);

#endif
