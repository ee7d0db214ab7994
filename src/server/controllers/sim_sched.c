/*
 * sim_sched.c — the simulated scheduler: an unbound pod of the default scheduler goes to the
 * simulated node that fits it and has the fewest pods (ties: the lowest index) — fits: the
 * nodeSelector matches the node's labels, the pod's cpu and memory requests fit in what the
 * node's allocatable leaves after the pods bound to it, and the node has fewer than its pods
 * capacity (110). Binding sets spec.nodeName (as the pods/binding subresource would) and the
 * PodScheduled condition True; a pod that fits nowhere gets PodScheduled False, reason
 * Unschedulable, with upstream's message ("0/3 nodes are available: 3 Insufficient cpu.") and
 * is tried again a second later. Not simulated: affinity, taints and tolerations, preemption.
 */
#include "server/controllers/sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t kc__sim_quantity(const char *q, int64_t mult)
{
    if (!q || !*q)
        return 0;
    char *end;
    double v = strtod(q, &end);
    static const struct {
        const char *sfx;
        double f;
    } sfx[] = {{"m", 1e-3},       {"k", 1e3},           {"M", 1e6},
               {"G", 1e9},        {"T", 1e12},          {"Ki", 1024.0},
               {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
               {"", 1.0}};
    for (size_t i = 0; i < KC__ARRAY_LEN(sfx); i++)
        if (!strcmp(end, sfx[i].sfx)) {
            double r = v * sfx[i].f * (double)mult;
            return (int64_t)(r + 0.999999); /* rounded up, as Quantity.MilliValue */
        }
    return 0;
}

static void unschedulable(kc__sim *s, kc__entry *e, kc__sim_pod *p, const int64_t why[4])
{
    static const char *const words[4] = {"Insufficient cpu", "Insufficient memory", "Too many pods",
                                         "node(s) didn't match Pod's node affinity/selector"};
    char msg[512];
    int n = snprintf(msg, sizeof(msg), "0/%zu nodes are available:", s->n_nodes);
    bool first = true;
    for (int i = 0; i < 4; i++)
        if (why[i]) {
            n += snprintf(msg + n, sizeof(msg) - (size_t)n, "%s %lld %s", first ? "" : ",",
                          (long long)why[i], words[i]);
            first = false;
        }
    snprintf(msg + n, sizeof(msg) - (size_t)n,
             ". preemption: 0/%zu nodes are available: %zu Preemption is not helpful for "
             "scheduling.",
             s->n_nodes, s->n_nodes);
    json_t *doc = kc__doc_from_obj(e->obj);
    json_t *st = json_object_get(doc, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(doc, "status", st);
    }
    json_object_set_new(st, "phase", json_string("Pending"));
    kc__sim_set_condition(st, "PodScheduled", "False", "Unschedulable", msg, false, true);
    kc__sim_update(s, s->r[SIM_POD], e, doc, SIM_STATUS, NULL);
    json_decref(doc);
    uint64_t due = kc__now_ns() + 1000 * KC__NS_PER_MS;
    p = kc__sim_pod_find(s, e->ns, e->name);
    if (p && !p->due) {
        p->due = due;
        kc__sim_after(s, due, SIM_POD, e->ns, e->name);
    }
}

void kc__sim_schedule(kc__sim *s, kc__entry *e, kc__sim_pod *p)
{
    if (p->due && kc__now_ns() < p->due)
        return; /* a retry is planned */
    p->due = 0;
    json_t *doc = kc__doc_from_obj(e->obj);
    json_t *spec = json_object_get(doc, "spec");
    json_t *sel = json_object_get(spec, "nodeSelector");
    int64_t why[4] = {0};
    int best = -1;
    for (size_t i = 0; i < s->n_nodes; i++) {
        kc__sim_node *n = &s->nodes[i];
        int bad = !kc__sim_node_matches(s, (int)i, sel) ? 3
                  : n->used_cpu + p->cpu_m > n->cpu_m   ? 0
                  : n->used_mem + p->mem > n->mem       ? 1
                  : n->used_pods + 1 > n->pods_cap      ? 2
                                                        : -1;
        if (bad >= 0) {
            why[bad]++;
            continue;
        }
        if (best < 0 || n->used_pods < s->nodes[best].used_pods)
            best = (int)i;
    }
    if (best < 0) {
        json_decref(doc);
        unschedulable(s, e, p, why);
        return;
    }
    json_object_set_new(spec, "nodeName", json_string(s->nodes[best].name));
    kc_obj *bound = NULL;
    if (kc__sim_update(s, s->r[SIM_POD], e, doc, SIM_BINDING, &bound) == 0) {
        json_decref(doc);
        doc = kc__doc_from_obj(bound);
        json_t *st = json_object_get(doc, "status");
        if (!json_is_object(st)) {
            st = json_object();
            json_object_set_new(doc, "status", st);
        }
        kc__sim_set_condition(st, "PodScheduled", "True", NULL, NULL, false, true);
        kc__sim_update(s, s->r[SIM_POD], e, doc, SIM_STATUS, NULL);
    }
    kc_obj_unref(bound);
    json_decref(doc);
}
