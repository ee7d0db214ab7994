/*
 * negotiate.c — Accept header handling of the embedded API server (spec §6.2, #23–#25).
 *
 * The Accept list is scanned in order; of the entries the server can produce, the one with the
 * highest q-value wins (ties: the first listed; q=0 means "not acceptable"):
 *   application/json (and the wildcards "*" "/" "*", application/ "*"): plain JSON, or with
 * parameters as=Table;g=meta.k8s.io;v=v1|v1beta1 → Table,
 *     as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1|v1beta1 → metadata only,
 *     as=APIGroupDiscoveryList;g=apidiscovery.k8s.io → skipped (legacy discovery only, #4);
 *   application/vnd.kubernetes.protobuf (no as=): protobuf for built-in kinds — KC__FMT_PROTO_JSON
 *     when a plain JSON entry is acceptable too (custom resources then get JSON), else
 *     KC__FMT_PROTO (custom resources → 406, as upstream; api/encode.c kc__fmt_for);
 *   anything else (protobuf as=Table, yaml, cbor) is skipped. None left → 406 (#25).
 * Thread-safe.
 */
#include "server/http/http.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Copy one parameter's value (trimmed) from params into out. */
static bool param(const char *params, size_t n, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    const char *p = params, *end = params + n;
    while (p < end) {
        while (p < end && (*p == ';' || *p == ' ' || *p == '\t'))
            p++;
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *stop = semi ? semi : end;
        if ((size_t)(stop - p) > kl && strncasecmp(p, key, kl) == 0 && p[kl] == '=') {
            const char *v = p + kl + 1;
            while (stop > v && (stop[-1] == ' ' || stop[-1] == '\t'))
                stop--;
            size_t vl = (size_t)(stop - v);
            if (vl >= cap)
                return false;
            memcpy(out, v, vl);
            out[vl] = 0;
            return true;
        }
        p = stop;
    }
    return false;
}

/* The q-value of an entry's parameters, in thousandths (1000 when absent or malformed). */
static int qvalue(const char *params, size_t n)
{
    char q[16];
    if (!params || !param(params, n, "q", q, sizeof(q)))
        return 1000;
    char *end;
    double v = strtod(q, &end);
    if (end == q || v < 0 || v > 1)
        return 1000;
    return (int)(v * 1000 + 0.5);
}

/* 1 = usable (fmt set), 0 = skip. */
static int one(const char *s, size_t n, enum kc__fmt *fmt)
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    const char *semi = memchr(s, ';', n);
    size_t tl = semi ? (size_t)(semi - s) : n;
    while (tl && (s[tl - 1] == ' ' || s[tl - 1] == '\t'))
        tl--;
    if (tl == 35 && strncasecmp(s, "application/vnd.kubernetes.protobuf", 35) == 0) {
        char as[64];
        if (semi && param(semi, n - (size_t)(semi - s), "as", as, sizeof(as)))
            return 0; /* Table / PartialObjectMetadata in protobuf: not served */
        *fmt = KC__FMT_PROTO;
        return 1;
    }
    bool json = (tl == 16 && strncasecmp(s, "application/json", 16) == 0) ||
                (tl == 3 && strncmp(s, "*/*", 3) == 0) ||
                (tl == 13 && strncasecmp(s, "application/*", 13) == 0);
    if (!json)
        return 0;
    if (!semi) {
        *fmt = KC__FMT_JSON;
        return 1;
    }
    const char *ps = semi;
    size_t pn = n - (size_t)(semi - s);
    char as[64], g[64], v[32];
    if (!param(ps, pn, "as", as, sizeof(as))) {
        *fmt = KC__FMT_JSON;
        return 1;
    }
    if (!param(ps, pn, "g", g, sizeof(g)) || strcmp(g, "meta.k8s.io") != 0)
        return 0;
    if (!param(ps, pn, "v", v, sizeof(v)) || (strcmp(v, "v1") != 0 && strcmp(v, "v1beta1") != 0))
        return 0;
    if (strcmp(as, "Table") == 0) {
        *fmt = KC__FMT_TABLE;
        return 1;
    }
    if (strcmp(as, "PartialObjectMetadata") == 0 || strcmp(as, "PartialObjectMetadataList") == 0) {
        *fmt = KC__FMT_PARTIAL;
        return 1;
    }
    return 0;
}

int kc__negotiate(const char *accept, enum kc__fmt *ret, kc_error *err)
{
    if (!accept || !*accept) {
        *ret = KC__FMT_JSON;
        return 0;
    }
    const char *p = accept;
    int best_q = 0;
    bool json_ok = false;
    enum kc__fmt best = KC__FMT_JSON;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        enum kc__fmt f;
        if (one(p, n, &f)) {
            const char *semi = memchr(p, ';', n);
            int q = qvalue(semi, semi ? n - (size_t)(semi - p) : 0);
            if (q > 0 && f == KC__FMT_JSON)
                json_ok = true;
            if (q > best_q)
                best_q = q, best = f;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    if (best_q > 0) {
        *ret = best == KC__FMT_PROTO && json_ok ? KC__FMT_PROTO_JSON : best;
        return 0;
    }
    return kc__fail(err, 406, "NotAcceptable",
                    "only the following media types are accepted: application/json, "
                    "application/vnd.kubernetes.protobuf (built-in kinds), "
                    "application/json;as=Table;v=v1;g=meta.k8s.io, "
                    "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io");
}
