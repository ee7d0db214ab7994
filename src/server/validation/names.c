/*
 * names.c — the syntax checks of k8s.io/apimachinery/pkg/util/validation with their messages:
 * DNS-1123 labels and subdomains, qualified names (label and annotation keys: an optional DNS
 * subdomain prefix and '/', a name of at most 63 characters), label values, port names; each
 * message becomes one Invalid error on the caller's field, as upstream's callers do
 * (`field.Invalid(fldPath, value, msg)` for every message the check returns).
 * Design: hand-written character classes (no regex engine), linear in the string.
 */
#include "server/validation/validation_internal.h"

#include <stdio.h>
#include <string.h>

#define RE_EG(msg, re, eg) msg " (e.g. " eg "regex used for validation is '" re "')"
#define DNS1123_LABEL_MSG                                                                          \
    RE_EG("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "      \
          "'-', and must start and end with an alphanumeric character",                            \
          "[a-z0-9]([-a-z0-9]*[a-z0-9])?", "'my-name',  or '123-abc', ")
#define DNS1123_SUBDOMAIN_MSG                                                                      \
    RE_EG("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "    \
          "'-' or '.', and must start and end with an alphanumeric character",                     \
          "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", "'example.com', ")
#define QNAME_MSG                                                                                  \
    RE_EG("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "      \
          "with an alphanumeric character",                                                        \
          "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", "'MyName',  or 'my.name',  or '123-abc', ")
#define LABEL_VALUE_MSG                                                                            \
    RE_EG("a valid label must be an empty string or consist of alphanumeric characters, '-', "     \
          "'_' or '.', and must start and end with an alphanumeric character",                     \
          "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",                                           \
          "'MyValue',  or 'my_value',  or '12345', ")

static bool lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool alnum(char c)
{
    return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

bool kc__v_is_dns1123_label(const char *s, size_t n)
{
    if (n == 0 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!lower_alnum(s[i]) && s[i] != '-')
            return false;
    return true;
}

/* The DNS-1123 subdomain syntax over s[0..len) (its labels separated by '.'). */
static bool subdomain_n(const char *s, size_t len)
{
    const char *end = s + len;
    for (;;) {
        const char *dot = memchr(s, '.', (size_t)(end - s));
        size_t n = dot ? (size_t)(dot - s) : (size_t)(end - s);
        if (!kc__v_is_dns1123_label(s, n))
            return false;
        if (!dot)
            return true;
        s = dot + 1;
    }
}

bool kc__v_is_dns1123_subdomain(const char *s)
{
    return subdomain_n(s, strlen(s));
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..n) */
static bool qname_ok(const char *s, size_t n)
{
    if (n == 0 || !alnum(s[0]) || !alnum(s[n - 1]))
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!alnum(s[i]) && !strchr("-_.", s[i]))
            return false;
    return true;
}

static void max_len(kc__vlist *l, const char *field, const char *value, const char *prefix, int max)
{
    char msg[96];
    snprintf(msg, sizeof msg, "%smust be no more than %d characters", prefix, max);
    kc__v_invalid_s(l, field, value, msg);
}

void kc__v_dns1123_label(kc__vlist *l, const char *field, const char *value)
{
    size_t n = strlen(value);
    if (n > 63)
        max_len(l, field, value, "", 63);
    if (!kc__v_is_dns1123_label(value, n))
        kc__v_invalid_s(l, field, value, DNS1123_LABEL_MSG);
}

void kc__v_dns1123_subdomain(kc__vlist *l, const char *field, const char *value)
{
    if (strlen(value) > 253)
        max_len(l, field, value, "", 253);
    if (!kc__v_is_dns1123_subdomain(value))
        kc__v_invalid_s(l, field, value, DNS1123_SUBDOMAIN_MSG);
}

void kc__v_qualified_name(kc__vlist *l, const char *field, const char *value, const char *check)
{
    const char *slash = strchr(check, '/');
    const char *name = check;
    if (slash && strchr(slash + 1, '/')) {
        kc__v_invalid_s(l, field, value,
                        "a qualified name " QNAME_MSG " with an optional DNS subdomain prefix and "
                        "'/' (e.g. 'example.com/MyName')");
        return;
    }
    if (slash) {
        size_t pn = (size_t)(slash - check);
        name = slash + 1;
        if (pn == 0) {
            kc__v_invalid_s(l, field, value, "prefix part must be non-empty");
        } else {
            if (pn > 253)
                max_len(l, field, value, "prefix part ", 253);
            if (!subdomain_n(check, pn))
                kc__v_invalid_s(l, field, value, "prefix part " DNS1123_SUBDOMAIN_MSG);
        }
    }
    size_t n = strlen(name);
    if (n == 0)
        kc__v_invalid_s(l, field, value, "name part must be non-empty");
    else if (n > 63)
        max_len(l, field, value, "name part ", 63);
    if (!qname_ok(name, n))
        kc__v_invalid_s(l, field, value, "name part " QNAME_MSG);
}

void kc__v_label_value(kc__vlist *l, const char *field, const char *value)
{
    size_t n = strlen(value);
    if (n > 63)
        max_len(l, field, value, "", 63);
    if (n && !qname_ok(value, n))
        kc__v_invalid_s(l, field, value, LABEL_VALUE_MSG);
}

void kc__v_port_name(kc__vlist *l, const char *field, const char *value)
{
    size_t n = strlen(value);
    bool charset = n > 0, letter = false;
    for (size_t i = 0; i < n; i++) {
        charset &= lower_alnum(value[i]) || value[i] == '-';
        letter |= value[i] >= 'a' && value[i] <= 'z';
    }
    if (n > 15)
        max_len(l, field, value, "", 15);
    if (!charset)
        kc__v_invalid_s(l, field, value,
                        "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    if (!letter)
        kc__v_invalid_s(l, field, value, "must contain at least one letter (a-z)");
    if (strstr(value, "--"))
        kc__v_invalid_s(l, field, value, "must not contain consecutive hyphens");
    if (n && (value[0] == '-' || value[n - 1] == '-'))
        kc__v_invalid_s(l, field, value, "must not begin or end with a hyphen");
}

void kc__v_labels(kc__vlist *l, const char *field, const json_t *labels)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)labels, k, v)
    {
        kc__v_qualified_name(l, field, k, k);
        if (json_is_string(v))
            kc__v_label_value(l, field, json_string_value(v));
    }
}
