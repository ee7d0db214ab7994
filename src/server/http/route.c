/*
 * route.c — URL paths and query parameters of API requests (spec §1.1, §1.2).
 *
 * Paths: /api, /api/v1, /apis, /apis/{g}, /apis/{g}/{v}, then under a group-version prefix
 *   {res}[/{name}[/{sub}]]                  cluster-scoped, or all namespaces for a collection
 *   namespaces/{ns}/{res}[/{name}[/{sub}]]  namespaced
 *   namespaces/{name}[/status|/finalize]    the Namespace objects themselves
 *   watch/...                               deprecated watch paths (same shapes, watch=true)
 * Segments are bounded by the fixed buffers of kc__route (too long → not found).
 * Query: MHD's parsed GET arguments; booleans follow Convert_Slice_string_To_bool (false only for
 * "0" / "false"); integers must be decimal (400 otherwise). Thread-safe (no shared state).
 */
#include "server/http/http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool take(char *dst, size_t cap, const char *s, size_t n)
{
    if (n == 0 || n >= cap)
        return false;
    memcpy(dst, s, n);
    dst[n] = 0;
    return true;
}

#define MAX_SEGS 10

int kc__route_parse(const char *path, kc__route *ret)
{
    kc__route r;
    memset(&r, 0, sizeof(r));
    const char *seg[MAX_SEGS];
    size_t len[MAX_SEGS], n = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        if (n == MAX_SEGS)
            return KC_ENOTFOUND;
        const char *e = strchr(p, '/');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        seg[n] = p;
        len[n++] = l;
        p += l;
    }
    size_t i;
    if (n >= 1 && kc__streq_n(seg[0], len[0], "api")) {
        if (n == 1) {
            r.kind = KC__R_API;
            *ret = r;
            return 0;
        }
        if (!take(r.version, sizeof(r.version), seg[1], len[1]))
            return KC_ENOTFOUND;
        i = 2;
    } else if (n >= 1 && kc__streq_n(seg[0], len[0], "apis")) {
        if (n == 1) {
            r.kind = KC__R_APIS;
            *ret = r;
            return 0;
        }
        if (!take(r.group, sizeof(r.group), seg[1], len[1]))
            return KC_ENOTFOUND;
        if (n == 2) {
            r.kind = KC__R_GROUP;
            *ret = r;
            return 0;
        }
        if (!take(r.version, sizeof(r.version), seg[2], len[2]))
            return KC_ENOTFOUND;
        i = 3;
    } else {
        return KC_ENOTFOUND;
    }
    if (i == n) {
        r.kind = KC__R_GV;
        *ret = r;
        return 0;
    }
    if (kc__streq_n(seg[i], len[i], "watch")) {
        r.watch_path = true;
        i++;
    }
    size_t rest = n - i;
    if (rest == 0)
        return KC_ENOTFOUND;
    bool ns_path = kc__streq_n(seg[i], len[i], "namespaces") && rest >= 3 &&
                   !(rest == 3 && (kc__streq_n(seg[i + 2], len[i + 2], "status") ||
                                   kc__streq_n(seg[i + 2], len[i + 2], "finalize")));
    if (ns_path) {
        if (!take(r.ns, sizeof(r.ns), seg[i + 1], len[i + 1]))
            return KC_ENOTFOUND;
        r.has_ns = true;
        i += 2;
        rest -= 2;
    }
    if (rest > 3 || !take(r.plural, sizeof(r.plural), seg[i], len[i]))
        return KC_ENOTFOUND;
    if (rest >= 2) {
        if (!take(r.name, sizeof(r.name), seg[i + 1], len[i + 1]))
            return KC_ENOTFOUND;
        r.has_name = true;
    }
    if (rest == 3) {
        if (!take(r.sub, sizeof(r.sub), seg[i + 2], len[i + 2]))
            return KC_ENOTFOUND;
        r.has_sub = true;
    }
    r.kind = KC__R_RESOURCE;
    *ret = r;
    return 0;
}

/* ---- query ---------------------------------------------------------------------------------- */

bool kc__param_bool(const char *v)
{
    if (!v)
        return true;
    return !(strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0);
}

typedef struct qctx {
    kc__query *q;
} qctx;

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                              const char *value)
{
    kc__query *q = ((qctx *)cls)->q;
    static const struct {
        const char *name;
        size_t off;
    } strs[] = {
        {"resourceVersion", offsetof(kc__query, rv)},
        {"resourceVersionMatch", offsetof(kc__query, rv_match)},
        {"labelSelector", offsetof(kc__query, label_sel)},
        {"fieldSelector", offsetof(kc__query, field_sel)},
        {"continue", offsetof(kc__query, cont)},
        {"dryRun", offsetof(kc__query, dry_run)},
        {"fieldManager", offsetof(kc__query, field_manager)},
        {"fieldValidation", offsetof(kc__query, field_validation)},
        {"propagationPolicy", offsetof(kc__query, propagation)},
        {"limit", offsetof(kc__query, limit_s)},
        {"timeoutSeconds", offsetof(kc__query, timeout_s)},
        {"gracePeriodSeconds", offsetof(kc__query, grace_s)},
        {"includeObject", offsetof(kc__query, include_object)},
        {"shardSelector", offsetof(kc__query, shard_sel)},
    };
    for (size_t i = 0; i < KC__ARRAY_LEN(strs); i++) {
        if (strcmp(key, strs[i].name) == 0) {
            *(const char **)((char *)q + strs[i].off) = value ? value : "";
            return MHD_YES;
        }
    }
    if (strcmp(key, "watch") == 0) {
        q->watch = kc__param_bool(value);
        q->watch_set = true;
    } else if (strcmp(key, "allowWatchBookmarks") == 0) {
        q->bookmarks = kc__param_bool(value);
    } else if (strcmp(key, "sendInitialEvents") == 0) {
        q->send_initial = kc__param_bool(value);
        q->send_initial_set = true;
    } else if (strcmp(key, "force") == 0) {
        q->force = kc__param_bool(value);
        q->force_set = true;
    }
    return MHD_YES;
}

static int parse_int(const char *s, const char *name, int64_t *ret, kc_error *err)
{
    *ret = -1;
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < 0)
        return kc__fail(err, 400, "BadRequest", "invalid value for %s: \"%s\"", name, s);
    *ret = v;
    return 0;
}

int kc__query_parse(struct MHD_Connection *conn, kc__query *ret, kc_error *err)
{
    kc__query q;
    memset(&q, 0, sizeof(q));
    qctx c = {&q};
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, on_arg, &c);
    int rc;
    if ((rc = parse_int(q.limit_s, "limit", &q.limit, err)) != 0 ||
        (rc = parse_int(q.timeout_s, "timeoutSeconds", &q.timeout, err)) != 0 ||
        (rc = parse_int(q.grace_s, "gracePeriodSeconds", &q.grace, err)) != 0)
        return rc;
    *ret = q;
    return 0;
}
