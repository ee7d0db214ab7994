/*
 * str.c — small string helpers (kc__strdup_n, kc__streq, …).
 *
 * They exist so every subsystem handles NULL and non-NUL-terminated spans the same way.
 */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

char *kc__strdup_n(const char *s, size_t n)
{
    if (!s && n > 0)
        return NULL;
    size_t sz;
    if (!kc__size_add(n, 1, &sz))
        return NULL;
    char *d = malloc(sz);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *kc__strdup(const char *s)
{
    return s ? kc__strdup_n(s, strlen(s)) : NULL;
}

bool kc__streq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

bool kc__streq_n(const char *s, size_t n, const char *z)
{
    if (!z || (!s && n))
        return false;
    return strlen(z) == n && (n == 0 || memcmp(s, z, n) == 0);
}

bool kc__starts_with(const char *s, const char *prefix)
{
    if (!s || !prefix)
        return false;
    return strncmp(s, prefix, strlen(prefix)) == 0;
}
