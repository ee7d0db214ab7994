/*
 * enrich_keys.c — which label and annotation keys are emitted, and how they are spelled.
 *
 * Design: mmkubernetes' annotation_match (EF10) is a list of POSIX extended regexes matched
 * unanchored against the keys; a key is kept once however many patterns match. Filtering runs
 * first, on the original keys; then de-dotting (EF11) replaces every '.' of a kept key with the
 * separator (default "_"), and the optional de-slash (EF14, no anchor has it) every '/'. Values
 * are never changed. Output is a new jansson object in the input's key order.
 */
#include "enrich.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kc__enrich_filter_add(kc__enrich_filter *f, const char *pattern, char *msg, size_t n)
{
    if (f->n >= KC_ENRICH_MAX_MATCH) {
        snprintf(msg, n, "at most %d patterns", KC_ENRICH_MAX_MATCH);
        return -1;
    }
    int rc = regcomp(&f->re[f->n], pattern, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char why[128];
        regerror(rc, &f->re[f->n], why, sizeof why);
        snprintf(msg, n, "bad regular expression \"%s\": %s", pattern, why);
        return -1;
    }
    f->n++;
    return 0;
}

void kc__enrich_filter_free(kc__enrich_filter *f)
{
    for (int i = 0; i < f->n; i++)
        regfree(&f->re[i]);
    f->n = 0;
}

static bool kept(const kc__enrich_filter *f, const char *key)
{
    if (!f || !f->n)
        return true;
    for (int i = 0; i < f->n; i++)
        if (!regexec(&f->re[i], key, 0, NULL, 0))
            return true;
    return false;
}

/* key with '.' → dot_sep and '/' → slash_sep (NULL: kept); new malloc'd. */
static char *respell(const char *key, const char *dot_sep, const char *slash_sep)
{
    size_t dl = dot_sep ? strlen(dot_sep) : 1, sl = slash_sep ? strlen(slash_sep) : 1;
    size_t n = 0;
    for (const char *p = key; *p; p++)
        n += *p == '.' ? dl : *p == '/' ? sl : 1;
    char *out = malloc(n + 1), *d = out;
    if (!out)
        return NULL;
    for (const char *p = key; *p; p++) {
        const char *rep = *p == '.' ? dot_sep : *p == '/' ? slash_sep : NULL;
        if (rep) {
            size_t l = strlen(rep);
            memcpy(d, rep, l);
            d += l;
        } else {
            *d++ = *p;
        }
    }
    *d = '\0';
    return out;
}

json_t *kc__enrich_keys(json_t *obj, const kc__enrich_filter *f, const char *dot_sep,
                        const char *slash_sep)
{
    if (!json_is_object(obj))
        return NULL;
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        if (!out || !kept(f, k))
            continue;
        if (!dot_sep && !slash_sep) {
            json_object_set(out, k, v);
            continue;
        }
        char *nk = respell(k, dot_sep, slash_sep);
        if (nk)
            json_object_set(out, nk, v);
        free(nk);
    }
    return out;
}
