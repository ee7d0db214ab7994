/*
 * bench/node_sync.h — one @kubernetes/client-node 1.4.0 makeInformer sync
 * (bench/node/informer_sync.mjs) of the server child, for bench_informer and bench_sync
 * (header-only, static: each bench .c file is its own program).
 *
 *   int node_sync(const child *c, int n, double *wall_s, long *peak_kb, long *steady_kb)
 *       Runs the script under node against c's kubeconfig until it holds n Pods. NODE_PATH is
 *       $KC_NODE_MODULES when set (another checkout's tests/…/node_modules), else this source
 *       tree's tests/conformance/node/node_modules (the tree is found from this header's path).
 *       Fills the script's RESULT line: wall seconds, peak and steady RSS in KiB above its
 *       baseline. 0 on success, -1 when it printed none.
 */
#ifndef KC_BENCH_NODE_SYNC_H
#define KC_BENCH_NODE_SYNC_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "popen_scan.h"
#include "server_child.h"

static int node_sync(const child *c, int n, double *wall_s, long *peak_kb, long *steady_kb)
{
    /* The source tree, from this file's (absolute) path. */
    char src[512];
    snprintf(src, sizeof(src), "%s", __FILE__);
    char *cut = strstr(src, "/bench/node_sync.h");
    if (cut)
        *cut = '\0';
    else
        snprintf(src, sizeof(src), ".");
    char mods[600];
    const char *env = getenv("KC_NODE_MODULES");
    if (env)
        snprintf(mods, sizeof(mods), "%s", env);
    else
        snprintf(mods, sizeof(mods), "%s/tests/conformance/node/node_modules", src);
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "NODE_PATH=%s node --expose-gc %s/bench/node/informer_sync.mjs %s %d", mods, src,
             c->kubeconfig, n);
    return popen_scan(cmd, 3, "RESULT %lf %ld %ld", wall_s, peak_kb, steady_kb);
}

#endif
