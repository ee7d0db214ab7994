/*
 * sim_job.c — the Job controller of the simulated cluster (NonIndexed completion mode): up to
 * spec.parallelism (default 1) active pods at a time, "<job>-<5 random>" (generateName), until
 * spec.completions (default 1; unset with parallelism set: done once a pod succeeded and none
 * is active) pods Succeeded → conditions SuccessCriteriaMet and Complete (reason
 * CompletionsReached) and completionTime; more Failed pods than spec.backoffLimit (default 6) →
 * conditions FailureTarget and Failed (reason BackoffLimitExceeded), active pods deleted.
 * The kubelet (sim_kubelet.c) ends job pods after sim_pod_run_ms with the exit code of their
 * annotation kcache.io/simulate-exit-code (restartPolicy OnFailure is treated as Never: a failed
 * pod is replaced, not restarted). Status: startTime, active, ready, succeeded, failed,
 * terminating, uncountedTerminatedPods, conditions, completionTime. Not simulated: Indexed mode,
 * suspend, activeDeadlineSeconds, podFailurePolicy, backoff delays.
 */
#include "server/controllers/sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void delete_active(kc__sim *s, const char *uid)
{
    for (size_t i = 0; i < s->pods.cap; i++) {
        kc__sim_pod *p = (kc__sim_pod *)KC__HTAB_AT(&s->pods, i);
        if (!p || strcmp(p->owner_uid, uid) != 0 || p->deleting || p->succeeded || p->failed)
            continue;
        const char *ns = p->key, *name = p->key + strlen(p->key) + 1;
        kc__entry *e = kc__store_find(s->r[SIM_POD], ns, name);
        if (e) {
            kc__sim_delete(s, s->r[SIM_POD], e);
            i = (size_t)-1;
        }
    }
}

static bool finished(const json_t *st)
{
    const char *c = kc__sim_condition(st, "Complete"), *f = kc__sim_condition(st, "Failed");
    return (c && !strcmp(c, "True")) || (f && !strcmp(f, "True"));
}

static void start_pods(kc__sim *s, const char *ns, const char *name, json_t *doc, int64_t n)
{
    char gen[80];
    snprintf(gen, sizeof(gen), "%.57s-", name);
    json_t *extra = json_pack("{s:s, s:s}", "batch.kubernetes.io/job-name", name, "job-name", name);
    for (int64_t k = 0; k < n; k++) {
        json_t *pod =
            kc__sim_pod_from_template(json_object_get(json_object_get(doc, "spec"), "template"),
                                      doc, "batch/v1", "Job", NULL, gen, extra);
        int rc = pod ? kc__sim_create(s, s->r[SIM_POD], ns, pod, false, NULL) : KC_ENOMEM;
        json_decref(pod);
        if (rc)
            break;
    }
    json_decref(extra);
}

void kc__sim_reconcile_job(kc__sim *s, const char *ns, const char *name)
{
    pthread_mutex_lock(&s->srv->mu);
    kc__entry *e = kc__store_find(s->r[SIM_JOB], ns, name);
    json_t *doc = e && !kc_obj_deleting(e->obj) ? kc__doc_from_obj(e->obj) : NULL;
    json_t *st = json_object_get(doc, "status");
    if (!doc || finished(st))
        goto out;
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(doc, "status", st);
    }
    char uid[64], now[32];
    snprintf(uid, sizeof(uid), "%s", kc_obj_uid(e->obj));
    kc__sim_now(now);
    json_t *spec = json_object_get(doc, "spec");
    int64_t par = kc__sim_int(spec, "parallelism", 1);
    json_t *cj = json_object_get(spec, "completions");
    int64_t comp = json_is_integer(cj) ? (int64_t)json_integer_value(cj) : -1;
    int64_t backoff = kc__sim_int(spec, "backoffLimit", 6);
    kc__sim_count c;
    kc__sim_count_pods(s, ns, uid, NULL, &c);
    bool failed = c.failed > backoff;
    bool done = !failed && (comp >= 0 ? c.succeeded >= comp : c.succeeded > 0 && !c.active);
    if (failed) {
        delete_active(s, uid);
        kc__sim_set_condition(st, "FailureTarget", "True", "BackoffLimitExceeded",
                              "Job has reached the specified backoff limit", false, true);
        kc__sim_set_condition(st, "Failed", "True", "BackoffLimitExceeded",
                              "Job has reached the specified backoff limit", false, true);
    } else if (done) {
        kc__sim_set_condition(st, "SuccessCriteriaMet", "True", "CompletionsReached",
                              "Reached expected number of succeeded pods", false, true);
        kc__sim_set_condition(st, "Complete", "True", "CompletionsReached",
                              "Reached expected number of succeeded pods", false, true);
        json_object_set_new(st, "completionTime", json_string(now));
    } else {
        int64_t want = comp >= 0 ? comp - c.succeeded : (c.succeeded ? 0 : par);
        if (want > par)
            want = par;
        if (want > c.active)
            start_pods(s, ns, name, doc, want - c.active);
    }
    kc__sim_count_pods(s, ns, uid, NULL, &c);
    if (!json_object_get(st, "startTime"))
        json_object_set_new(st, "startTime", json_string(now));
    json_object_set_new(st, "active", json_integer(c.active));
    json_object_set_new(st, "ready", json_integer(c.ready));
    json_object_set_new(st, "terminating", json_integer(0));
    json_object_set_new(st, "uncountedTerminatedPods", json_object());
    if (c.active == 0)
        json_object_del(st, "active");
    if (c.succeeded)
        json_object_set_new(st, "succeeded", json_integer(c.succeeded));
    if (c.failed)
        json_object_set_new(st, "failed", json_integer(c.failed));
    if ((e = kc__store_find(s->r[SIM_JOB], ns, name)))
        kc__sim_update(s, s->r[SIM_JOB], e, doc, SIM_STATUS, NULL);
out:
    json_decref(doc);
    pthread_mutex_unlock(&s->srv->mu);
}
