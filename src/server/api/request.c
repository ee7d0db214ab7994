/*
 * request.c — what the verbs read from a request besides its route and query (http/route.c):
 * the dryRun value, the field manager of a non-apply write (fieldManager, else the User-Agent)
 * and the shardSelector (KEP-5866) as a parsed selector. Failures fill req->err (400/422) as the
 * API server words them. Thread-safety: request-local; the shard switch is an atomic.
 */
#include "server/api/api_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kc__dry_run_parse(const char *v, bool *ret, kc_error *err)
{
    if (!v || !*v) {
        *ret = false;
        return 0;
    }
    if (strcmp(v, "All") == 0) {
        *ret = true;
        return 0;
    }
    int rc = kc__fail(err, 422, "Invalid",
                      "dryRun: Unsupported value: \"%s\": supported values: "
                      "\"All\"",
                      v);
    kc__fail_cause(err, "FieldValueNotSupported", "dryRun", "supported values: \"All\"");
    return rc;
}

/* Printable ASCII or any byte of a UTF-8 sequence (upstream: unicode.IsPrint; the non-ASCII
 * classes are not checked here). */
static bool printable(unsigned char c)
{
    return c >= 0x20 && c != 0x7f;
}

int kc__write_manager(kc__req *req, char out[KC__FIELD_MANAGER_MAX + 1])
{
    out[0] = 0;
    const char *fm = req->q.field_manager;
    if (fm && *fm) {
        size_t n = strlen(fm);
        if (n > KC__FIELD_MANAGER_MAX) {
            int rc = kc__fail(&req->err, 422, "Invalid",
                              "fieldManager: Too long: may not be more than %d bytes",
                              KC__FIELD_MANAGER_MAX);
            kc__fail_cause(&req->err, "FieldValueTooLong", "fieldManager", "Too long");
            return rc;
        }
        for (size_t i = 0; i < n; i++) {
            if (!printable((unsigned char)fm[i])) {
                int rc = kc__fail(&req->err, 422, "Invalid",
                                  "fieldManager: Invalid value: \"%s\": must only contain "
                                  "printable characters",
                                  fm);
                kc__fail_cause(&req->err, "FieldValueInvalid", "fieldManager", "Invalid value");
                return rc;
            }
        }
        memcpy(out, fm, n + 1);
        return 0;
    }
    /* upstream prefixFromUserAgent: the part before the first '/', printable only, cut at the
     * limit ("kubectl/v1.30.0 (linux/amd64) …" → "kubectl"). */
    const char *ua = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "User-Agent");
    size_t o = 0;
    for (const char *p = ua; p && *p && *p != '/' && o < KC__FIELD_MANAGER_MAX; p++)
        if (printable((unsigned char)*p))
            out[o++] = *p;
    out[o] = 0;
    return 0;
}

int kc__shard_selector_of(kc__req *req, kc_shard_selector **ret)
{
    *ret = NULL;
    const char *text = req->q.shard_sel;
    if (!text || !*text || atomic_load(&req->srv->shard_ignored))
        return 0;
    kc_error perr = KC_ERROR_INIT;
    int rc = kc_shard_selector_parse(text, ret, &perr);
    if (rc == KC_ENOMEM)
        rc = kc_error_set(&req->err, KC_ENOMEM, "out of memory");
    else if (rc) { /* the parser's messages mostly carry upstream's prefix already */
        const char *m = perr.message ? perr.message : "parse error";
        static const char pre[] = "invalid shard selector: ";
        bool has = !strncmp(m, pre, sizeof(pre) - 1);
        rc = kc__fail(&req->err, 400, "BadRequest", "%s%s", has ? "" : pre, m);
    }
    kc_error_clear(&perr);
    return rc;
}
