/*
 * proto_encode.c — JSON → protobuf wire format over the generated field table (proto_schema.h),
 * the inverse of proto_decode.c: the bodies of protobuf responses (objects, lists, watch
 * events) and the test/fuzz corpora. Fields are written in ascending field number, as
 * gogo-protobuf does; map entries in sorted key order (Go's deterministic marshal); keys the
 * table doesn't know and values of the wrong JSON type are skipped (a real server drops unknown
 * fields when it decodes). Special messages take their Go MarshalJSON forms back (RFC 3339 →
 * seconds/nanos, Go duration → nanoseconds, int|string → IntOrString, embedded JSON → raw).
 * Nesting deeper than KC__PB_MAX_DEPTH fails with KC_EINVAL. Thread-safe (no state).
 */
#include "server/api/proto_schema.h"

#include <inttypes.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int kc__pb_put_varint(kc__buf *out, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            b[n] |= 0x80;
        n++;
    } while (v);
    return kc__buf_append(out, b, n);
}

static int put_tag(kc__buf *out, uint32_t num, unsigned wt)
{
    return kc__pb_put_varint(out, ((uint64_t)num << 3) | wt);
}

int kc__pb_put_bytes(kc__buf *out, uint32_t num, const void *p, size_t n)
{
    int rc = put_tag(out, num, 2);
    if (!rc)
        rc = kc__pb_put_varint(out, n);
    return rc || !n ? rc : kc__buf_append(out, p, n);
}

static int put_varint_field(kc__buf *out, uint32_t num, uint64_t v)
{
    int rc = put_tag(out, num, 0);
    return rc ? rc : kc__pb_put_varint(out, v);
}

static int put_fixed(kc__buf *out, uint32_t num, uint64_t v, size_t n)
{
    uint8_t b[8];
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    int rc = put_tag(out, num, n == 8 ? 1 : 5);
    return rc ? rc : kc__buf_append(out, b, n);
}

/* Standard base64 (Go's []byte JSON form) → bytes; -1 when not valid. */
static int unb64(const char *s, size_t n, uint8_t **ret, size_t *len)
{
    if (n % 4)
        return -1;
    uint8_t *o = malloc(n / 4 * 3 + 1);
    if (!o)
        return -1;
    int got = n ? EVP_DecodeBlock(o, (const unsigned char *)s, (int)n) : 0;
    if (got < 0) {
        free(o);
        return -1;
    }
    size_t pad = n && s[n - 1] == '=' ? (n > 1 && s[n - 2] == '=' ? 2 : 1) : 0;
    *ret = o;
    *len = (size_t)got - pad;
    return 0;
}

static int scalar(kc__buf *out, const kc__pbfield *f, const json_t *v)
{
    switch (f->kind) {
    case KC__PBK_STRING:
        return json_is_string(v)
                   ? kc__pb_put_bytes(out, f->num, json_string_value(v), json_string_length(v))
                   : 0;
    case KC__PBK_BYTES: {
        uint8_t *b;
        size_t n;
        if (!json_is_string(v) || unb64(json_string_value(v), json_string_length(v), &b, &n))
            return 0;
        int rc = kc__pb_put_bytes(out, f->num, b, n);
        free(b);
        return rc;
    }
    case KC__PBK_BOOL:
        return json_is_boolean(v) ? put_varint_field(out, f->num, json_is_true(v)) : 0;
    case KC__PBK_DOUBLE:
    case KC__PBK_FLOAT: {
        if (!json_is_number(v))
            return 0;
        double d = json_number_value(v);
        uint64_t u = 0;
        if (f->kind == KC__PBK_FLOAT) {
            float x = (float)d;
            uint32_t w;
            memcpy(&w, &x, sizeof(w));
            u = w;
        } else {
            memcpy(&u, &d, sizeof(u));
        }
        return put_fixed(out, f->num, u, f->kind == KC__PBK_FLOAT ? 4 : 8);
    }
    default: { /* integers; int32 negatives sign-extended to 10 bytes, as Go does */
        json_int_t i;
        if (json_is_integer(v))
            i = json_integer_value(v);
        else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
                 fabs(json_real_value(v)) < 9e18)
            i = (json_int_t)json_real_value(v);
        else
            return 0;
        if (f->kind == KC__PBK_INT32)
            i = (int32_t)i;
        else if (f->kind == KC__PBK_UINT32)
            i = (uint32_t)i;
        return put_varint_field(out, f->num, (uint64_t)i);
    }
    }
}

static int encode_value(kc__buf *out, const json_t *v, int mi, int depth);

/* Field f holding message mi with JSON value v: a length-delimited nested body. */
static int sub(kc__buf *out, uint32_t num, const json_t *v, int mi, int depth)
{
    kc__buf b = KC__BUF_INIT(0);
    int rc = encode_value(&b, v, mi, depth + 1);
    if (!rc)
        rc = kc__pb_put_bytes(out, num, b.data, b.len);
    kc__buf_free(&b);
    return rc;
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int map_field(kc__buf *out, const kc__pbfield *f, const json_t *v, int depth)
{
    if (!json_is_object(v))
        return 0;
    size_t n = json_object_size(v), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof(*keys));
    if (!keys)
        return KC_ENOMEM;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) keys[i++] = k;
    qsort(keys, n, sizeof(*keys), cmp_keys);
    const kc__pbmsg *em = &kc__pb_msgs[f->msg];
    const kc__pbfield *vf = &kc__pb_fields[em->first + 1];
    int rc = 0;
    for (i = 0; i < n && !rc; i++) {
        kc__buf e = KC__BUF_INIT(0);
        const json_t *val = json_object_get(v, keys[i]);
        rc = kc__pb_put_bytes(&e, 1, keys[i], strlen(keys[i]));
        if (!rc && !json_is_null(val))
            rc = vf->kind == KC__PBK_MSG ? sub(&e, 2, val, vf->msg, depth) : scalar(&e, vf, val);
        if (!rc)
            rc = kc__pb_put_bytes(out, f->num, e.data, e.len);
        kc__buf_free(&e);
    }
    free(keys);
    return rc;
}

static int one(kc__buf *out, const kc__pbfield *f, const json_t *v, int depth)
{
    if (json_is_null(v))
        return 0;
    return f->kind == KC__PBK_MSG ? sub(out, f->num, v, f->msg, depth) : scalar(out, f, v);
}

static int fields(kc__buf *out, const json_t *obj, int mi, int depth)
{
    const kc__pbmsg *m = &kc__pb_msgs[mi];
    if (!json_is_object(obj))
        return 0;
    int rc = 0;
    for (size_t i = 0; i < m->n && !rc; i++) {
        const kc__pbfield *f = &kc__pb_fields[m->first + i];
        if (f->flags & KC__PBF_INLINE) {
            rc = sub(out, f->num, obj, f->msg, depth);
            continue;
        }
        const json_t *v = json_object_get(obj, f->json);
        if (!v || json_is_null(v))
            continue;
        if (f->kind == KC__PBK_MAP) {
            rc = map_field(out, f, v, depth);
        } else if (f->flags & KC__PBF_REP) {
            size_t j;
            json_t *x;
            if (json_is_array(v))
                json_array_foreach((json_t *)v, j, x) if (!rc) rc = one(out, f, x, depth);
        } else {
            rc = one(out, f, v, depth);
        }
    }
    return rc;
}

/* RFC 3339 ("2006-01-02T15:04:05[.frac](Z|±hh:mm)") → seconds and nanos; -1 when not one. */
static int parse_time(const char *s, int64_t *secs, int32_t *nanos)
{
    struct tm tm = {0};
    int n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &n) != 6 ||
        n != 19)
        return -1;
    const char *p = s + n;
    int64_t ns = 0, scale = 100000000;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            ns += scale ? (*p - '0') * scale : 0;
    int off = 0;
    if (*p == '+' || *p == '-') {
        int hh, mm;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2 || strlen(p) != 6)
            return -1;
        off = (*p == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
    } else if (strcmp(p, "Z") != 0) {
        return -1;
    }
    if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
        tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_year < 0)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    *secs = (int64_t)timegm(&tm) - off;
    *nanos = (int32_t)ns;
    /* what Go's Time can hold in RFC 3339: years 1..9999 */
    return *secs < -62135596800LL || *secs > 253402300799LL ? -1 : 0;
}

/* Go's time.ParseDuration ("1h2m3.5s", "300ms", "-1.5h"), exact in integers as Go's is →
 * nanoseconds; -1 when not one or out of range. */
static int parse_duration(const char *s, int64_t *ret)
{
    static const struct {
        const char *u;
        uint64_t ns;
    } units[] = {
        {"ns", 1},       {"us", 1000},      {"\xc2\xb5s", 1000},   {"\xce\xbcs", 1000},
        {"ms", 1000000}, {"s", 1000000000}, {"m", 60000000000ULL}, {"h", 3600000000000ULL}};
    const uint64_t lim = (uint64_t)1 << 63; /* |INT64_MIN| */
    uint64_t total = 0;
    bool neg = false;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    if (!strcmp(s, "0")) {
        *ret = 0;
        return 0;
    }
    if (!*s)
        return -1;
    while (*s) {
        uint64_t ip = 0, fp = 0, scale = 1;
        bool digits = false;
        for (; *s >= '0' && *s <= '9'; s++, digits = true) {
            if (ip > (lim - 9) / 10)
                return -1;
            ip = ip * 10 + (uint64_t)(*s - '0');
        }
        if (*s == '.')
            for (s++; *s >= '0' && *s <= '9'; s++, digits = true)
                if (scale < 1000000000000000000ULL) /* more digits than that cannot matter */
                    fp = fp * 10 + (uint64_t)(*s - '0'), scale *= 10;
        if (!digits)
            return -1;
        size_t best = 0, bi = 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t l = strlen(units[i].u);
            if (!strncmp(s, units[i].u, l) && l > best)
                best = l, bi = i;
        }
        if (!best)
            return -1;
        uint64_t u = units[bi].ns;
        if (ip > lim / u)
            return -1;
        uint64_t v = ip * u;
        /* fp/scale of a unit, rounded down as Go does (in long double: fp*u may overflow) */
        v += (uint64_t)((long double)fp * (long double)u / (long double)scale);
        total += v;
        if (v > lim || total > lim)
            return -1;
        s += best;
    }
    if (!neg && total == lim)
        return -1;
    *ret = neg ? (int64_t)(0 - total) : (int64_t)total;
    return 0;
}

static int encode_special(kc__buf *out, const json_t *v, const kc__pbmsg *m, int mi, int depth)
{
    int rc = 0;
    switch (m->special) {
    case KC__PBS_TIME:
    case KC__PBS_MICROTIME: {
        int64_t secs;
        int32_t nanos;
        if (!json_is_string(v) || parse_time(json_string_value(v), &secs, &nanos))
            return 0;
        rc = put_varint_field(out, 1, (uint64_t)secs);
        return rc ? rc : put_varint_field(out, 2, (uint64_t)(int64_t)nanos);
    }
    case KC__PBS_DURATION: {
        int64_t ns;
        if (!json_is_string(v) || parse_duration(json_string_value(v), &ns))
            return 0;
        return put_varint_field(out, 1, (uint64_t)ns);
    }
    case KC__PBS_QUANTITY:
        if (json_is_string(v))
            return kc__pb_put_bytes(out, 1, json_string_value(v), json_string_length(v));
        if (json_is_number(v)) {
            char b[64];
            int n = json_is_integer(v)
                        ? snprintf(b, sizeof(b), "%" JSON_INTEGER_FORMAT, json_integer_value(v))
                        : snprintf(b, sizeof(b), "%.17g", json_real_value(v));
            return kc__pb_put_bytes(out, 1, b, (size_t)n);
        }
        return 0;
    case KC__PBS_INTSTR:
        if (json_is_string(v)) {
            rc = put_varint_field(out, 1, 1);
            if (!rc)
                rc = put_varint_field(out, 2, 0);
            return rc ? rc : kc__pb_put_bytes(out, 3, json_string_value(v), json_string_length(v));
        }
        rc = put_varint_field(out, 1, 0);
        if (!rc)
            rc = put_varint_field(out, 2, (uint64_t)(int32_t)json_integer_value(v));
        return rc ? rc : kc__pb_put_bytes(out, 3, "", 0);
    case KC__PBS_RAW: {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!s)
            return KC_ENOMEM;
        rc = kc__pb_put_bytes(out, 1, s, strlen(s));
        free(s);
        return rc;
    }
    case KC__PBS_LISTWRAP: {
        json_t *tmp = json_pack("{sO}", kc__pb_fields[m->first].json, (json_t *)v);
        rc = tmp ? fields(out, tmp, mi, depth) : KC_ENOMEM;
        json_decref(tmp);
        return rc;
    }
    default: { /* the JSONSchemaPropsOr* unions */
        const kc__pbfield *f1 = &kc__pb_fields[m->first], *f2 = f1 + 1;
        if (m->special == KC__PBS_OR_BOOL) {
            rc = put_varint_field(out, f1->num, json_is_object(v) || json_is_true(v));
            return rc || !json_is_object(v) ? rc : sub(out, f2->num, v, f2->msg, depth);
        }
        if (json_is_object(v))
            return sub(out, f1->num, v, f1->msg, depth);
        json_t *tmp = json_pack("{sO}", f2->json, (json_t *)v);
        rc = tmp ? fields(out, tmp, mi, depth) : KC_ENOMEM;
        json_decref(tmp);
        return rc;
    }
    }
}

static int encode_value(kc__buf *out, const json_t *v, int mi, int depth)
{
    if (depth >= KC__PB_MAX_DEPTH)
        return KC_EINVAL;
    const kc__pbmsg *m = &kc__pb_msgs[mi];
    if (m->special == KC__PBS_NONE)
        return fields(out, v, mi, depth);
    return encode_special(out, v, m, mi, depth);
}

int kc__pb_encode(kc__buf *out, const json_t *v, int mi)
{
    return encode_value(out, v, mi, 0);
}
