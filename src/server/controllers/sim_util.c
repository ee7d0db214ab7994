/*
 * sim_util.c — what the simulated controllers share: timestamps, status conditions as upstream
 * keeps them (lastTransitionTime only on a change of status), the pod-template hash
 * (pod-template-hash, controller-revision-hash) and a pod built from a template with its
 * controller's ownerReference. Pure functions on jansson documents.
 */
#include "server/controllers/sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

void kc__sim_now(char out[32])
{
    kc__now_rfc3339(out);
}

void kc__sim_now_micro(char out[40])
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    time_t t = tv.tv_sec;
    gmtime_r(&t, &tm);
    snprintf(out, 40, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec);
}

static json_t *find_condition(const json_t *status, const char *type)
{
    json_t *conds = json_object_get(status, "conditions");
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, type))
            return c;
    }
    return NULL;
}

const char *kc__sim_condition(const json_t *status, const char *type)
{
    return json_string_value(json_object_get(find_condition(status, type), "status"));
}

void kc__sim_set_condition(json_t *status, const char *type, const char *st, const char *reason,
                           const char *msg, bool upd, bool probe)
{
    char now[32];
    kc__sim_now(now);
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    json_t *c = find_condition(status, type);
    const char *old_st = c ? json_string_value(json_object_get(c, "status")) : NULL;
    const char *old_reason = c ? json_string_value(json_object_get(c, "reason")) : NULL;
    const char *old_msg = c ? json_string_value(json_object_get(c, "message")) : NULL;
    bool same_st = old_st && !strcmp(old_st, st);
    bool same = same_st && (!reason || (old_reason && !strcmp(old_reason, reason))) &&
                (!msg || (old_msg && !strcmp(old_msg, msg)));
    if (same)
        return;
    if (!c) {
        c = json_object();
        json_array_append_new(conds, c);
    }
    json_object_set_new(c, "type", json_string(type));
    json_object_set_new(c, "status", json_string(st));
    if (probe)
        json_object_set_new(c, "lastProbeTime", json_null());
    if (upd)
        json_object_set_new(c, "lastUpdateTime", json_string(now));
    if (!same_st)
        json_object_set_new(c, "lastTransitionTime", json_string(now));
    if (reason)
        json_object_set_new(c, "reason", json_string(reason));
    else
        json_object_del(c, "reason");
    if (msg)
        json_object_set_new(c, "message", json_string(msg));
    else
        json_object_del(c, "message");
}

void kc__sim_template_hash(const json_t *tmpl, int64_t collisions, char out[16])
{
    /* upstream: fnv32a over the template (and the collision count), printed in decimal, then
     * each byte mapped into "bcdfghjklmnpqrstvwxz2456789" (rand.SafeEncodeString) */
    static const char alpha[] = "bcdfghjklmnpqrstvwxz2456789";
    json_t *t = json_deep_copy(tmpl);
    json_t *labels = json_object_get(json_object_get(t, "metadata"), "labels");
    json_object_del(labels, "pod-template-hash");
    char *text = t ? json_dumps(t, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(t);
    uint32_t h = 2166136261u;
    for (const char *p = text ? text : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    for (int64_t c = collisions; c > 0; c >>= 8)
        h = (h ^ (unsigned char)(c & 0xff)) * 16777619u;
    free(text);
    char dec[16];
    snprintf(dec, sizeof(dec), "%u", (unsigned)h);
    size_t i = 0;
    for (; dec[i] && i < 15; i++)
        out[i] = alpha[(unsigned char)dec[i] % (sizeof(alpha) - 1)];
    out[i] = 0;
}

int64_t kc__sim_int(const json_t *obj, const char *key, int64_t def)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

json_t *kc__sim_pod_from_template(const json_t *tmpl, const json_t *owner, const char *api_version,
                                  const char *kind, const char *name, const char *gen_name,
                                  const json_t *extra_labels)
{
    const json_t *om = json_object_get(owner, "metadata");
    const json_t *tm = json_object_get(tmpl, "metadata");
    json_t *spec = json_deep_copy(json_object_get(tmpl, "spec"));
    json_t *labels = json_deep_copy(json_object_get(tm, "labels"));
    if (!labels)
        labels = json_object();
    if (extra_labels)
        json_object_update(labels, (json_t *)extra_labels);
    json_t *meta = json_pack("{s:o, s:[{s:s, s:s, s:s?, s:s?, s:b, s:b}]}", "labels", labels,
                             "ownerReferences", "apiVersion", api_version, "kind", kind, "name",
                             json_string_value(json_object_get(om, "name")), "uid",
                             json_string_value(json_object_get(om, "uid")), "controller", 1,
                             "blockOwnerDeletion", 1);
    if (!meta || !spec) {
        json_decref(meta);
        json_decref(spec);
        return NULL;
    }
    json_t *ann = json_object_get(tm, "annotations");
    if (ann)
        json_object_set(meta, "annotations", ann);
    if (name)
        json_object_set_new(meta, "name", json_string(name));
    else
        json_object_set_new(meta, "generateName", json_string(gen_name));
    return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", meta,
                     "spec", spec);
}
