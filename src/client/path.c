/*
 * path.c — REST paths and query strings for the Kubernetes API (apiserver-semantics §1.1–1.2).
 * Every component taken from the caller is percent-escaped, so names and selectors cannot
 * change the request's path or add query parameters.
 */
#include "client/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int kc__escape(kc__buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = 0;
    for (const unsigned char *p = (const unsigned char *)s; rc == 0 && *p; p++) {
        unsigned char ch = *p;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            rc = kc__buf_append_char(b, (char)ch);
        } else {
            char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
            rc = kc__buf_append(b, e, 3);
        }
    }
    return rc;
}

int kc__path(kc__buf *b, const kc_gvr *gvr, const char *ns, const char *name, const char *sub)
{
    if (!gvr || !gvr->version || !*gvr->version || !gvr->resource || !*gvr->resource)
        return KC_EINVAL;
    int rc;
    if (!gvr->group || !*gvr->group) {
        rc = kc__buf_append_str(b, "/api/");
    } else {
        rc = kc__buf_append_str(b, "/apis/");
        rc = rc ? rc : kc__escape(b, gvr->group);
        rc = rc ? rc : kc__buf_append_char(b, '/');
    }
    rc = rc ? rc : kc__escape(b, gvr->version);
    if (!rc && ns && *ns) {
        rc = kc__buf_append_str(b, "/namespaces/");
        rc = rc ? rc : kc__escape(b, ns);
    }
    rc = rc ? rc : kc__buf_append_char(b, '/');
    rc = rc ? rc : kc__escape(b, gvr->resource);
    if (!rc && name) {
        if (!*name)
            return KC_EINVAL;
        rc = kc__buf_append_char(b, '/');
        rc = rc ? rc : kc__escape(b, name);
    }
    if (!rc && sub && *sub) {
        rc = kc__buf_append_char(b, '/');
        rc = rc ? rc : kc__escape(b, sub);
    }
    return rc;
}

int kc__query(kc__buf *b, const char *key, const char *value)
{
    if (!value || !*value)
        return 0;
    int rc = kc__buf_append_char(b, memchr(b->data ? b->data : "", '?', b->len) ? '&' : '?');
    rc = rc ? rc : kc__buf_append_str(b, key);
    rc = rc ? rc : kc__buf_append_char(b, '=');
    return rc ? rc : kc__escape(b, value);
}

int kc__query_int(kc__buf *b, const char *key, int64_t value)
{
    char v[32];
    snprintf(v, sizeof v, "%" PRId64, value);
    return kc__query(b, key, v);
}
