/*
 * sim_kubelet.c — the simulated kubelet of every simulated node, one reconcile per pod key:
 *   - an unbound pod of the default scheduler goes to the scheduler (sim_sched.c);
 *   - a pod bound to a simulated node moves, one step per kc_server_opts.sim_pod_start_ms:
 *     ContainerCreating (phase Pending, hostIP, podIP from the node's CIDR, startTime,
 *     Initialized, Ready/ContainersReady False) → Running (containerStatuses with containerd://
 *     IDs, imageID, ready, started, state.running.startedAt; Ready True); a pod whose
 *     restartPolicy is not Always exits sim_pod_run_ms later (annotation
 *     kcache.io/simulate-run-ms overrides) with the exit code of annotation
 *     kcache.io/simulate-exit-code (default 0): Succeeded, else Failed;
 *   - a pod being deleted (deletionTimestamp) is removed once its containers "stop":
 *     sim_pod_stop_ms after the delete, at most its grace period.
 * Each step is planned on the pod table's due time (a timer that queues the key again), so a
 * pod costs no thread and no polling.
 */
#include "server/controllers/sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex64(kc__sim *s, char out[65])
{
    for (int i = 0; i < 4; i++)
        snprintf(out + 16 * i, 17, "%016llx", (unsigned long long)kc__rng_next(&s->rng));
}

/* "nginx" → "docker.io/library/nginx:latest", as containerd reports it. */
static void full_image(const char *img, char *out, size_t cap)
{
    const char *slash = strchr(img, '/');
    const char *last = strrchr(img, '/');
    bool tag = strchr(last ? last : img, ':') || strchr(img, '@');
    bool domain =
        slash && (memchr(img, '.', (size_t)(slash - img)) ||
                  memchr(img, ':', (size_t)(slash - img)) || !strncmp(img, "localhost/", 10));
    snprintf(out, cap, "%s%s%s%s", domain ? "" : "docker.io/", !slash ? "library/" : "", img,
             tag ? "" : ":latest");
}

static json_t *container_status(kc__sim *s, const json_t *c, int stage, int exit_code,
                                const json_t *old)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    const char *img = json_string_value(json_object_get(c, "image"));
    char full[512], now[32], id[80] = "containerd://", hx[65], iid[600];
    full_image(img ? img : "", full, sizeof(full));
    kc__sim_now(now);
    json_t *cs = json_pack("{s:s?, s:s, s:s, s:i, s:{}}", "name", name, "image", full, "imageID",
                           "", "restartCount", 0, "lastState");
    if (stage == 1) {
        json_object_set_new(cs, "ready", json_false());
        json_object_set_new(cs, "started", json_false());
        json_object_set_new(cs, "state",
                            json_pack("{s:{s:s}}", "waiting", "reason", "ContainerCreating"));
        return cs;
    }
    const char *old_id = json_string_value(json_object_get(old, "containerID"));
    const json_t *run = json_object_get(json_object_get(old, "state"), "running");
    const char *started = json_string_value(json_object_get(run, "startedAt"));
    if (old_id)
        snprintf(id, sizeof(id), "%s", old_id);
    else {
        hex64(s, hx);
        strcat(id, hx);
    }
    uint32_t h = 2166136261u;
    for (const char *p = full; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    char *colon = strrchr(full, ':');
    if (colon && !strchr(colon, '/'))
        *colon = 0;
    snprintf(iid, sizeof(iid), "%s@sha256:%08x%08x%08x%08x%08x%08x%08x%08x", full, h, h ^ 1u,
             h ^ 2u, h ^ 3u, h ^ 4u, h ^ 5u, h ^ 6u, h ^ 7u);
    json_object_set_new(cs, "imageID", json_string(iid));
    json_object_set_new(cs, "containerID", json_string(id));
    if (stage == 2) {
        json_object_set_new(cs, "ready", json_true());
        json_object_set_new(cs, "started", json_true());
        json_object_set_new(cs, "state", json_pack("{s:{s:s}}", "running", "startedAt", now));
    } else {
        json_object_set_new(cs, "ready", json_false());
        json_object_set_new(cs, "started", json_false());
        json_object_set_new(cs, "state",
                            json_pack("{s:{s:s, s:i, s:s, s:s, s:s}}", "terminated", "containerID",
                                      id, "exitCode", exit_code, "reason",
                                      exit_code ? "Error" : "Completed", "startedAt",
                                      started ? started : now, "finishedAt", now));
    }
    return cs;
}

static const json_t *old_status_of(const json_t *status, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(status, "containerStatuses"), i, c)
    {
        const char *n = json_string_value(json_object_get(c, "name"));
        if (n && name && !strcmp(n, name))
            return c;
    }
    return NULL;
}

static int64_t annotation_int(const json_t *doc, const char *key, int64_t def)
{
    json_t *a = json_object_get(json_object_get(doc, "metadata"), "annotations");
    const char *v = json_string_value(json_object_get(a, key));
    return v ? strtoll(v, NULL, 10) : def;
}

/* Write the status of step stage (1 ContainerCreating, 2 Running, 3 exited). */
static void step(kc__sim *s, kc__entry *e, json_t *doc, kc__sim_pod *p, int stage)
{
    json_t *spec = json_object_get(doc, "spec");
    json_t *st = json_object_get(doc, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(doc, "status", st);
    }
    char now[32], ip[32];
    kc__sim_now(now);
    int exit_code = (int)annotation_int(doc, "kcache.io/simulate-exit-code", 0);
    if (stage == 1) {
        kc__sim_node_ip(s, p->node, ip);
        json_object_set_new(st, "hostIP", json_string(ip));
        json_object_set_new(st, "hostIPs", json_pack("[{s:s}]", "ip", ip));
        kc__sim_pod_ip(s, p->node, ip);
        json_object_set_new(st, "podIP", json_string(ip));
        json_object_set_new(st, "podIPs", json_pack("[{s:s}]", "ip", ip));
        json_object_set_new(st, "startTime", json_string(now));
        json_object_set_new(st, "phase", json_string("Pending"));
    } else {
        json_object_set_new(st, "phase",
                            json_string(stage == 2  ? "Running"
                                        : exit_code ? "Failed"
                                                    : "Succeeded"));
    }
    json_t *names = json_array(), *css = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(spec, "containers"), i, c)
    {
        const char *n = json_string_value(json_object_get(c, "name"));
        json_array_append_new(names, json_string(n ? n : ""));
        json_array_append_new(css, container_status(s, c, stage, exit_code, old_status_of(st, n)));
    }
    json_object_set_new(st, "containerStatuses", css);
    char msg[512] = "containers with unready status: ";
    char *list = json_dumps(names, JSON_COMPACT);
    strncat(msg, list ? list : "[]", sizeof(msg) - strlen(msg) - 1);
    for (char *q = msg; *q; q++)
        if (*q == '"')
            memmove(q, q + 1, strlen(q)), q--;
    free(list);
    json_decref(names);
    const char *rs = stage == 3 ? (exit_code ? "PodFailed" : "PodCompleted") : "ContainersNotReady";
    const char *rm = stage == 3 ? NULL : msg;
    kc__sim_set_condition(st, "PodReadyToStartContainers", stage == 1 ? "False" : "True", NULL,
                          NULL, false, true);
    kc__sim_set_condition(st, "Initialized", "True", NULL, NULL, false, true);
    kc__sim_set_condition(st, "Ready", stage == 2 ? "True" : "False", stage == 2 ? NULL : rs,
                          stage == 2 ? NULL : rm, false, true);
    kc__sim_set_condition(st, "ContainersReady", stage == 2 ? "True" : "False",
                          stage == 2 ? NULL : rs, stage == 2 ? NULL : rm, false, true);
    kc__sim_set_condition(st, "PodScheduled", "True", NULL, NULL, false, true);
    kc__sim_update(s, s->r[SIM_POD], e, doc, SIM_STATUS, NULL);
}

/* The kubelet's next step for a bound pod: 0 = none. */
static int next_stage(const json_t *doc)
{
    json_t *st = json_object_get(doc, "status");
    const char *phase = json_string_value(json_object_get(st, "phase"));
    const char *rp =
        json_string_value(json_object_get(json_object_get(doc, "spec"), "restartPolicy"));
    if (!json_object_get(st, "hostIP"))
        return 1;
    if (phase && !strcmp(phase, "Pending"))
        return 2;
    if (phase && !strcmp(phase, "Running") && rp && strcmp(rp, "Always") != 0)
        return 3;
    return 0;
}

/* true once p's planned step is due (plans it, with a timer, when none is). */
static bool due(kc__sim *s, kc__sim_pod *p, const char *ns, const char *name, uint64_t delay_ms)
{
    uint64_t now = kc__now_ns();
    if (!p->due) {
        p->due = now + delay_ms * KC__NS_PER_MS;
        kc__sim_after(s, p->due, SIM_POD, ns, name);
        return delay_ms == 0 ? (p->due = 0, true) : false;
    }
    if (now < p->due)
        return false;
    p->due = 0;
    return true;
}

static void stop_pod(kc__sim *s, kc__entry *e, json_t *doc, kc__sim_pod *p)
{
    int64_t grace = kc__sim_int(json_object_get(doc, "metadata"), "deletionGracePeriodSeconds", 30);
    uint64_t ms = s->stop_ms;
    if ((uint64_t)grace * 1000 < ms)
        ms = (uint64_t)grace * 1000;
    if (!due(s, p, e->ns, e->name, ms))
        return;
    char ns[256], name[320];
    snprintf(ns, sizeof(ns), "%s", e->ns);
    snprintf(name, sizeof(name), "%s", e->name);
    kc_obj *res = NULL;
    bool gone = false;
    kc_error err = KC_ERROR_INIT;
    kc__delete_one(s->srv, s->r[SIM_POD], e, NULL, false, 0, &res, &gone, &err);
    kc_error_clear(&err);
    kc_obj_unref(res);
    kc__entry *now = kc__store_find(s->r[SIM_POD], ns, name);
    kc__sim_pod_observe(s, ns, name, now ? now->obj : NULL);
}

void kc__sim_reconcile_pod(kc__sim *s, const char *ns, const char *name)
{
    kc_server *srv = s->srv;
    pthread_mutex_lock(&srv->mu);
    kc__entry *e = kc__store_find(s->r[SIM_POD], ns, name);
    kc__sim_pod_observe(s, ns, name, e ? e->obj : NULL);
    kc__sim_pod *p = e ? kc__sim_pod_find(s, ns, name) : NULL;
    json_t *doc = p ? kc__doc_from_obj(e->obj) : NULL;
    json_t *spec = json_object_get(doc, "spec");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *sched = json_string_value(json_object_get(spec, "schedulerName"));
    if (!doc || p->succeeded || p->failed) {
        /* nothing to run; a finished pod being deleted is removed at once by the delete */
    } else if (p->deleting) {
        if (p->node >= 0)
            stop_pod(s, e, doc, p);
    } else if (!node || !*node) {
        if (!sched || !strcmp(sched, "default-scheduler"))
            kc__sim_schedule(s, e, p);
    } else if (p->node >= 0) {
        int stage = next_stage(doc);
        uint64_t delay = stage == 3 ? (uint64_t)annotation_int(doc, "kcache.io/simulate-run-ms",
                                                               (int64_t)s->run_ms)
                                    : s->start_ms;
        if (stage && due(s, p, ns, name, delay))
            step(s, e, doc, p, stage);
    }
    json_decref(doc);
    pthread_mutex_unlock(&srv->mu);
}
