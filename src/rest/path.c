/*
 * rest/path.c — REST paths and query strings for the Kubernetes API (apiserver-semantics §1.1–1.2).
 * Every component taken from the caller is percent-escaped, so names and selectors cannot
 * change the request's path or add query parameters. Components are also checked before they are
 * used (kc__gvr_check, kc__segment_check): an API server unescapes the path before routing, so an
 * escaped "namespaces/ns-1/pods" or "x/status" would still reach another URL. Group, version and
 * resource must have Kubernetes' own syntax; names and subresources follow client-go's
 * IsValidPathSegmentName (not "." or "..", no '/' or '%').
 */
#include "rest/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* DNS-1035 label: ≤ 63, [a-z]([-a-z0-9]*[a-z0-9])? (API versions: "v1", "v1beta1"). */
static bool is_dns1035_label(const char *s)
{
    return s[0] >= 'a' && s[0] <= 'z' && kc__is_dns1123_label(s, strlen(s));
}

int kc__gvr_check(const kc_gvr *gvr, kc_error *err)
{
    if (!gvr)
        return kc_error_set(err, KC_EINVAL, "gvr is NULL");
    const char *g = gvr->group ? gvr->group : "";
    if (*g && !kc__is_dns1123_subdomain(g, strlen(g)))
        return kc_error_set(
            err, KC_EINVAL,
            "bad gvr.group \"%.100s\": must be \"\" (the core group) or a lowercase "
            "DNS subdomain (e.g. \"apps\", \"example.com\")",
            g);
    if (!gvr->version || !is_dns1035_label(gvr->version))
        return kc_error_set(err, KC_EINVAL,
                            "bad gvr.version \"%.100s\": must be an API version, a lowercase "
                            "DNS-1035 label (e.g. \"v1\", \"v1beta1\")",
                            gvr->version ? gvr->version : "(null)");
    if (!gvr->resource || !kc__is_dns1123_label(gvr->resource, strlen(gvr->resource)))
        return kc_error_set(
            err, KC_EINVAL,
            "bad gvr.resource \"%.100s\": must be a resource's lowercase plural name "
            "(a-z, 0-9, inner '-'; at most 63; e.g. \"pods\"), not a path, "
            "subresource or query",
            gvr->resource ? gvr->resource : "(null)");
    return 0;
}

int kc__ns_check(const char *ns, kc_error *err)
{
    if (ns && *ns && !kc__is_dns1123_label(ns, strlen(ns)))
        return kc_error_set(err, KC_EINVAL,
                            "bad namespace \"%.100s\": must be a lowercase RFC 1123 label (a-z, "
                            "0-9, inner '-'; at most 63)",
                            ns);
    return 0;
}

int kc__segment_check(const char *what, const char *s, kc_error *err)
{
    if (!s || !*s)
        return kc_error_set(err, KC_EINVAL, "%s required", what);
    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || strpbrk(s, "/%"))
        return kc_error_set(err, KC_EINVAL,
                            "bad %s \"%.100s\": may not be '.' or '..' nor contain '/' or '%%'",
                            what, s);
    return 0;
}

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
