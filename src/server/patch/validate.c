/*
 * validate.c — object names (DNS-1123 subdomain / label, path segment) with the exact messages of
 * k8s.io/apimachinery/pkg/util/validation (#14), generateName suffixes (#11), version-4 UUIDs and
 * RFC 3339 timestamps (#9).
 *
 * DNS-1035 labels (Service names) too; generateName checked as a prefix (a trailing '-' allowed)
 * and reported with the name's failure as upstream's list ("[metadata.generateName: …,
 * metadata.name: …]").
 * Design: validation is hand-written character classes (no regex engine); the failure is one
 * cause {reason, field:"metadata.name", message} on a KC_EUNPROCESSABLE kc_error whose
 * kind/name/reason /http_status are filled so server-core can render the Status as upstream does:
 *   ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase …
 * Random values come from a splitmix64 step on the caller's 64-bit state (not for crypto).
 * Thread-safe: no shared state but the test clock offset (an atomic, kc__clock_advance).
 */
#include "server/patch/validate.h"

#include "core/internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DNS1123_SUBDOMAIN_MSG                                                                      \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define DNS1123_LABEL_MSG                                                                          \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "     \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

#define DNS1035_LABEL_MSG                                                                          \
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "   \
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "           \
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"

/* Longest name we quote back into a message (longer ones are cut with "..."). */
#define QUOTE_MAX 300

static bool is_alnum_lower(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* One DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])? */
static bool label_ok(const char *s, size_t n)
{
    if (n == 0 || !is_alnum_lower(s[0]) || !is_alnum_lower(s[n - 1]))
        return false;
    for (size_t i = 1; i + 1 < n; i++) {
        if (!is_alnum_lower(s[i]) && s[i] != '-')
            return false;
    }
    return true;
}

static bool subdomain_ok(const char *s)
{
    for (;;) {
        size_t n = strcspn(s, ".");
        if (!label_ok(s, n))
            return false;
        if (s[n] == '\0')
            return true;
        s += n + 1;
    }
}

/* Go's %q of s, approximately: quotes, backslash escapes, \xNN for control bytes; names longer
 * than QUOTE_MAX are cut with "...". New malloc'd string (caller frees); NULL on ENOMEM. */
static char *quote(const char *s)
{
    kc__buf b = KC__BUF_INIT(0);
    int rc = kc__buf_append_char(&b, '"');
    for (size_t i = 0; rc == 0 && s[i] && i < QUOTE_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            rc = kc__buf_printf(&b, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            rc = kc__buf_printf(&b, "\\x%02x", c);
        else
            rc = kc__buf_append_char(&b, (char)c);
    }
    if (rc == 0 && strlen(s) > QUOTE_MAX)
        rc = kc__buf_append_str(&b, "...");
    if (rc == 0)
        rc = kc__buf_append_char(&b, '"');
    if (rc < 0) {
        kc__buf_free(&b);
        return NULL;
    }
    return kc__buf_steal(&b, NULL);
}

/* Fill err with an Invalid (or Required) failure of field (value) of the object named objname. */
static int name_invalid(kc_error *err, const char *kind, const char *objname, const char *field,
                        const char *value, const char *cause_reason, const char *detail)
{
    char *q = quote(objname), *qv = quote(value);
    char *cause_msg = NULL;
    int code = KC_EUNPROCESSABLE;
    if (q && qv && strcmp(cause_reason, "FieldValueRequired") == 0)
        cause_msg = kc__strdup(detail);
    else if (q && qv && asprintf(&cause_msg, "Invalid value: %s: %s", qv, detail) < 0)
        cause_msg = NULL;
    free(qv);
    if (!cause_msg) {
        free(q);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    kc_error_set(err, code, "%s %s is invalid: %s: %s", kind ? kind : "Object", q, field,
                 cause_msg);
    free(q);
    if (!err) {
        free(cause_msg);
        return code;
    }
    err->http_status = 422;
    err->reason = kc__strdup("Invalid");
    err->kind = kc__strdup(kind ? kind : "");
    err->name = kc__strdup(objname);
    err->causes = calloc(1, sizeof *err->causes);
    if (err->causes) {
        err->n_causes = 1;
        err->causes[0].reason = kc__strdup(cause_reason);
        err->causes[0].field = kc__strdup(field);
        err->causes[0].message = cause_msg;
    } else {
        free(cause_msg);
    }
    return code;
}

/* The first message of rule's check of name, NULL when it passes. */
static const char *rule_message(const char *name, kc__name_rule rule)
{
    size_t n = strlen(name);
    switch (rule) {
    case KC__NAME_DNS1123_SUBDOMAIN:
        if (n > 253)
            return "must be no more than 253 characters";
        return subdomain_ok(name) ? NULL : DNS1123_SUBDOMAIN_MSG;
    case KC__NAME_DNS1123_LABEL:
        if (n > 63)
            return "must be no more than 63 characters";
        return label_ok(name, n) ? NULL : DNS1123_LABEL_MSG;
    case KC__NAME_DNS1035_LABEL:
        if (n > 63)
            return "must be no more than 63 characters";
        return label_ok(name, n) && name[0] >= 'a' && name[0] <= 'z' ? NULL : DNS1035_LABEL_MSG;
    case KC__NAME_PATH_SEGMENT:
        if (strcmp(name, ".") == 0)
            return "may not be '.'";
        if (strcmp(name, "..") == 0)
            return "may not be '..'";
        if (strchr(name, '/'))
            return "may not contain '/'";
        if (strchr(name, '%'))
            return "may not contain '%'";
        return NULL;
    }
    return NULL;
}

int kc__validate_name(const char *name, kc__name_rule rule, const char *kind, kc_error *err)
{
    if (rule < KC__NAME_DNS1123_SUBDOMAIN || rule > KC__NAME_DNS1035_LABEL)
        return kc_error_set(err, KC_EINVAL, "unknown name rule %d", (int)rule);
    if (!name || !*name)
        return name_invalid(err, kind, "", "metadata.name", "", "FieldValueRequired",
                            "Required value: name or generateName is required");
    const char *msg = rule_message(name, rule);
    return msg ? name_invalid(err, kind, name, "metadata.name", name, "FieldValueInvalid", msg) : 0;
}

/* "<field>: <cause message>" of a one-cause name failure, appended to b. */
static void cause_text(kc__buf *b, const kc_error *e)
{
    kc__buf_printf(b, "%s: %s", e->causes[0].field, e->causes[0].message);
}

int kc__validate_object_name(const char *name, const char *generate_name, kc__name_rule rule,
                             const char *kind, kc_error *err)
{
    int nrc = kc__validate_name(name, rule, kind, err);
    if (!generate_name || !*generate_name || nrc == KC_EINVAL || nrc == KC_ENOMEM)
        return nrc;
    /* maskTrailingDash: a prefix may end with '-' */
    size_t n = strlen(generate_name);
    char *masked = kc__strdup(generate_name);
    if (!masked)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    if (n > 1 && masked[n - 1] == '-') {
        masked[n - 2] = 'a';
        masked[n - 1] = '\0';
    }
    const char *msg = rule_message(masked, rule);
    free(masked);
    if (!msg)
        return nrc;
    kc_error g = KC_ERROR_INIT;
    int grc = name_invalid(&g, kind, name ? name : "", "metadata.generateName", generate_name,
                           "FieldValueInvalid", msg);
    if (grc != KC_EUNPROCESSABLE || !err || !g.n_causes) {
        kc_error_clear(&g);
        return grc != KC_EUNPROCESSABLE ? kc_error_set(err, KC_ENOMEM, "out of memory") : grc;
    }
    if (nrc == 0 || !err->n_causes) { /* generateName alone: g is the failure */
        kc_error_clear(err);
        *err = g;
        return grc;
    }
    /* both: "[metadata.generateName: …, metadata.name: …]", generateName's cause first */
    kc__buf b = KC__BUF_INIT(0);
    char *q = quote(name ? name : "");
    kc__buf_printf(&b, "%s %s is invalid: [", kind ? kind : "Object", q ? q : "\"\"");
    cause_text(&b, &g);
    kc__buf_append_str(&b, ", ");
    cause_text(&b, err);
    kc__buf_append_char(&b, ']');
    free(q);
    kc_cause *c = realloc(g.causes, 2 * sizeof(*c));
    if (!b.data || !c) {
        kc__buf_free(&b);
        if (c)
            g.causes = c;
        kc_error_clear(&g);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    g.causes = c;
    g.causes[1] = err->causes[0];
    g.n_causes = 2;
    err->n_causes = 0;
    free(err->causes);
    err->causes = NULL;
    kc_error_clear(err);
    *err = g;
    free(err->message);
    err->message = kc__buf_steal(&b, NULL);
    return KC_EUNPROCESSABLE;
}

/* splitmix64: advances *state, returns the next value. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void kc__generate_name_suffix(uint64_t *rng_state, char out[6])
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    const uint64_t n = sizeof alphabet - 1; /* 27 */
    for (int i = 0; i < 5; i++) {
        /* Multiply-shift maps 64 random bits onto [0, n) with negligible bias. */
        uint64_t r = splitmix64(rng_state);
        out[i] = alphabet[(uint64_t)(((unsigned __int128)r * n) >> 64)];
    }
    out[5] = '\0';
}

void kc__uuid_v4(uint64_t *rng_state, char out[37])
{
    unsigned char b[16];
    uint64_t hi = splitmix64(rng_state), lo = splitmix64(rng_state);
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)(hi >> (56 - 8 * i));
        b[8 + i] = (unsigned char)(lo >> (56 - 8 * i));
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 15];
    }
    out[o] = '\0';
}

/* Seconds added to the wall clock of every server timestamp (tests only; 0 in production). */
static _Atomic int64_t clock_offset_s;

void kc__clock_advance(int64_t seconds)
{
    atomic_fetch_add(&clock_offset_s, seconds);
}

void kc__now_rfc3339(char out[32])
{
    time_t t = time(NULL) + (time_t)atomic_load(&clock_offset_s);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        strcpy(out, "1970-01-01T00:00:00Z");
}
