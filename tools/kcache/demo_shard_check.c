/*
 * demo_shard_check.c — the no-overlap check of `kcache demo shards` (spec P4): every replica
 * logged one line per reconcile, "R <replica> <key> <start_ns> <end_ns>" on CLOCK_MONOTONIC
 * (shared by the processes of one machine). Two intervals of one key from two replicas that
 * intersect are a violation: one key reconciled by two replicas at once.
 *
 * Method: read every log, sort the intervals by (key, start), and sweep each key's intervals
 * keeping the latest end seen so far and the replica it belongs to; an interval of another
 * replica starting before that end intersects it.
 */
#include "demo_shards.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ival {
    char *key;
    unsigned replica;
    unsigned long long start, end;
} ival;

static int by_key_start(const void *a, const void *b)
{
    const ival *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return x->start < y->start ? -1 : x->start > y->start;
}

static bool read_log(const char *path, ival **v, size_t *n, size_t *cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char key[320];
    unsigned rep;
    unsigned long long s, e;
    while (fscanf(f, "R %u %319s %llu %llu\n", &rep, key, &s, &e) == 4) {
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 4096;
            ival *nv = realloc(*v, nc * sizeof *nv);
            if (!nv)
                break;
            *v = nv;
            *cap = nc;
        }
        char *k = strdup(key);
        if (!k)
            break;
        (*v)[(*n)++] = (ival){k, rep, s, e};
    }
    fclose(f);
    return true;
}

unsigned shards_check_overlap(const char *dir, unsigned replicas, unsigned *ret_reconciles,
                              FILE *detail)
{
    ival *v = NULL;
    size_t n = 0, cap = 0;
    char path[512];
    for (unsigned i = 0; i < replicas; i++) {
        snprintf(path, sizeof path, "%s/replica-%u.log", dir, i);
        read_log(path, &v, &n, &cap);
    }
    qsort(v, n, sizeof *v, by_key_start);
    unsigned bad = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        unsigned long long end = v[i].end, ostart = v[i].start;
        unsigned owner = v[i].replica;
        for (j = i + 1; j < n && strcmp(v[j].key, v[i].key) == 0; j++) {
            if (v[j].replica != owner && v[j].start < end) {
                if (detail && bad < 10)
                    fprintf(detail,
                            "overlap: %s: replica %u [%llu, %llu) and replica %u [%llu, %llu) "
                            "(CLOCK_MONOTONIC ns)\n",
                            v[j].key, owner, ostart, end, v[j].replica, v[j].start, v[j].end);
                bad++;
            }
            if (v[j].end > end) {
                end = v[j].end;
                ostart = v[j].start;
                owner = v[j].replica;
            }
        }
        i = j;
    }
    for (size_t i = 0; i < n; i++)
        free(v[i].key);
    free(v);
    if (ret_reconciles)
        *ret_reconciles = (unsigned)n;
    return bad;
}
