/*
 * names.c — Kubernetes name syntax (k8s.io/apimachinery/pkg/util/validation): qualified names
 * (label and annotation keys), label values, DNS-1123 subdomains and labels.
 *
 * Hand-written matchers for upstream's regular expressions; messages use upstream's wording so
 * errors the server returns read like a real API server's. Pure functions, thread-safe.
 */
#include "core/internal.h"

#include <string.h>

#define NAME_MAX_LEN   63
#define PREFIX_MAX_LEN 253
#define VALUE_MAX_LEN  63

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] — also the shape of a non-empty label value. */
static bool is_qualified_part(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

/* DNS-1123 subdomain: lowercase labels [a-z0-9]([-a-z0-9]*[a-z0-9])? joined by '.'. */
bool kc__is_dns1123_subdomain(const char *s, size_t n)
{
    if (n == 0 || n > PREFIX_MAX_LEN)
        return false;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != '.')
            j++;
        if (j == i)
            return false;
        for (size_t k = i; k < j; k++) {
            char c = s[k];
            bool lower_alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            if (!lower_alnum && !(c == '-' && k != i && k != j - 1))
                return false;
        }
        if (j == n)
            break;
        i = j + 1;
        if (i == n)
            return false; /* trailing '.' */
    }
    return true;
}

#define QUALIFIED_NAME_MSG                                                                         \
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "  \
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for " \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

/* NULL when key is a valid qualified name, else the reason. */
const char *kc__check_qualified_name(const char *s, size_t n)
{
    const char *slash = memchr(s, '/', n);
    const char *name = s;
    size_t name_len = n;
    if (slash) {
        size_t plen = (size_t)(slash - s);
        if (memchr(slash + 1, '/', n - plen - 1))
            return "a qualified name must consist of alphanumeric characters, '-', '_' or '.' "
                   "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
        if (plen == 0)
            return "prefix part must be non-empty";
        if (plen > PREFIX_MAX_LEN)
            return "prefix part must be no more than 253 characters";
        if (!kc__is_dns1123_subdomain(s, plen))
            return "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                   "alphanumeric characters, '-' or '.', and must start and end with an "
                   "alphanumeric character (e.g. 'example.com')";
        name = slash + 1;
        name_len = n - plen - 1;
    }
    if (name_len == 0)
        return "name part must be non-empty";
    if (name_len > NAME_MAX_LEN)
        return "name part must be no more than 63 characters";
    if (!is_qualified_part(name, name_len))
        return QUALIFIED_NAME_MSG;
    return NULL;
}

const char *kc__check_label_value(const char *s, size_t n)
{
    if (n > VALUE_MAX_LEN)
        return "must be no more than 63 characters";
    if (n > 0 && !is_qualified_part(s, n))
        return "a valid label must be an empty string or consist of alphanumeric characters, "
               "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
               "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
               "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    return NULL;
}

bool kc__is_dns1123_label(const char *s, size_t n)
{
    return n <= NAME_MAX_LEN && memchr(s, '.', n) == NULL && kc__is_dns1123_subdomain(s, n);
}
