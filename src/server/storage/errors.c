/*
 * errors.c — API failures as a kc_error (HTTP status, reason, message, details, causes), the
 * form every room below the verbs returns them in; api/reply.c renders them as a metav1.Status.
 * The filling itself is the schema room's (kc__serr_*: one implementation, usable from below).
 * Thread-safe (no shared state).
 */
#include "server/storage/storage_internal.h"

#include "server/schema/schema.h"

#include <stdarg.h>

int kc__fail(kc_error *err, int http, const char *reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = kc__serr_v(err, http, reason, fmt, ap); /* the schema room's, as below */
    va_end(ap);
    return code;
}

/* details and causes: the schema room's helpers (one implementation; it cannot call up here) */
void kc__fail_details(kc_error *err, const char *name, const char *group, const char *kind)
{
    kc__serr_details(err, name, group, kind);
}

int kc__fail_cause(kc_error *err, const char *reason, const char *field, const char *msg)
{
    return kc__serr_cause(err, reason, field, msg);
}

int kc__fail_notfound(kc_error *err, const kc__rsrc *r, const char *name)
{
    char q[300];
    kc__rsrc_qualified(r, q, sizeof(q));
    int code = kc__fail(err, 404, "NotFound", "%s \"%s\" not found", q, name);
    kc__fail_details(err, name, r->group[0] ? r->group : NULL, r->plural);
    return code;
}

int kc__fail_generic(kc_error *err, int http)
{
    int code = http == 405 ? kc__fail(err, 405, "MethodNotAllowed",
                                      "the server does not allow this method on the requested "
                                      "resource")
                           : kc__fail(err, 404, "NotFound",
                                      "the server could not find the requested resource");
    kc__fail_details(err, "", NULL, NULL); /* empty StatusDetails: "details":{} */
    return code;
}
