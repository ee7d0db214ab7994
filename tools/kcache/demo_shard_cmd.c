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

/* One row: what was measured, in words, then its value with and without server sharding. */
static void row(const char *indent, const shards_result *r, const char *label, double on,
                double off, int dec, const char *unit)
{
    char a[32], b[32] = "";
    snprintf(a, sizeof a, "%.*f%s%s", dec, on, *unit ? " " : "", unit);
    if (r->off.ran)
        snprintf(b, sizeof b, "%.*f%s%s", dec, off, *unit ? " " : "", unit);
    printf("%s%-56s %15s %15s\n", indent, label, a, b);
}

/* The table, each figure in words; indent: "" alone, "   " as the demo's section 5. */
static void print_rows(const shards_result *r, const char *indent)
{
    const shards_pass *p = &r->on, *q = &r->off;
    printf("%s%-56s %15s %15s\n", indent, "", "server sharding", "fallback");
    row(indent, r, "ranges spread evenly over the replicas after", p->balanced_ms, q->balanced_ms,
        0, "ms");
    row(indent, r, "every Pod reconciled by its range's holder after", p->converged_ms,
        q->converged_ms, 0, "ms");
    row(indent, r, "most traffic one replica received (1 = all of it)", p->ingest_share_max,
        q->ingest_share_max, 2, "");
    row(indent, r, "a killed replica's ranges taken over after", p->failover_ms, q->failover_ms, 0,
        "ms");
    row(indent, r, "writes from a replica not holding the range (must be 0)",
        p->stale_leader_writes, q->stale_leader_writes, 0, "");
    row(indent, r, "Pods reconciled by two replicas at once (must be 0)", p->overlap_violations,
        q->overlap_violations, 0, "");
    row(indent, r, "Pods no replica owned once settled (must be 0)", p->unowned_after_converge,
        q->unowned_after_converge, 0, "");
    row(indent, r, "reconciles in all", p->reconciles, q->reconciles, 0, "");
    row(indent, r, "writes a replica held back: range no longer its own", p->fenced_refusals,
        q->fenced_refusals, 0, "");
    if (p->cut.ran) {
        row(indent, r, "cut: its ranges taken over after", p->cut.takeover_ms, q->cut.takeover_ms,
            0, "ms");
        row(indent, r, "cut: taken over this long after its lease ran out", p->cut.margin_ms,
            q->cut.margin_ms, 0, "ms");
        row(indent, r, "cut: back in and balanced again after", p->cut.rejoin_ms, q->cut.rejoin_ms,
            0, "ms");
        row(indent, r, "cut: ranges taken before its lease ran out (must be 0)", p->cut.late,
            q->cut.late, 0, "");
    }
    if (p->cut.ran)
        printf("%s(cut: one replica's network link is cut; others may take its ranges only once\n"
               "%sits lease has run out)\n",
               indent, indent);
    if (r->fallback_decode_cpu_ratio >= 0)
        printf("\n%sWithout server sharding every replica receives every Pod and drops the ones\n"
               "%soutside its ranges while decoding. Keeping a quarter of the Pods that way costs\n"
               "%s%.2f× the CPU of decoding them all from a watch stream, %.2f× from a LIST\n"
               "%s(1.00: dropping saves nothing; 0.25: it costs only the quarter kept).\n",
               indent, indent, indent, r->fallback_decode_cpu_ratio,
               r->fallback_list_decode_cpu_ratio, indent);
}

void demo_shards_print(const shards_result *r, bool json)
{
    if (json) {
        putchar('{');
        demo_shards_print_json(r);
        printf("}\n");
        return;
    }
    printf("kcache demo shards — %u replica processes share %u Pods in %u ranges (leases of\n"
           "%lld ms); run once with the server sharding the watch (each replica receives only\n"
           "its ranges), once without (the fallback: each replica receives every Pod)\n\n",
           r->replicas, r->objects, r->ranges, (long long)r->lease_duration_ms);
    print_rows(r, "");
}

void demo_shards_print_section(const shards_result *r)
{
    printf("5. Scale-out: %u replica processes share %u Pods in %u ranges (leases of %lld ms);\n"
           "   run once with the server sharding the watch (each replica receives only its\n"
           "   ranges), once without (the fallback: each replica receives every Pod)\n\n",
           r->replicas, r->objects, r->ranges, (long long)r->lease_duration_ms);
    print_rows(r, "   ");
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
