/*
 * schema.c — lookups in the generated built-in schemas (models.c): a model by name or by the
 * kind served at a group/version, a field of a model, and the Go type names the API server's
 * messages use. Binary searches over const tables: no index is built, nothing runs at start-up.
 * Thread-safety: pure functions over const data.
 */
#include "server/schema/schema.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int kc__schema_model(const char *name)
{
    size_t lo = 0, hi = kc__n_smodels;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(kc__smodels[mid].name, name);
        if (c == 0)
            return (int)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int kc__schema_model_for(const char *group, const char *version, const char *kind)
{
    char name[256], ver[32];
    snprintf(ver, sizeof(ver), "%s", version);
    ver[0] = (char)toupper((unsigned char)ver[0]);
    /* the group's first label, capitalised: "" → Core, "events.k8s.io" → Events */
    char g[64] = "Core";
    if (group[0]) {
        size_t n = strcspn(group, ".");
        if (n >= sizeof(g))
            n = sizeof(g) - 1;
        memcpy(g, group, n);
        g[n] = 0;
        g[0] = (char)toupper((unsigned char)g[0]);
    }
    snprintf(name, sizeof(name), "%s%s%s", g, ver, kind);
    int m = kc__schema_model(name);
    if (m >= 0)
        return m;
    snprintf(name, sizeof(name), "%s%s", ver, kind);
    return kc__schema_model(name);
}

const kc__sfield *kc__schema_field(int m, const char *name)
{
    if (m < 0 || (size_t)m >= kc__n_smodels)
        return NULL;
    const kc__sfield *f = &kc__sfields[kc__smodels[m].first];
    size_t lo = 0, hi = kc__smodels[m].n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(f[mid].name, name);
        if (c == 0)
            return &f[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Length of the "<Group>V<n>[alpha|beta<n>]" prefix of a model name, and the version in it. */
static size_t prefix_len(const char *name, char *ver, size_t cap)
{
    const char *v = name;
    if (isupper((unsigned char)v[0]) && v[0] != 'V')
        for (v++; *v && !(v[0] == 'V' && isdigit((unsigned char)v[1])); v++)
            ;
    if (!(v[0] == 'V' && isdigit((unsigned char)v[1])))
        return 0;
    const char *p = v + 1;
    while (isdigit((unsigned char)*p))
        p++;
    for (const char *q = p; *q && islower((unsigned char)*q); q++)
        if (!strncmp(q, "alpha", 5) || !strncmp(q, "beta", 4)) {
            p = q + (q[0] == 'a' ? 5 : 4);
            while (isdigit((unsigned char)*p))
                p++;
            break;
        }
    snprintf(ver, cap, "%.*s", (int)(p - v), v);
    ver[0] = 'v';
    return (size_t)(p - name);
}

void kc__schema_type_name(int m, char *out, size_t cap)
{
    char ver[32];
    const char *n = kc__smodels[m].name;
    snprintf(out, cap, "%s", n + prefix_len(n, ver, sizeof(ver)));
}

void kc__schema_go_type(int m, char *out, size_t cap)
{
    char ver[32] = "v1";
    const char *n = kc__smodels[m].name;
    size_t p = prefix_len(n, ver, sizeof(ver));
    snprintf(out, cap, "%s.%s", ver, n + p);
}
