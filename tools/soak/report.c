/*
 * report.c — what the soak prints: a header naming the seed and set-up (so a failure can be
 * re-run), a summary of what happened and what each check found, and one `BENCH <metric> <value>
 * <unit>` line per figure (docs/soak.md lists them). Decides the exit status.
 */
#include "soak.h"

#include <stdlib.h>

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof(*v), cmp_d);
    size_t r = (size_t)(p / 100.0 * (double)n + 0.999999);
    return v[(r < 1 ? 1 : r > n ? n : r) - 1];
}

static const char *plant_name(soak_plant p)
{
    switch (p) {
    case PLANT_NO_WAIT:
        return "no-wait";
    case PLANT_DROP_DELETE:
        return "drop-delete";
    case PLANT_NO_QUIESCE:
        return "no-quiesce";
    default:
        return "none";
    }
}

void soak_print_header(const soak *s)
{
    const soak_opts *o = &s->o;
    printf("kcache soak: seed %llu, %u writers (%u block-on-write, %u block-on-read), %u keys "
           "each, %u writes, watch delay %u-%u ms, faults %s, %u cycle%s, timeout %lld ms%s%s\n",
           (unsigned long long)o->seed, o->writers, (o->writers + 1) / 2, o->writers / 2, o->keys,
           o->writes, o->delay_min, o->delay_max, o->faults ? "on" : "off", o->cycles,
           o->cycles == 1 ? "" : "s", (long long)o->timeout_ms, o->plant ? ", planted bug: " : "",
           o->plant ? plant_name(o->plant) : "");
    printf("re-run: kcache_soak --seed %llu --writes %u --writers %u --keys %u --cycles %u "
           "--watch-delay %u-%u --outage %u%s%s%s\n",
           (unsigned long long)o->seed, o->writes, o->writers, o->keys, o->cycles, o->delay_min,
           o->delay_max, o->outage_ms, o->faults ? "" : " --no-faults", o->plant ? " --plant " : "",
           o->plant ? plant_name(o->plant) : "");
    fflush(stdout);
}

#define C(f) atomic_load(&s->c.f)

static void latencies(soak *s, const char *metric, double *v, size_t n)
{
    printf("BENCH soak_%s_p50_ms %.1f ms\n", metric, pct(v, n, 50));
    printf("BENCH soak_%s_p99_ms %.1f ms\n", metric, pct(v, n, 99));
    free(v);
}

static void bench_lines(soak *s, double run_s, const kc_informer_status *st)
{
    printf("BENCH soak_writes %lu writes\n", C(writes));
    printf("BENCH soak_duration_s %.1f s\n", run_s);
    printf("BENCH soak_writes_per_s %.1f writes/s\n", (double)C(writes) / run_s);
    printf("BENCH soak_reads %lu reads\n", C(reads) + C(list_reads));
    printf("BENCH soak_cache_mismatches %lu keys\n", C(v_cache));
    printf("BENCH soak_stale_reads %lu reads\n", C(v_stale));
    printf("BENCH soak_resurrected_deletes %lu reads\n", C(v_resurrected));
    printf("BENCH soak_phantom_reads %lu reads\n", C(v_phantom));
    printf("BENCH soak_handler_violations %lu events\n", C(v_handler));
    printf("BENCH soak_catch_up_timeouts %lu waits\n", C(v_catch_up));
    printf("BENCH soak_write_not_caught_up %lu writes\n", C(write_not_caught_up));
    printf("BENCH soak_read_not_caught_up %lu reads\n", C(read_not_caught_up));
    printf("BENCH soak_writes_refused %lu writes\n", C(write_errors));
    printf("BENCH soak_restores %lu restarts\n", C(restores));
    printf("BENCH soak_compactions %lu compactions\n", C(compactions));
    printf("BENCH soak_relists %llu relists\n",
           (unsigned long long)(st[0].relists + st[1].relists));
    printf("BENCH soak_watch_restarts %llu watches\n",
           (unsigned long long)(st[0].watch_restarts + st[1].watch_restarts));
    printf("BENCH soak_handler_events %lu events\n", C(handler_events));
    printf("BENCH soak_rv_resets_seen %lu updates\n", C(rv_resets_seen));
    size_t n;
    double *v = soak_write_latencies(s, KC_RYW_BLOCK_ON_WRITE, &n);
    latencies(s, "bow_write", v, n);
    v = soak_write_latencies(s, KC_RYW_BLOCK_ON_READ, &n);
    latencies(s, "bor_write", v, n);
    v = soak_read_latencies(s, KC_RYW_BLOCK_ON_READ, &n);
    latencies(s, "bor_read", v, n);
}

static unsigned long caught(const soak *s)
{
    switch (s->o.plant) {
    case PLANT_NO_WAIT:
        return C(v_stale) + C(v_resurrected);
    case PLANT_DROP_DELETE:
        return C(v_handler);
    case PLANT_NO_QUIESCE:
        return C(v_cache);
    default:
        return 0;
    }
}

int soak_report(soak *s, double run_s, bool finished)
{
    kc_informer_status st[SOAK_SIDES];
    for (int i = 0; i < SOAK_SIDES; i++)
        kc_informer_get_status(s->side[i].inf, &st[i]);
    printf("writes:   %lu in %.1f s (creates %lu, by another client %lu, updates %lu, patches "
           "%lu, deletes %lu; %lu create+delete bursts)\n",
           C(writes), run_s, C(creates), C(foreign_creates), C(updates), C(patches), C(deletes),
           C(bursts));
    printf("          refused %lu (injected 429/500/503; %lu 404/409 from a stale model); not "
           "caught up: %lu writes, %lu reads\n",
           C(write_errors), C(conflicts), C(write_not_caught_up), C(read_not_caught_up));
    printf("reads:    %lu gets, %lu lists; %lu objects seen again after a delete whose wait "
           "timed out\n",
           C(reads), C(list_reads), C(late_after_timeout));
    printf("faults:   %lu restores, %lu compactions, %lu outages\n", C(restores), C(compactions),
           C(outages));
    for (int i = 0; i < SOAK_SIDES; i++)
        printf("informer: %s: relists %llu, watch restarts %llu, errors %llu, events %llu, "
               "bookmarks %llu\n",
               s->side[i].name, (unsigned long long)st[i].relists,
               (unsigned long long)st[i].watch_restarts, (unsigned long long)st[i].errors,
               (unsigned long long)st[i].events_applied, (unsigned long long)st[i].bookmarks);
    printf("handlers: %lu events, %lu RVs moving back inside reset windows\n", C(handler_events),
           C(rv_resets_seen));
    printf("checks:   (a) cache != server: %lu   (b) stale reads: %lu   (c) resurrected "
           "deletes: %lu   phantoms: %lu   (d) handler: %lu   catch-up timeouts: %lu\n",
           C(v_cache), C(v_stale), C(v_resurrected), C(v_phantom), C(v_handler), C(v_catch_up));
    const soak_before_restore *b = &s->before;
    if (b->set)
        printf("          of which before the first restore (%lu writes): (a) %lu   (b) %lu   (c) "
               "%lu   phantoms: %lu   (d) %lu\n",
               b->writes, b->cache, b->stale, b->resurrected, b->phantom, b->handler);
    bench_lines(s, run_s, st);
    unsigned long bad = C(v_cache) + C(v_stale) + C(v_resurrected) + C(v_phantom) + C(v_handler) +
                        C(v_catch_up) + C(read_errors);
    if (s->o.plant) {
        bool ok = caught(s) > 0 && finished;
        printf("%s: planted bug %s %s\n", ok ? "PASS" : "FAIL", plant_name(s->o.plant),
               ok ? "caught" : "NOT caught");
        return ok ? 0 : 1;
    }
    bool ok = finished && bad == 0;
    printf("%s: %lu violations\n", ok ? "PASS" : "FAIL", bad);
    return ok ? 0 : 1;
}
