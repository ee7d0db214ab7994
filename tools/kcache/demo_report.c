/*
 * demo_report.c — `kcache demo` output: percentiles, the one-line progress on a terminal, the
 * table a person reads at a glance, and the --json document (format in docs/read-your-writes.md).
 */
#include "cli.h"
#include "demo_common.h"

#include <stdio.h>
#include <stdlib.h>

const char *const demo_mode_names[DEMO_MODES] = {"no_wait", "block_on_write", "block_on_read"};
const char *const demo_mode_labels[DEMO_MODES] = {"no wait", "block-on-write", "block-on-read"};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double demo_percentile(double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_double);
    size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return v[rank - 1];
}

/* ---- progress -------------------------------------------------------------------------------- */

void demo_progress_start(demo_progress *p, bool enabled, const char *label, unsigned total)
{
    p->enabled = enabled;
    p->label = label;
    p->total = total;
    atomic_store(&p->done, 0);
    atomic_store(&p->last_ns, 0);
}

void demo_progress_tick(demo_progress *p)
{
    unsigned done = atomic_fetch_add(&p->done, 1) + 1;
    if (!p->enabled)
        return;
    uint64_t now = kc__cli_now_ns(), last = atomic_load(&p->last_ns);
    if (done != p->total && now - last < 100 * KC_CLI_NS_PER_MS)
        return;
    if (!atomic_compare_exchange_strong(&p->last_ns, &last, now))
        return; /* another thread prints this round */
    fprintf(stderr, "\r\033[K  %s %u/%u", p->label, done, p->total);
    fflush(stderr);
}

void demo_progress_end(demo_progress *p)
{
    if (!p->enabled)
        return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
}

/* ---- table ----------------------------------------------------------------------------------- */

static void print_ms(double ms)
{
    if (ms >= 100)
        printf(" %8.0f ms", ms);
    else if (ms >= 1)
        printf(" %8.1f ms", ms);
    else
        printf(" %8.2f ms", ms);
}

static void print_controller(const demo_results *r);

void demo_print_table(const demo_results *r, const demo_opts *o)
{
    if (r->embedded)
        printf("kcache demo — read-your-writes on the embedded API server, watch events delayed "
               "%u–%u ms\n\n",
               r->delay_min_ms, r->delay_max_ms);
    else
        printf("kcache demo — read-your-writes against %s\n(client-side rate limit in force: the "
               "client's defaults, as a controller would run)\n\n",
               o->kubeconfig);

    printf("1. Create then read: each Secret is read back through the cache right after its "
           "create\n   (%u per mode, %u concurrent workers; wait bound %lld ms)\n\n",
           r->modes[0].n, r->workers, (long long)o->timeout_ms);
    printf("   %-15s %13s %11s %11s %11s %8s\n", "mode", "stale reads", "write p50", "write p99",
           "read p99", "time");
    for (int m = 0; m < DEMO_MODES; m++) {
        const demo_mode_result *x = &r->modes[m];
        char stale[32];
        snprintf(stale, sizeof(stale), "%u / %u", x->stale, x->n);
        printf("   %-15s %13s", demo_mode_labels[m], stale);
        print_ms(x->write_p50_ms);
        print_ms(x->write_p99_ms);
        print_ms(x->read_p99_ms);
        printf(" %6.1f s", x->seconds);
        if (x->not_caught_up || x->errors)
            printf("   (%u not caught up, %u errors)", x->not_caught_up, x->errors);
        printf("\n");
    }
    bool ok = r->modes[DEMO_BLOCK_ON_WRITE].stale == 0 && r->modes[DEMO_BLOCK_ON_READ].stale == 0;
    printf(
        "   (stale reads: reads that did not see the write just made; p50 / p99: half / 99 %% of\n"
        "   the writes or reads took at most this long; no wait: read the cache at once;\n"
        "   block-on-write: the create returns once the cache has it; block-on-read: the read\n"
        "   waits until the cache has caught up)\n");
    printf("   → %s\n\n",
           ok ? "no stale read with either wait mode; without waiting the cache lags the writes"
              : "STALE READS WITH A WAIT MODE — this is a bug");

    printf("2. Discovery: %u PersistentVolumes read one by one (mig-controller saw 10.01 s vs "
           "354 ms)\n\n",
           r->disc_n);
    printf("   %-34s %12.6f s\n", "one GET each from the API server", r->disc_api_s);
    printf("   %-34s %12.6f s\n", "the same reads from the cache", r->disc_cache_s);
    printf("   %-34s %12.0f ×\n\n", "the cache is faster by", r->disc_ratio);

    printf("3. Readiness: every cache synced %.1f ms after start\n", r->synced_ms);
    if (r->ctrl_done)
        print_controller(r);
    if (r->shards_done) {
        printf("\n");
        demo_shards_print_section(&r->shards);
        printf("   → %s\n", demo_shards_clean(&r->shards)
                                ? "no stale write, no key reconciled by two replicas at once, "
                                  "every Pod owned by its range's holder"
                                : "A STALE WRITE, AN OVERLAP OR AN UNOWNED POD — this is a bug");
    }
    if (r->wh_done)
        demo_webhook_print_section(&r->wh);
}

/* Section 4 of the table. */
static void print_controller(const demo_results *r)
{
    printf("\n4. Controller: %u Migrations; each reconcile creates a Secret owned by the "
           "Migration,\n   reads it back from the cache and sets status Ready (%u workers; "
           "its own embedded\n   server, watch events delayed %u–%u ms)\n\n",
           r->ctrl_n, r->workers, r->delay_min_ms, r->delay_max_ms);
    printf("   %-38s %8s %11s\n", "run", "failed", "reconciles");
    printf("   %-38s %8u %11u\n", "read-your-writes off (stale Secret)",
           r->ctrl_failed_stale_no_ryw, r->ctrl_reconciles_no_ryw);
    printf("   %-38s %8u %11u\n", "read-your-writes on (stale Secret)", r->ctrl_failed_stale_ryw,
           r->ctrl_reconciles_ryw);
    printf("   %-38s %8u %11u\n", "restarted over existing (before sync)", r->ctrl_before_sync,
           r->ctrl_reconciles_restart);
    printf("   (failed: reconciles that did not find the Secret they had just created)\n");
    printf("   all Ready %.0f ms after the first create; reconcile p99 %.1f ms (read-your-writes "
           "on)\n",
           r->ctrl_all_ready_ms, r->ctrl_reconcile_p99_ms);
    bool ctrl_ok = r->ctrl_failed_stale_ryw == 0 && r->ctrl_before_sync == 0;
    printf("   → %s\n",
           ctrl_ok
               ? "with read-your-writes no reconcile missed its own Secret, and none ran before "
                 "the caches synced"
               : "A STALE READ OR A RECONCILE BEFORE SYNC — this is a bug");
}

/* ---- json ------------------------------------------------------------------------------------ */

void demo_print_json(const demo_results *r)
{
    printf("{\"create_then_read\":{");
    for (int m = 0; m < DEMO_MODES; m++) {
        const demo_mode_result *x = &r->modes[m];
        printf("%s\"%s\":{\"n\":%u,\"stale\":%u,\"p50_ms\":%.3f,\"p99_ms\":%.3f}", m ? "," : "",
               demo_mode_names[m], x->n, x->stale, x->write_p50_ms, x->write_p99_ms);
    }
    printf("},\"discovery\":{\"n\":%u,\"api_s\":%.6f,\"cache_s\":%.6f,\"ratio\":%.1f}", r->disc_n,
           r->disc_api_s, r->disc_cache_s, r->disc_ratio);
    printf(",\"readiness\":{\"synced_ms\":%.3f}", r->synced_ms);
    if (r->ctrl_done)
        printf(",\"controller\":{\"n\":%u,\"failed_stale_no_ryw\":%u,\"failed_stale_ryw\":%u,"
               "\"reconciled_before_sync\":%u,\"all_ready_ms\":%.1f,\"reconcile_p99_ms\":%.3f}",
               r->ctrl_n, r->ctrl_failed_stale_no_ryw, r->ctrl_failed_stale_ryw,
               r->ctrl_before_sync, r->ctrl_all_ready_ms, r->ctrl_reconcile_p99_ms);
    if (r->shards_done) {
        putchar(',');
        demo_shards_print_json(&r->shards);
    }
    if (r->wh_done) {
        putchar(',');
        demo_webhook_print_json(&r->wh);
    }
    /* The watch delay is injected by the embedded server only: against a real cluster there is
     * none to report (the cluster's own event latency is what the figures above include). */
    if (r->embedded)
        printf(",\"server\":\"embedded\",\"watch_delay_ms\":[%u,%u]}\n", r->delay_min_ms,
               r->delay_max_ms);
    else
        printf(",\"server\":\"kubeconfig\"}\n");
}

/* ---- section 6: webhook ---------------------------------------------------------------------- */

bool demo_webhook_clean(const demo_wh_result *w)
{
    return w->wrong_gated == 0 && w->failed_gated == 0 && w->failed_rotation == 0 && w->rotated;
}

void demo_webhook_print_section(const demo_wh_result *w)
{
    printf(
        "\n6. Webhook: %u admissions per run asking \"does this Secret exist?\" of a validating\n"
        "   webhook whose cache is still listing %u Secrets (each page delayed %u ms); every\n"
        "   Secret asked for exists (its own embedded server)\n\n",
        w->n, w->secrets, w->list_delay_ms);
    printf("   %-38s %8s %10s %8s %8s\n", "run", "wrong", "not ready", "failed", "time");
    printf("   %-38s %8u %10s %8u %6.1f s\n", "gating off (no_cache_wait)", w->wrong_ungated, "-",
           w->failed_ungated, w->ungated_s);
    printf("   %-38s %8u %10u %8u %6.1f s\n", "gating on (waits for the sync)", w->wrong_gated,
           w->not_ready_gated, w->failed_gated, w->gated_s);
    printf("   %-38s %8s %10s %8u\n", "certificate rotated mid-run", "-", "-", w->failed_rotation);
    printf(
        "   (wrong: denied \"not found\" for a Secret that exists; not ready: answered 503 by\n"
        "   the not-ready policy after waiting; rotation took %.1f ms; admission p50 %.1f ms,\n"
        "   p99 %.1f ms once synced, through the API server; gated p99 %.0f ms incl. the wait)\n",
        w->rotate_ms, w->admission_p50_ms, w->admission_p99_ms, w->gated_p99_ms);
    printf("   → %s\n", demo_webhook_clean(w)
                            ? "with the gating on no answer came from a partial cache, and the "
                              "rotation failed no request"
                            : "A WRONG GATED ANSWER OR A FAILED ADMISSION — this is a bug");
}

void demo_webhook_print_json(const demo_wh_result *w)
{
    printf("\"webhook\":{\"n\":%u,\"secrets\":%u,\"list_delay_ms\":%u,\"wrong_ungated\":%u,"
           "\"failed_ungated\":%u,\"wrong_gated\":%u,\"not_ready_gated\":%u,\"failed_gated\":%u,"
           "\"failed_during_rotation\":%u,\"rotated\":%s,\"rotate_ms\":%.1f,"
           "\"ungated_s\":%.3f,\"gated_s\":%.3f,\"gated_p99_ms\":%.1f,"
           "\"admission_p50_ms\":%.3f,\"admission_p99_ms\":%.3f}",
           w->n, w->secrets, w->list_delay_ms, w->wrong_ungated, w->failed_ungated, w->wrong_gated,
           w->not_ready_gated, w->failed_gated, w->failed_rotation, w->rotated ? "true" : "false",
           w->rotate_ms, w->ungated_s, w->gated_s, w->gated_p99_ms, w->admission_p50_ms,
           w->admission_p99_ms);
}
