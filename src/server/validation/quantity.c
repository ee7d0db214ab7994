/*
 * quantity.c — resource.Quantity values for the container resource rules: parsing (the syntax
 * itself is checked when the body is decoded, schema/schema_check.c), comparison, and the
 * canonical String() the messages quote ("1500m", "1k", "1536Mi", "1e3"); and
 * ValidateContainerResourceRequirements' quantity rules: no negative quantity, integer values of
 * hugepages and extended resources, each request at most its limit ("must be less than or equal
 * to cpu limit of 1"), equal for resources that cannot be overcommitted, whose limit is then
 * required.
 * Design: a value is held exactly as an __int128 count of nano-units (finer fractions are rounded
 * up, as Quantity rounds to its nano scale); values beyond ~1e29 saturate. Cost: linear in the
 * string.
 */
#include "server/validation/validation_internal.h"

#include <stdio.h>
#include <string.h>

#define NANO      ((__int128)1000000000)
#define SATURATED (((__int128)1) << 120)

enum { F_DECIMAL_SI = 0, F_BINARY_SI = 1, F_DECIMAL_EXP = 2 };

static __int128 mul_sat(__int128 a, __int128 b)
{
    if (a == 0 || b == 0)
        return 0;
    if (a > SATURATED / b)
        return SATURATED;
    return a * b;
}

static __int128 pow_int(__int128 base, int e)
{
    __int128 r = 1;
    while (e-- > 0)
        r = mul_sat(r, base);
    return r;
}

/* The suffix's multiplier: base 10 exponent (*exp10) or power of 1024 (*exp1024). */
static bool suffix(const char *s, int *exp10, int *exp1024, int *format)
{
    static const char dec[] = "num kMGTPE"; /* exponents -9 -6 -3 0 3 … 18 */
    static const char bin[] = "KMGTPE";
    *exp10 = 0;
    *exp1024 = 0;
    *format = F_DECIMAL_SI;
    if (!*s)
        return true;
    if (s[1] == 'i' && !s[2] && strchr(bin, s[0])) {
        *exp1024 = (int)(strchr(bin, s[0]) - bin) + 1;
        *format = F_BINARY_SI;
        return true;
    }
    if (!s[1] && s[0] != ' ' && strchr(dec, s[0])) {
        *exp10 = ((int)(strchr(dec, s[0]) - dec) - 3) * 3;
        return true;
    }
    if (s[0] == 'e' || s[0] == 'E') {
        const char *p = s + 1;
        int sign = 1, e = 0;
        if (*p == '+' || *p == '-')
            sign = *p++ == '-' ? -1 : 1;
        if (!*p)
            return false;
        for (; *p; p++) {
            if (*p < '0' || *p > '9' || e > 1000)
                return false;
            e = e * 10 + (*p - '0');
        }
        *exp10 = sign * e;
        *format = F_DECIMAL_EXP;
        return true;
    }
    return false;
}

static bool parse_str(const char *s, kc__vquantity *q)
{
    bool neg = false;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    __int128 m = 0;
    int frac = -1, digits = 0; /* frac: digits after the point, -1 before it */
    for (; (*s >= '0' && *s <= '9') || *s == '.'; s++) {
        if (*s == '.') {
            if (frac >= 0)
                return false;
            frac = 0;
            continue;
        }
        digits++;
        m = mul_sat(m, 10) + (*s - '0');
        if (frac >= 0)
            frac++;
    }
    int e10, e1024;
    if (!digits || !suffix(s, &e10, &e1024, &q->format))
        return false;
    int shift = 9 + e10 - (frac > 0 ? frac : 0); /* nano = m * 10^shift * 1024^e1024 */
    __int128 v = mul_sat(m, pow_int(1024, e1024));
    if (shift >= 0) {
        v = mul_sat(v, pow_int(10, shift));
    } else {
        __int128 d = shift < -38 ? SATURATED : pow_int(10, -shift);
        v = v / d + (v % d != 0); /* rounded up to the nano scale */
    }
    q->nano = neg ? -v : v;
    return true;
}

bool kc__v_quantity_parse(const json_t *v, kc__vquantity *q)
{
    char num[64];
    if (json_is_integer(v)) {
        snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
        return parse_str(num, q);
    }
    if (json_is_real(v)) {
        snprintf(num, sizeof num, "%.15g", json_real_value(v));
        return parse_str(num, q);
    }
    return json_is_string(v) && parse_str(json_string_value(v), q);
}

static void i128_str(__int128 v, char *out, size_t cap)
{
    char tmp[48];
    int n = 0;
    bool neg = v < 0;
    unsigned __int128 u = neg ? (unsigned __int128)(-v) : (unsigned __int128)v;
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u && n < 46);
    size_t o = 0;
    if (neg && o + 1 < cap)
        out[o++] = '-';
    while (n > 0 && o + 1 < cap)
        out[o++] = tmp[--n];
    out[o] = 0;
}

void kc__v_quantity_string(const kc__vquantity *q, char *out, size_t cap)
{
    __int128 n = q->nano;
    if (n == 0) {
        snprintf(out, cap, "0");
        return;
    }
    __int128 a = n < 0 ? -n : n;
    if (q->format == F_BINARY_SI && a >= 1024 * NANO && a % NANO == 0) {
        static const char *const bs[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        __int128 b = n / NANO;
        int k = 0;
        while (k < 6 && b % 1024 == 0) {
            b /= 1024;
            k++;
        }
        char num[48];
        i128_str(b, num, sizeof num);
        snprintf(out, cap, "%s%s", num, bs[k]);
        return;
    }
    int e = -9;
    while (e < 18 && n % 1000 == 0) {
        n /= 1000;
        e += 3;
    }
    char num[48];
    i128_str(n, num, sizeof num);
    if (q->format == F_DECIMAL_EXP) {
        if (e)
            snprintf(out, cap, "%se%d", num, e);
        else
            snprintf(out, cap, "%s", num);
        return;
    }
    static const char *const ds[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    snprintf(out, cap, "%s%s", num, ds[(e + 9) / 3]);
}

/* IsOvercommitAllowed: native resources (no '/' or a kubernetes.io/ prefix) but hugepages. */
static bool overcommit_allowed(const char *name)
{
    bool native = !strchr(name, '/') || strstr(name, "kubernetes.io/") != NULL;
    return native && strncmp(name, "hugepages-", 10) != 0;
}

/* IsIntegerResourceName: extended resources (not native, not requests.*) and hugepages are not;
 * this covers the extended ones (a '/' outside kubernetes.io). */
static bool integer_resource(const char *name)
{
    return strchr(name, '/') && !strstr(name, "kubernetes.io/") && strncmp(name, "requests.", 9);
}

/* ValidateResourceQuantityValue at base[name]. */
static void quantity_value(kc__vlist *l, const char *base, const char *name, const kc__vquantity *q)
{
    char f[KC__VPATH], s[64];
    snprintf(f, sizeof f, "%s[%s]", base, name);
    kc__v_quantity_string(q, s, sizeof s);
    if (q->nano < 0)
        kc__v_invalid_s(l, f, s, "must be greater than or equal to 0");
    if (integer_resource(name) && q->nano % NANO != 0)
        kc__v_invalid_v(l, f, s, "must be an integer");
}

void kc__v_resources(kc__vlist *l, const char *field, const json_t *res)
{
    char lim[KC__VPATH], req[KC__VPATH];
    const json_t *limits = json_object_get(res, "limits");
    const json_t *requests = json_object_get(res, "requests");
    snprintf(lim, sizeof lim, "%s.limits", field);
    snprintf(req, sizeof req, "%s.requests", field);
    const char *name;
    json_t *v;
    kc__vquantity q, lq;
    json_object_foreach((json_t *)limits, name, v) if (kc__v_quantity_parse(v, &q))
        quantity_value(l, lim, name, &q);
    json_object_foreach((json_t *)requests, name, v)
    {
        if (!kc__v_quantity_parse(v, &q))
            continue;
        quantity_value(l, req, name, &q);
        const json_t *lv = json_object_get(limits, name);
        char qs[64], ls[64], d[256];
        if (lv && kc__v_quantity_parse(lv, &lq)) {
            kc__v_quantity_string(&q, qs, sizeof qs);
            kc__v_quantity_string(&lq, ls, sizeof ls);
            if (q.nano != lq.nano && !overcommit_allowed(name)) {
                snprintf(d, sizeof d, "must be equal to %s limit of %s", name, ls);
                kc__v_invalid_s(l, req, qs, d);
            } else if (q.nano > lq.nano) {
                snprintf(d, sizeof d, "must be less than or equal to %s limit of %s", name, ls);
                kc__v_invalid_s(l, req, qs, d);
            }
        } else if (!lv && !overcommit_allowed(name)) {
            kc__v_required(l, lim, "Limit must be set for non overcommitable resources");
        }
    }
}
