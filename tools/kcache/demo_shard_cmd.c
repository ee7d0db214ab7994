/*
 * demo_shard_cmd.c — the front of `kcache demo shards`: flags, the run (demo_shards.c) and its
 * report, as a table or as JSON ("shards":{…}, fields in docs/scale-out.md). The hidden
 * `--replica` form is the replica process (demo_shard_replica.c). Exit status: 0 when every
 * check held (no stale write, no overlap, nothing unowned after convergence, in every pass), 1
 * otherwise or on a failure, 2 for bad flags.
 */
#include "cli.h"
#include "demo_common.h"
#include "demo_shards.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: kcache demo shards [options]\n\n"
            "Runs R replica processes of a sharded controller over the embedded API server:\n"
            "hash ranges shared through Leases, server-side sharded list and watch, a replica\n"
            "killed and another paused past its lease; then the same with the server ignoring\n"
            "shardSelector (client-side filtering). Prints the time to a balanced assignment,\n"
            "each replica's share of the bytes, the failover time, and the violations found\n"
            "(writes by a replica not holding the range, overlapping reconciles, objects left\n"
            "unowned), which must all be 0.\n\n"
            "Options:\n"
            "  --replicas R      replica processes (default 4, at most %d)\n"
            "  --objects N       Pods on the server (default 20000)\n"
            "  --ranges K        hash ranges, a power of two (default 16, at most %d)\n"
            "  --lease MS        lease duration (default 2000); renew deadline 3/4 of it,\n"
            "                    retry period 1/4\n"
            "  --no-fallback     skip the pass with the server's sharding off\n"
            "  --netns           also cut the last replica off the network (root): it runs in\n"
            "                    a network namespace whose veth is taken down past its lease,\n"
            "                    then up; its ranges must be taken only after its write fence\n"
            "                    passed, and it must rejoin (needs iproute2, 2+ replicas)\n"
            "  --json            machine-readable output\n"
            "  --verbose         each violation found, and each replica's share, on stderr\n"
            "  -h, --help        this help\n",
            SHARDS_MAX_REPL, SHARDS_MAX_RANGES);
}

static int parse(int argc, char **argv, shards_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--json") || !strcmp(a, "--no-fallback") || !strcmp(a, "--verbose") ||
            !strcmp(a, "--netns")) {
            if (a[2] == 'j')
                o->json = true;
            else if (a[2] == 'v')
                o->verbose = true;
            else if (a[3] == 'e')
                o->netns = true;
            else
                o->fallback = false;
            continue;
        }
        if (i + 1 >= argc)
            return kc__cli_usage_error("demo shards", "%s: unknown flag or missing value", a);
        const char *v = argv[++i];
        unsigned u;
        if (!strcmp(a, "--replicas")) {
            if (!demo_parse_uint(v, 1, SHARDS_MAX_REPL, &o->replicas))
                return kc__cli_usage_error("demo shards", "--replicas: expected 1 to %d, got '%s'",
                                           SHARDS_MAX_REPL, v);
        } else if (!strcmp(a, "--objects")) {
            if (!demo_parse_uint(v, 1, 1000000, &o->objects))
                return kc__cli_usage_error("demo shards",
                                           "--objects: expected 1 to 1000000, got '%s'", v);
        } else if (!strcmp(a, "--ranges")) {
            if (!demo_parse_uint(v, 1, SHARDS_MAX_RANGES, &o->ranges) ||
                (o->ranges & (o->ranges - 1)))
                return kc__cli_usage_error("demo shards",
                                           "--ranges: expected a power of two up to %d, got '%s'",
                                           SHARDS_MAX_RANGES, v);
        } else if (!strcmp(a, "--lease")) {
            if (!demo_parse_uint(v, 400, 600000, &u))
                return kc__cli_usage_error("demo shards",
                                           "--lease: expected 400 to 600000 ms, got '%s'", v);
            o->ld_ms = u;
            o->rd_ms = u * 3 / 4;
            o->rp_ms = u / 4;
        } else {
            return kc__cli_usage_error("demo shards", "%s: unknown flag", a);
        }
    }
    if (o->netns && o->replicas < 2)
        return kc__cli_usage_error("demo shards", "--netns: needs at least 2 replicas");
    return -1;
}

static void print_pass_json(const char *name, const shards_pass *p, unsigned replicas)
{
    printf("\"%s\":{\"balanced_ms\":%.1f,\"converged_ms\":%.1f,\"ingest_share_max\":%.4f,"
           "\"ingest_share\":[",
           name, p->balanced_ms, p->converged_ms, p->ingest_share_max);
    for (unsigned i = 0; i < replicas; i++)
        printf("%s%.4f", i ? "," : "", p->ingest_share[i]);
    printf("],\"failover_ms\":%.1f,\"stale_leader_writes\":%u,\"overlap_violations\":%u,"
           "\"unowned_after_converge\":%u,\"reconciles\":%u,\"fenced_refusals\":%u",
           p->failover_ms, p->stale_leader_writes, p->overlap_violations, p->unowned_after_converge,
           p->reconciles, p->fenced_refusals);
    if (p->cut.ran)
        printf(",\"netns_cut\":{\"replica\":%u,\"takeover_ms\":%.1f,\"margin_ms\":%.1f,"
               "\"rejoin_ms\":%.1f,\"late_takeovers\":%u}",
               p->cut.replica, p->cut.takeover_ms, p->cut.margin_ms, p->cut.rejoin_ms, p->cut.late);
    putchar('}');
}

/* "shards":{…} (no braces around): the object of `kcache demo shards --json`, and the section
 * of `kcache demo --json`. */
void demo_shards_print_json(const shards_result *r)
{
    const shards_pass *p = &r->on;
    printf("\"shards\":{\"replicas\":%u,\"objects\":%u,\"ranges\":%u,\"lease_duration_ms\":%lld,"
           "\"balanced_ms\":%.1f,\"ingest_share_max\":%.4f,\"failover_ms\":%.1f,"
           "\"stale_leader_writes\":%u,\"overlap_violations\":%u,"
           "\"unowned_after_converge\":%u,\"fallback_decode_cpu_ratio\":%.3f,"
           "\"fallback_list_decode_cpu_ratio\":%.3f,",
           r->replicas, r->objects, r->ranges, (long long)r->lease_duration_ms, p->balanced_ms,
           p->ingest_share_max, p->failover_ms, p->stale_leader_writes + r->off.stale_leader_writes,
           p->overlap_violations + r->off.overlap_violations,
           p->unowned_after_converge + r->off.unowned_after_converge, r->fallback_decode_cpu_ratio,
           r->fallback_list_decode_cpu_ratio);
    print_pass_json("server_sharding", &r->on, r->replicas);
    if (r->off.ran) {
        putchar(',');
        print_pass_json("fallback", &r->off, r->replicas);
    }
    putchar('}');
}

void demo_shards_print(const shards_result *r, bool json)
{
    const shards_pass *p = &r->on;
    if (json) {
        putchar('{');
        demo_shards_print_json(r);
        printf("}\n");
        return;
    }
    printf("kcache demo shards — %u replicas, %u Pods, %u ranges, lease %lld ms\n\n", r->replicas,
           r->objects, r->ranges, (long long)r->lease_duration_ms);
    printf("%-28s %16s %16s\n", "", "server sharding", "fallback");
    const shards_pass *q = &r->off;
#define ROW(label, fmt, field)                                                                     \
    printf("%-28s " fmt " ", label, p->field);                                                     \
    if (q->ran)                                                                                    \
        printf(fmt, q->field);                                                                     \
    putchar('\n')
    ROW("balanced after (ms)", "%16.0f", balanced_ms);
    ROW("converged after (ms)", "%16.0f", converged_ms);
    ROW("ingest share, max", "%16.3f", ingest_share_max);
    ROW("failover (ms)", "%16.0f", failover_ms);
    ROW("stale-leader writes", "%16u", stale_leader_writes);
    ROW("overlapping reconciles", "%16u", overlap_violations);
    ROW("unowned after converge", "%16u", unowned_after_converge);
    ROW("reconciles", "%16u", reconciles);
    ROW("writes refused (not held)", "%16u", fenced_refusals);
    if (p->cut.ran) {
        ROW("cut: takeover (ms)", "%16.0f", cut.takeover_ms);
        ROW("cut: fence margin (ms)", "%16.0f", cut.margin_ms);
        ROW("cut: rejoin (ms)", "%16.0f", cut.rejoin_ms);
        ROW("cut: takeovers too early", "%16u", cut.late);
    }
#undef ROW
    if (r->fallback_decode_cpu_ratio >= 0)
        printf("\nfallback decode CPU, quarter range ÷ full: watch stream %.3f, LIST %.3f\n",
               r->fallback_decode_cpu_ratio, r->fallback_list_decode_cpu_ratio);
}

bool demo_shards_clean(const shards_result *r)
{
    const shards_pass *v[2] = {&r->on, &r->off};
    for (int i = 0; i < 2; i++)
        if (v[i]->ran && (v[i]->stale_leader_writes || v[i]->overlap_violations ||
                          v[i]->unowned_after_converge || v[i]->cut.late))
            return false;
    return true;
}

int demo_shards_cmd(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--replica"))
        return demo_shard_replica_main(argc, argv);
    shards_opts o = {.replicas = 4,
                     .objects = 20000,
                     .ranges = 16,
                     .ld_ms = 2000,
                     .rd_ms = 1500,
                     .rp_ms = 500,
                     .fallback = true};
    int status = parse(argc, argv, &o);
    if (status >= 0)
        return status;
    shards_result r;
    kc_error e = KC_ERROR_INIT;
    int rc = demo_shards_run(&o, &r, &e);
    if (r.on.ran) /* a set-up failure (e.g. --netns without root) has nothing to show */
        demo_shards_print(&r, o.json);
    if (rc < 0) {
        kc__cli_error("demo shards", rc, &e);
        kc_error_clear(&e);
        return 1;
    }
    return demo_shards_clean(&r) ? 0 : 1;
}
