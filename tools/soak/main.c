/*
 * main.c — kcache_soak: flags, set-up and tear-down, the run, the report (human text and
 * `BENCH <metric> <value> <unit>` lines). docs/soak.md describes what runs and what is checked.
 *
 * Set-up: the embedded API server on 127.0.0.1:0 (fault PRNG seeded with --seed), one kc_client
 * without rate limit, the namespace `soak` and the barrier ConfigMap, then two sides — a cache
 * whose ConfigMap informer uses streaming lists (falling back to paged) behind a block-on-write
 * cached client, and a cache whose informer uses paged lists of 25 behind a block-on-read cached
 * client — each informer with a shadow handler. Then the writers and the fault script run until
 * --writes successful writes (or --max-seconds), and the final checks compare everything.
 *
 * Exit status: 0 when every check passed (with --plant: when the planted bug was caught), 1 when
 * a check failed or the run did not finish, 2 for bad flags.
 */
#include "soak.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const kc_gvr soak_cm = {"", "v1", "configmaps"};

#define PRINT_MAX 20

uint64_t soak_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double soak_elapsed_s(const soak *s)
{
    return (double)(soak_now_ns() - s->t0_ns) / 1e9;
}

uint64_t soak_rng_next(soak_rng *r)
{
    uint64_t z = (r->x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

unsigned soak_rng_below(soak_rng *r, unsigned n)
{
    return n ? (unsigned)(soak_rng_next(r) % n) : 0;
}

void soak_violation(soak *s, const char *check, const char *fmt, ...)
{
    unsigned long n = atomic_fetch_add(&s->printed, 1);
    if (!s->o.verbose && n >= PRINT_MAX) {
        if (n == PRINT_MAX)
            printf("VIOLATION ... (more not printed; --verbose prints every one)\n");
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&s->print_mu);
    printf("VIOLATION %s [%.2f s, after %lu restores]: ", check, soak_elapsed_s(s),
           atomic_load(&s->c.restores));
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    pthread_mutex_unlock(&s->print_mu);
    va_end(ap);
}

void soak_note(soak *s, const char *fmt, ...)
{
    if (!s->o.verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&s->print_mu);
    printf("NOTE [%.2f s, after %lu restores]: ", soak_elapsed_s(s), atomic_load(&s->c.restores));
    vprintf(fmt, ap);
    printf("\n");
    pthread_mutex_unlock(&s->print_mu);
    va_end(ap);
}

void soak_progress(soak *s, const char *fmt, ...)
{
    if (s->o.quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&s->print_mu);
    fprintf(stderr, "[%7.2f s] %6lu/%u writes: ", soak_elapsed_s(s), atomic_load(&s->c.writes),
            s->o.writes);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    pthread_mutex_unlock(&s->print_mu);
    va_end(ap);
}

/* ---- flags ----------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(
        f,
        "Usage: kcache_soak [options]\n\n"
        "Fault soak of kcache (docs/soak.md): writers create, update and delete ConfigMaps\n"
        "through a block-on-write and a block-on-read cached client while the embedded API\n"
        "server delays watch events, drops watches, injects 429/500/503, compacts and restarts\n"
        "as after a restore from backup (RVs renumbered from 1). Checks: (a) cache == server\n"
        "after quiescing, (b) no stale read after a blocking write, (c) no resurrected delete,\n"
        "(d) handler streams consistent with the stores. Prints BENCH lines.\n\n"
        "Options:\n"
        "  --writes N         successful writes to make (default 10000)\n"
        "  --writers N        writer threads, alternately block-on-write / block-on-read\n"
        "                     (default 32)\n"
        "  --keys N           ConfigMaps owned by each writer (default 8)\n"
        "  --cycles N         repetitions of the fault script (default writes/2500, >= 1)\n"
        "  --watch-delay A-B  watch event delay in ms, uniform in [A,B] (default 10-500)\n"
        "  --outage MS        length of each watch outage (default 1000)\n"
        "  --no-faults        only the watch delay: no drops, errors, compactions, restores\n"
        "  --seed N           PRNG seed of writers and server faults (default 1; 0 = clock)\n"
        "  --timeout MS       read-your-writes wait bound (default 3000)\n"
        "  --max-seconds N    fail if the writes are not done by then (default 900)\n"
        "  --plant BUG        break something on purpose and exit 0 only if a check catches\n"
        "                     it: no-wait (every cached call no_wait: checks b, c),\n"
        "                     drop-delete (handlers lose every 5th delete: check d),\n"
        "                     no-quiesce (compare before the cache caught up: check a)\n"
        "  --trace NAME       print every write and read of ConfigMap NAME (e.g. w03-k01)\n"
        "  --verbose          print every violation (default: the first %d), and a NOTE\n"
        "                     for each call that returned KC_ENOT_CAUGHT_UP\n"
        "  --quiet            no progress on stderr\n"
        "  -h, --help         this help\n",
        PRINT_MAX);
}

__attribute__((format(printf, 1, 2))) static int bad_flag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kcache_soak: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nRun 'kcache_soak --help' for usage.\n");
    return 2;
}

static bool parse_u64(const char *v, uint64_t min, uint64_t max, uint64_t *ret)
{
    char *end;
    errno = 0;
    unsigned long long x = v ? strtoull(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || *v == '-' || x < min || x > max)
        return false;
    *ret = x;
    return true;
}

static bool parse_uint(const char *v, unsigned min, unsigned max, unsigned *ret)
{
    uint64_t x;
    if (!parse_u64(v, min, max, &x))
        return false;
    *ret = (unsigned)x;
    return true;
}

static bool parse_delay(const char *v, unsigned *lo, unsigned *hi)
{
    char buf[64];
    if (!v || strlen(v) >= sizeof(buf))
        return false;
    snprintf(buf, sizeof(buf), "%s", v);
    char *dash = strchr(buf, '-');
    if (dash)
        *dash = '\0';
    return parse_uint(buf, 0, 60000, lo) && parse_uint(dash ? dash + 1 : buf, *lo, 60000, hi);
}

static bool parse_plant(const char *v, soak_plant *ret)
{
    static const char *const names[] = {[PLANT_NO_WAIT] = "no-wait",
                                        [PLANT_DROP_DELETE] = "drop-delete",
                                        [PLANT_NO_QUIESCE] = "no-quiesce"};
    for (int i = PLANT_NO_WAIT; v && i <= PLANT_NO_QUIESCE; i++)
        if (!strcmp(v, names[i]))
            return (*ret = (soak_plant)i), true;
    return false;
}

/* Returns -1 to run, else the exit status. */
static int parse_flags(int argc, char **argv, soak_opts *o)
{
    *o = (soak_opts){.writes = 10000,
                     .writers = 32,
                     .keys = 8,
                     .delay_min = 10,
                     .delay_max = 500,
                     .faults = true,
                     .seed = 1,
                     .timeout_ms = 3000,
                     .max_s = 900,
                     .outage_ms = 1000};
    unsigned timeout = 3000;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        const char *eq = strchr(f, '=');
        char name[32];
        snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - f) : (int)strlen(f), f);
        bool takes = strcmp(name, "--no-faults") && strcmp(name, "--verbose") &&
                     strcmp(name, "--quiet") && strcmp(name, "-h") && strcmp(name, "--help");
        const char *v = eq ? eq + 1 : (takes && i + 1 < argc ? argv[++i] : NULL);
        bool ok = true;
        if (!strcmp(name, "-h") || !strcmp(name, "--help"))
            return usage(stdout), 0;
        else if (!takes && eq)
            return bad_flag("%s: takes no value", name);
        else if (!strcmp(name, "--no-faults"))
            o->faults = false;
        else if (!strcmp(name, "--verbose"))
            o->verbose = true;
        else if (!strcmp(name, "--quiet"))
            o->quiet = true;
        else if (!strcmp(name, "--writes"))
            ok = parse_uint(v, 1, 100000000, &o->writes);
        else if (!strcmp(name, "--writers"))
            ok = parse_uint(v, 1, 256, &o->writers);
        else if (!strcmp(name, "--keys"))
            ok = parse_uint(v, 1, 64, &o->keys);
        else if (!strcmp(name, "--cycles"))
            ok = parse_uint(v, 1, 10000, &o->cycles);
        else if (!strcmp(name, "--watch-delay"))
            ok = parse_delay(v, &o->delay_min, &o->delay_max);
        else if (!strcmp(name, "--outage"))
            ok = parse_uint(v, 0, 600000, &o->outage_ms);
        else if (!strcmp(name, "--seed"))
            ok = parse_u64(v, 0, UINT64_MAX, &o->seed);
        else if (!strcmp(name, "--timeout"))
            ok = parse_uint(v, 1, 600000, &timeout);
        else if (!strcmp(name, "--max-seconds"))
            ok = parse_uint(v, 1, 1000000, &o->max_s);
        else if (!strcmp(name, "--trace"))
            ok = (o->trace = v) != NULL;
        else if (!strcmp(name, "--plant"))
            ok = parse_plant(v, &o->plant);
        else
            return bad_flag("%s: unknown flag", name);
        if (!ok)
            return v ? bad_flag("%s: bad value '%s' (see --help)", name, v)
                     : bad_flag("%s: missing value", name);
    }
    o->timeout_ms = timeout;
    if (!o->cycles)
        o->cycles = o->writes / 2500 ? o->writes / 2500 : 1;
    if (o->cycles > o->writes)
        return bad_flag("--cycles: %u is more than --writes %u", o->cycles, o->writes);
    if (!o->seed)
        o->seed = soak_now_ns() | 1;
    return -1;
}

/* ---- set-up ---------------------------------------------------------------------------------- */

static int fail(const char *what, int rc, const kc_error *e)
{
    fprintf(stderr, "kcache_soak: %s: %s%s%s\n", what, kc_errno_name(rc),
            e && e->message ? ": " : "", e && e->message ? e->message : "");
    return rc;
}

static int server_up(soak *s)
{
    kc_error e = KC_ERROR_INIT;
    kc_server_opts so = {.listen = "127.0.0.1:0",
                         .quiet = true,
                         .random_seed = s->o.seed,
                         .bookmark_interval_ms = 500};
    kc_server_faults faults = {.watch_delay_min_ms = s->o.delay_min,
                               .watch_delay_max_ms = s->o.delay_max};
    so.faults = &faults;
    so.faults_size = sizeof faults;
    int rc = kc_server_new(&so, &s->srv, &e);
    if (rc == 0)
        rc = kc_server_start(s->srv, &e);
    if (rc == 0)
        rc = kc_config_from_url(kc_server_url(s->srv), NULL, NULL, &s->cfg, &e);
    kc_client_opts co = {.qps = -1};
    if (rc == 0)
        rc = kc_client_new(s->cfg, &co, &s->client, &e);
    static const kc_gvr ns = {"", "v1", "namespaces"};
    static const char body[] = "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
                               "\"metadata\":{\"name\":\"" SOAK_NS "\"}}";
    if (rc == 0)
        rc = kc_client_create(s->client, &ns, NULL, body, sizeof(body) - 1, NULL, NULL, &e);
    char uid[SOAK_UID_MAX], rv[SOAK_RV_MAX];
    if (rc == 0)
        rc = soak_barrier_write(s, uid, rv);
    if (rc < 0)
        fail("server set-up", rc, &e);
    kc_error_clear(&e);
    return rc;
}

static int side_up(soak *s, int i)
{
    soak_side *sd = &s->side[i];
    sd->name = i == 0 ? "bow" : "bor";
    sd->mode = i == 0 ? KC_RYW_BLOCK_ON_WRITE : KC_RYW_BLOCK_ON_READ;
    kc_informer_opts defaults = {.backoff_initial_ms = 50, .backoff_max_ms = 1000};
    if (i == 0) {
        defaults.list_mode = KC_INFORMER_LIST_AUTO;
        defaults.watch_timeout_s = 5;
    } else {
        defaults.list_mode = KC_INFORMER_LIST_PAGED;
        defaults.page_size = 25; /* several pages; each can fail (2 % x 3 on LIST) */
    }
    kc_cache_opts co = {.defaults = &defaults, .defaults_size = sizeof defaults};
    kc_error e = KC_ERROR_INIT;
    int rc = kc_cache_new(s->client, &co, &sd->cache, &e);
    if (rc == 0)
        rc = kc_cache_get_informer(sd->cache, &soak_cm, NULL, &sd->inf, &e);
    if (rc == 0) {
        sd->store = kc_informer_store(sd->inf);
        rc = kc_informer_wait_synced(sd->inf, 30000, &e);
    }
    if (rc == 0)
        rc = soak_shadow_new(s, sd, &sd->shadow);
    kc_informer_handlers h = soak_shadow_handlers;
    h.ud = sd->shadow;
    if (rc == 0)
        rc = kc_informer_add_handler(sd->inf, &h, NULL, &sd->reg, &e);
    if (rc == 0)
        rc = kc_informer_reg_wait_synced(sd->reg, 30000, NULL);
    kc_cached_client_opts cco = {.mode = sd->mode, .timeout_ms = s->o.timeout_ms};
    if (rc == 0)
        rc = kc_cached_client_new(s->client, sd->cache, &cco, &sd->cc, &e);
    if (rc < 0)
        fail(sd->name, rc, &e);
    kc_error_clear(&e);
    return rc;
}

static void teardown(soak *s)
{
    for (int i = 0; i < SOAK_SIDES; i++)
        if (s->side[i].cache)
            kc_cache_stop(s->side[i].cache);
    for (int i = 0; i < SOAK_SIDES; i++) {
        kc_cached_client_free(s->side[i].cc);
        kc_cache_free(s->side[i].cache); /* joins the dispatchers: shadows are unused after */
        soak_shadow_free(s->side[i].shadow);
    }
    soak_writers_free(s);
    kc_client_free(s->client);
    kc_config_unref(s->cfg);
    kc_server_free(s->srv);
}

/* ---- the run --------------------------------------------------------------------------------- */

/* Start the script and the writers; wait for the writers (bounded by --max-seconds). Returns
 * false when the run did not finish in time. */
static bool run(soak *s)
{
    pthread_t script, *th = calloc(s->o.writers, sizeof(*th));
    if (!th)
        return false;
    s->running = s->o.writers;
    pthread_create(&script, NULL, soak_script_main, s);
    for (unsigned i = 0; i < s->o.writers; i++)
        pthread_create(&th[i], NULL, soak_writer_main, soak_writer_at(s, i));
    uint64_t deadline = s->t0_ns + (uint64_t)s->o.max_s * 1000000000u;
    struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
    pthread_mutex_lock(&s->mu);
    while (s->running > 0 && soak_now_ns() < deadline)
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    bool finished = s->running == 0;
    pthread_mutex_unlock(&s->mu);
    if (!finished) {
        printf("FAIL: %lu of %u writes after --max-seconds %u; stopping\n",
               atomic_load(&s->c.writes), s->o.writes, s->o.max_s);
        soak_stop(s);
    }
    for (unsigned i = 0; i < s->o.writers; i++)
        pthread_join(th[i], NULL);
    soak_stop(s); /* the script: nothing left to wait for */
    pthread_join(script, NULL);
    free(th);
    return finished;
}

int main(int argc, char **argv)
{
    soak *s = calloc(1, sizeof(*s));
    if (!s)
        return 1;
    int rc = parse_flags(argc, argv, &s->o);
    if (rc >= 0) {
        free(s);
        return rc;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->print_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    atomic_store(&s->wake_at, UINT64_MAX);
    s->t0_ns = soak_now_ns();
    soak_print_header(s);

    bool ok = server_up(s) == 0;
    for (int i = 0; ok && i < SOAK_SIDES; i++)
        ok = side_up(s, i) == 0;
    ok = ok && soak_writers_new(s) == 0;
    int status = 1;
    if (ok) {
        bool finished = run(s);
        double run_s = soak_elapsed_s(s);
        pthread_mutex_lock(&s->mu);
        s->stop = false; /* the final checks re-read keys */
        pthread_mutex_unlock(&s->mu);
        soak_progress(s, "quiescing: faults off, final barrier, final checks");
        soak_final_checks(s);
        status = soak_report(s, run_s, finished);
    }
    teardown(s);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->print_mu);
    free(s);
    return status;
}
