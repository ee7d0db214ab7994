/*
 * sim_nodes.c — the simulated nodes kcache-node-0..N-1 (kc_server_opts.simulate_nodes), as a
 * KWOK node looks: capacity and allocatable (cpu 8, memory 32Gi, pods 110, ephemeral-storage),
 * podCIDR 10.(64+i/256).(i%256).0/24, addresses (InternalIP 172.18.x.y, Hostname), nodeInfo,
 * the kubelet's conditions (MemoryPressure, DiskPressure, PIDPressure False; Ready True) and
 * the usual labels (kubernetes.io/hostname, os, arch, node.kubernetes.io/instance-type). Their
 * heartbeats: a Lease per node in kube-node-lease renewed every sim_lease_ms (as kubelet's 10 s),
 * and the conditions' lastHeartbeatTime refreshed every sixth renewal. Nodes missing at start
 * (or after a restart) are created; a node deleted later stays deleted until then.
 */
#include "server/controllers/sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kc__sim_nodes_init(kc__sim *s)
{
    s->n_nodes = s->srv->opts.simulate_nodes;
    s->nodes = calloc(s->n_nodes, sizeof(*s->nodes));
    if (!s->nodes)
        return KC_ENOMEM;
    for (size_t i = 0; i < s->n_nodes; i++) {
        kc__sim_node *n = &s->nodes[i];
        snprintf(n->name, sizeof(n->name), "kcache-node-%zu", i);
        n->cpu_m = 8000;
        n->mem = 32LL << 30;
        n->pods_cap = 110;
    }
    return 0;
}

int kc__sim_node_index(kc__sim *s, const char *name)
{
    unsigned long i;
    char *end;
    if (strncmp(name, "kcache-node-", 12) != 0 || !name[12])
        return -1;
    i = strtoul(name + 12, &end, 10);
    return *end || i >= s->n_nodes ? -1 : (int)i;
}

void kc__sim_node_ip(kc__sim *s, int i, char out[32])
{
    (void)s;
    snprintf(out, 32, "172.18.%d.%d", (i + 2) / 250, (i + 2) % 250 + 1);
}

void kc__sim_pod_ip(kc__sim *s, int i, char out[32])
{
    kc__sim_node *n = &s->nodes[i];
    unsigned k = n->next_ip++ % 253;
    snprintf(out, 32, "10.%d.%d.%u", 64 + i / 256, i % 256, k + 2);
}

static json_t *labels(const kc__sim_node *n)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "beta.kubernetes.io/arch", "amd64",
                     "beta.kubernetes.io/os", "linux", "kubernetes.io/arch", "amd64",
                     "kubernetes.io/hostname", n->name, "kubernetes.io/os", "linux",
                     "node.kubernetes.io/instance-type", "kcache-sim", "type", "kcache-sim");
}

bool kc__sim_node_matches(kc__sim *s, int i, const json_t *sel)
{
    if (!json_object_size(sel))
        return true;
    json_t *l = labels(&s->nodes[i]);
    const char *k;
    json_t *v;
    bool ok = true;
    json_object_foreach((json_t *)sel, k, v)
    {
        const char *have = json_string_value(json_object_get(l, k));
        if (!have || !json_is_string(v) || strcmp(have, json_string_value(v)) != 0)
            ok = false;
    }
    json_decref(l);
    return ok;
}

static json_t *conditions(const char *now)
{
    static const char *const rows[4][4] = {
        {"MemoryPressure", "False", "KubeletHasSufficientMemory",
         "kubelet has sufficient memory available"},
        {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
        {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
        {"Ready", "True", "KubeletReady", "kubelet is posting ready status"}};
    json_t *a = json_array();
    for (int i = 0; i < 4; i++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", rows[i][0],
                                           "status", rows[i][1], "lastHeartbeatTime", now,
                                           "lastTransitionTime", now, "reason", rows[i][2],
                                           "message", rows[i][3]));
    return a;
}

static json_t *node_doc(kc__sim *s, size_t i)
{
    kc__sim_node *n = &s->nodes[i];
    char now[32], ip[32], cidr[40], mem[32];
    kc__sim_now(now);
    kc__sim_node_ip(s, (int)i, ip);
    snprintf(cidr, sizeof(cidr), "10.%zu.%zu.0/24", 64 + i / 256, i % 256);
    snprintf(mem, sizeof(mem), "%lldKi", (long long)(n->mem >> 10));
    json_t *cap = json_pack("{s:s, s:s, s:s, s:s, s:s}", "cpu", "8", "ephemeral-storage",
                            "104857600Ki", "hugepages-2Mi", "0", "memory", mem, "pods", "110");
    json_t *info = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "architecture", "amd64", "bootID", "",
        "containerRuntimeVersion", "containerd://1.7.13", "kernelVersion", "6.1.0-kcache",
        "kubeProxyVersion", "", "kubeletVersion", "v1.31.0", "machineID", "", "operatingSystem",
        "linux", "osImage", "kcache simulated node", "systemUUID", "");
    return json_pack("{s:s, s:s, s:{s:s, s:o, s:{s:s, s:s}}, s:{s:s, s:[s]}, "
                     "s:{s:O, s:o, s:[{s:s, s:s}, {s:s, s:s}], s:o, s:o, s:{s:{s:i}}, s:s}}",
                     "apiVersion", "v1", "kind", "Node", "metadata", "name", n->name, "labels",
                     labels(n), "annotations", "node.alpha.kubernetes.io/ttl", "0",
                     "kcache.io/simulated", "true", "spec", "podCIDR", cidr, "podCIDRs", cidr,
                     "status", "capacity", cap, "allocatable", cap, "addresses", "type",
                     "InternalIP", "address", ip, "type", "Hostname", "address", n->name,
                     "conditions", conditions(now), "nodeInfo", info, "daemonEndpoints",
                     "kubeletEndpoint", "Port", 10250, "phase", "Running");
}

static void lease(kc__sim *s, size_t i, const char *now)
{
    kc__entry *ne = kc__store_find(s->nodes_r, "", s->nodes[i].name);
    if (!ne)
        return;
    kc__entry *le = kc__store_find(s->leases_r, "kube-node-lease", s->nodes[i].name);
    json_t *doc =
        le ? kc__doc_from_obj(le->obj)
           : json_pack("{s:s, s:s, s:{s:s, s:s, s:[{s:s, s:s, s:s, s:s}]}, s:{}}", "apiVersion",
                       "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name",
                       s->nodes[i].name, "namespace", "kube-node-lease", "ownerReferences",
                       "apiVersion", "v1", "kind", "Node", "name", s->nodes[i].name, "uid",
                       kc_obj_uid(ne->obj), "spec");
    json_t *spec = json_object_get(doc, "spec");
    if (!spec)
        goto out;
    json_object_set_new(spec, "holderIdentity", json_string(s->nodes[i].name));
    json_object_set_new(spec, "leaseDurationSeconds", json_integer(40));
    json_object_set_new(spec, "renewTime", json_string(now));
    if (le)
        kc__sim_update(s, s->leases_r, le, doc, SIM_MAIN, NULL);
    else
        kc__sim_create(s, s->leases_r, "kube-node-lease", doc, SIM_MAIN, NULL);
out:
    json_decref(doc);
}

/* Refresh lastHeartbeatTime of node i's conditions. */
static void heartbeat(kc__sim *s, size_t i)
{
    kc__entry *ne = kc__store_find(s->nodes_r, "", s->nodes[i].name);
    json_t *doc = ne ? kc__doc_from_obj(ne->obj) : NULL;
    char now[32];
    kc__sim_now(now);
    size_t k;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(doc, "status"), "conditions"), k, c)
        json_object_set_new(c, "lastHeartbeatTime", json_string(now));
    if (doc)
        kc__sim_update(s, s->nodes_r, ne, doc, SIM_STATUS, NULL);
    json_decref(doc);
}

void kc__sim_renew_leases(kc__sim *s)
{
    char now[40];
    kc__sim_now_micro(now);
    uint64_t t = kc__now_ns();
    pthread_mutex_lock(&s->srv->mu);
    for (size_t i = 0; i < s->n_nodes; i++) {
        lease(s, i, now);
        kc__sim_node *n = &s->nodes[i];
        if (!n->last_heartbeat_ns)
            n->last_heartbeat_ns = t;
        else if (t - n->last_heartbeat_ns >= s->heartbeat_ms * KC__NS_PER_MS) {
            heartbeat(s, i);
            n->last_heartbeat_ns = t;
        }
    }
    pthread_mutex_unlock(&s->srv->mu);
    kc__sim_after(s, t + s->lease_ms * KC__NS_PER_MS, SIM_LEASES, "", "");
}

void kc__sim_reconcile_nodes(kc__sim *s)
{
    pthread_mutex_lock(&s->srv->mu);
    for (size_t i = 0; i < s->n_nodes; i++) {
        if (kc__store_find(s->nodes_r, "", s->nodes[i].name))
            continue;
        json_t *doc = node_doc(s, i);
        if (doc)
            kc__sim_create(s, s->nodes_r, "", doc, SIM_STATUS, NULL);
        json_decref(doc);
        s->nodes[i].last_heartbeat_ns = 0;
    }
    pthread_mutex_unlock(&s->srv->mu);
    /* every DaemonSet may have a node more to run on */
    pthread_mutex_lock(&s->srv->mu);
    size_t n = 0;
    kc__entry **ds = kc__store_sorted(s->r[SIM_DS], &n);
    for (size_t i = 0; ds && i < n; i++)
        kc__sim_enqueue(s, SIM_DS, ds[i]->ns, ds[i]->name);
    pthread_mutex_unlock(&s->srv->mu);
}
