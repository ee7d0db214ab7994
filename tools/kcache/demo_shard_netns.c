/*
 * demo_shard_netns.c — the network-partition fault of `kcache demo shards --netns` (root only):
 * one replica runs in a network namespace of its own, joined to this one by a veth pair; the
 * parent takes the namespace's end of the pair down past the replica's lease, then up again.
 *
 * Layout: namespace "kcache-shards-<pid>", veth "kcs<pid>h" (here) ↔ "kcs<pid>n" (there), a /30
 * of 10.255.0.0/16 picked from the pid. The embedded server listens on the host end's address;
 * the parent and the other replicas reach it there by local delivery, which does not depend on the
 * veth's carrier, so taking the namespace's end down cuts that one replica alone. Deleting the
 * namespace deletes the pair. The commands are iproute2's `ip`, run without a shell.
 *
 * The check (spec L12a, P4, with the network as the fault): the cut replica logs each new write
 * fence deadline of its ranges (demo_shard_replica.c, every 100 ms: after the cut none can be
 * granted, so the last logged is the one in force); for each range it held at the cut, another
 * replica's acquisition (its Lease's acquireTime, a wall-clock MicroTime put on CLOCK_MONOTONIC by
 * the parent) must come after that deadline. The smallest gap is the margin: how long before the
 * takeover the cut replica had lost the right to write.
 */

#include "demo_shards.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Runs ip with args (NULL-terminated), in netns ns when not NULL; true when it exited 0. Its
 * output goes to /dev/null; a failure is said by the caller, naming the command. */
static bool ip(const char *ns, const char *const *args)
{
    const char *argv[16];
    size_t n = 0;
    argv[n++] = "ip";
    if (ns) {
        argv[n++] = "netns";
        argv[n++] = "exec";
        argv[n++] = ns;
        argv[n++] = "ip";
    }
    for (size_t i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, "ip", &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return false;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

#define IP(ns, ...) ip((ns), (const char *const[]){__VA_ARGS__, NULL})

int shards_netns_setup(shards_netns *n, kc_error *err)
{
    memset(n, 0, sizeof *n);
    n->fd = -1;
    if (geteuid() != 0)
        return kc_error_set(err, KC_EUNSUPPORTED,
                            "--netns: needs root (network namespaces and veth)");
    unsigned pid = (unsigned)getpid();
    snprintf(n->ns, sizeof n->ns, "kcache-shards-%u", pid);
    snprintf(n->host_if, sizeof n->host_if, "kcs%uh", pid % 10000000u);
    snprintf(n->ns_if, sizeof n->ns_if, "kcs%un", pid % 10000000u);
    unsigned a = (pid >> 6) & 255, b = (pid & 63) << 2;
    char host_cidr[40], ns_cidr[40];
    snprintf(n->host_ip, sizeof n->host_ip, "10.255.%u.%u", a, b + 1);
    snprintf(host_cidr, sizeof host_cidr, "%s/30", n->host_ip);
    snprintf(ns_cidr, sizeof ns_cidr, "10.255.%u.%u/30", a, b + 2);
    const char *step = NULL;
    if (!IP(NULL, "netns", "add", n->ns))
        step = "ip netns add";
    else if ((n->made = true) &&
             !IP(NULL, "link", "add", n->host_if, "type", "veth", "peer", "name", n->ns_if))
        step = "ip link add … type veth";
    else if (!IP(NULL, "link", "set", n->ns_if, "netns", n->ns))
        step = "ip link set … netns";
    else if (!IP(NULL, "addr", "add", host_cidr, "dev", n->host_if) ||
             !IP(NULL, "link", "set", n->host_if, "up"))
        step = "ip addr add / link set up (host end)";
    else if (!IP(n->ns, "addr", "add", ns_cidr, "dev", n->ns_if) ||
             !IP(n->ns, "link", "set", n->ns_if, "up") || !IP(n->ns, "link", "set", "lo", "up"))
        step = "ip addr add / link set up (namespace end)";
    if (!step) {
        char path[64];
        snprintf(path, sizeof path, "/run/netns/%s", n->ns);
        if ((n->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            step = "open /run/netns/…";
    }
    if (step) {
        shards_netns_teardown(n);
        return kc_error_set(err, KC_EIO, "--netns: %s failed (is iproute2 installed?)", step);
    }
    n->on = true;
    return 0;
}

int shards_netns_enter(const shards_netns *n)
{
    return setns(n->fd, CLONE_NEWNET);
}

bool shards_netns_link(const shards_netns *n, bool up)
{
    return IP(n->ns, "link", "set", n->ns_if, up ? "up" : "down");
}

void shards_netns_teardown(shards_netns *n)
{
    if (!n->made)
        return; /* never set up (a zeroed struct included) */
    if (n->fd >= 0)
        close(n->fd);
    n->fd = -1;
    IP(NULL, "netns", "del", n->ns); /* takes the veth pair with it */
    n->made = n->on = false;
}

/* ---- the check ------------------------------------------------------------------------------ */

unsigned shards_check_cut(const char *dir, shards_cut *w, unsigned ranges, FILE *detail)
{
    uint64_t last[SHARDS_MAX_RANGES] = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/replica-%u.fence", dir, w->replica);
    FILE *f = fopen(path, "r");
    unsigned r;
    unsigned long long vu, at;
    while (f && fscanf(f, "F %u %llu %llu\n", &r, &vu, &at) == 3)
        if (r < ranges && at < w->t_restore && vu > last[r])
            last[r] = vu; /* deadlines only grow while held: the last one in force */
    if (f)
        fclose(f);
    unsigned late = 0, seen = 0;
    w->margin_ms = 0; /* no range to compare: the smoke test's margin > 0 then fails */
    for (r = 0; r < ranges; r++) {
        if (!w->held[r] || !w->acq[r] || !last[r])
            continue;
        double gap = ((double)w->acq[r] - (double)last[r]) / 1e6;
        if (!seen++ || gap < w->margin_ms)
            w->margin_ms = gap;
        if (last[r] > w->acq[r]) {
            late++;
            if (detail)
                fprintf(detail,
                        "cut: range %u acquired by another replica %.1f ms before the cut "
                        "replica's fence passed\n",
                        r, -gap);
        }
    }
    return late;
}
