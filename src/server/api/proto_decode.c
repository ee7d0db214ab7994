/*
 * proto_decode.c — the protobuf wire format (varint, 64-bit, length-delimited, 32-bit) read into
 * JSON over the generated field table (proto_schema.h), giving the JSON Go's encoding/json writes
 * for the same object: a field absent on the wire is absent; a zero scalar of a non-pointer
 * `omitempty` field is left out (gogo-protobuf writes every non-pointer field, Go's JSON drops
 * them), a zero kept when the Go field is a pointer or has no omitempty; repeated fields and maps
 * become arrays and objects (and are absent when empty, as nothing is on the wire); `,inline`
 * members merge into their parent; bytes are base64; the special messages (Time, MicroTime,
 * Duration, Quantity, IntOrString, RawExtension/FieldsV1/JSON, list wrappers, the
 * JSONSchemaPropsOr* unions) take their Go MarshalJSON form. Unknown field numbers are skipped.
 *
 * Every malformed input fails with "<field path> at byte <offset>: <what>" (truncated varint,
 * length past the end, wrong wire type for the field, invalid embedded JSON, nesting deeper than
 * KC__PB_MAX_DEPTH). Memory: the JSON built is bounded by the input (each node costs ≥ 2 input
 * bytes). Thread-safe (no state).
 */
#include "server/api/proto_schema.h"

#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct dctx {
    const uint8_t *base;
    char *err;
    size_t errcap;
    char path[384];
    size_t plen;
    const uint8_t *tag_at; /* start of the field being read */
    size_t nodes, budget;  /* JSON values made, and the most allowed (bounded memory) */
} dctx;

typedef struct rd {
    const uint8_t *p, *end;
} rd;

static json_t *fail(dctx *d, const uint8_t *at, const char *what)
{
    if (!d->err[0])
        snprintf(d->err, d->errcap, "%s at byte %zu: %s", d->path, (size_t)(at - d->base), what);
    return NULL;
}

/* Count one JSON value; false (and the error) past the budget: input bytes + 4096, so Go's zero
 * values for absent fields (fill_absent) cannot blow a small body up. */
static bool spend(dctx *d, const uint8_t *at)
{
    if (++d->nodes <= d->budget)
        return true;
    fail(d, at, "the body expands to too many JSON values");
    return false;
}

static size_t push(dctx *d, const char *name)
{
    size_t old = d->plen;
    int n = snprintf(d->path + old, sizeof(d->path) - old, ".%s", name);
    if (n > 0)
        d->plen = old + (size_t)n < sizeof(d->path) ? old + (size_t)n : sizeof(d->path) - 1;
    return old;
}

static void pop(dctx *d, size_t old)
{
    d->plen = old;
    d->path[old] = 0;
}

static int varint(rd *r, uint64_t *ret)
{
    uint64_t v = 0;
    for (int s = 0; s < 64; s += 7) {
        if (r->p >= r->end)
            return -1;
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *ret = v;
            return 0;
        }
    }
    return -1;
}

static int lenbytes(rd *r, const uint8_t **ret, size_t *len)
{
    uint64_t n;
    if (varint(r, &n) || n > (uint64_t)(r->end - r->p))
        return -1;
    *ret = r->p;
    *len = (size_t)n;
    r->p += n;
    return 0;
}

static int fixed(rd *r, size_t n, uint64_t *ret)
{
    if ((size_t)(r->end - r->p) < n)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    *ret = v;
    return 0;
}

static int skip(rd *r, unsigned wt)
{
    uint64_t v;
    const uint8_t *b;
    size_t n;
    switch (wt) {
    case 0:
        return varint(r, &v);
    case 1:
        return fixed(r, 8, &v);
    case 2:
        return lenbytes(r, &b, &n);
    case 5:
        return fixed(r, 4, &v);
    default:
        return -1;
    }
}

static json_t *b64(const uint8_t *p, size_t n)
{
    char *out = malloc(4 * ((n + 2) / 3) + 1);
    if (!out)
        return NULL;
    EVP_EncodeBlock((unsigned char *)out, p, (int)n);
    json_t *s = json_string(out);
    free(out);
    return s;
}

static unsigned wire_of(unsigned kind)
{
    switch (kind) {
    case KC__PBK_DOUBLE:
        return 1;
    case KC__PBK_FLOAT:
        return 5;
    case KC__PBK_STRING:
    case KC__PBK_BYTES:
    case KC__PBK_MSG:
    case KC__PBK_MAP:
        return 2;
    default:
        return 0;
    }
}

/* A scalar from its raw wire value; *zero tells whether it is the type's zero value. */
static json_t *scalar(unsigned kind, uint64_t v, const uint8_t *b, size_t n, bool *zero)
{
    switch (kind) {
    case KC__PBK_STRING:
        *zero = n == 0;
        return json_stringn((const char *)b, n);
    case KC__PBK_BYTES:
        *zero = n == 0;
        return b64(b, n);
    case KC__PBK_BOOL:
        *zero = v == 0;
        return json_boolean(v != 0);
    case KC__PBK_INT32:
        *zero = (uint32_t)v == 0;
        return json_integer((int32_t)(uint32_t)v);
    case KC__PBK_UINT32:
        *zero = (uint32_t)v == 0;
        return json_integer((uint32_t)v);
    case KC__PBK_DOUBLE: {
        double f;
        memcpy(&f, &v, sizeof(f));
        *zero = f == 0;
        return json_real(f);
    }
    case KC__PBK_FLOAT: {
        float f;
        uint32_t u = (uint32_t)v;
        memcpy(&f, &u, sizeof(f));
        *zero = f == 0;
        return json_real(f);
    }
    default: /* INT64, UINT64 */
        *zero = v == 0;
        return json_integer((json_int_t)v);
    }
}

static json_t *value(dctx *d, const uint8_t *p, size_t len, int mi, int depth);
static int fields_into(dctx *d, const uint8_t *p, size_t len, int mi, json_t *obj, int depth);

/* One wire value of field f (repeated ones: one element) as JSON; NULL + err on failure. */
static json_t *elem(dctx *d, rd *r, const kc__pbfield *f, unsigned wt, int depth, bool *zero)
{
    const uint8_t *at = r->p, *b = NULL;
    uint64_t v = 0;
    size_t n = 0;
    unsigned want = wire_of(f->kind);
    *zero = false;
    if (wt != want)
        return fail(d, d->tag_at ? d->tag_at : at, "wrong wire type for the field");
    int bad = want == 0   ? varint(r, &v)
              : want == 1 ? fixed(r, 8, &v)
              : want == 5 ? fixed(r, 4, &v)
                          : lenbytes(r, &b, &n);
    if (bad)
        return fail(d, at, want == 2 ? "length past the end of the message" : "truncated value");
    if (f->kind != KC__PBK_MSG) {
        json_t *x = scalar(f->kind, v, b, n, zero);
        if (!x && f->kind == KC__PBK_STRING)
            return fail(d, at, "string is not valid UTF-8");
        if (!x && (f->kind == KC__PBK_DOUBLE || f->kind == KC__PBK_FLOAT))
            return fail(d, at, "not a finite number");
        return x;
    }
    return value(d, b, n, f->msg, depth + 1);
}

static int set_or_append(json_t *obj, const kc__pbfield *f, json_t *val)
{
    if (!(f->flags & KC__PBF_REP))
        return json_object_set_new(obj, f->json, val);
    json_t *arr = json_object_get(obj, f->json);
    if (!json_is_array(arr)) {
        arr = json_array();
        if (json_object_set_new(obj, f->json, arr))
            arr = NULL;
    }
    return arr ? json_array_append_new(arr, val) : (json_decref(val), -1);
}

/* A map entry {1: key, 2: value} into the object at f's JSON name. */
static int map_entry(dctx *d, const uint8_t *b, size_t n, const kc__pbfield *f, json_t *obj,
                     int depth)
{
    const kc__pbmsg *em = &kc__pb_msgs[f->msg];
    const kc__pbfield *kf = &kc__pb_fields[em->first], *vf = kf + 1;
    rd r = {b, b + n};
    json_t *key = NULL, *val = NULL;
    while (r.p < r.end) {
        uint64_t tag;
        const uint8_t *at = r.p;
        bool zero;
        if (varint(&r, &tag))
            goto bad_tag;
        const kc__pbfield *ef = (tag >> 3) == 1 ? kf : (tag >> 3) == 2 ? vf : NULL;
        if (!ef) {
            if (skip(&r, tag & 7))
                goto bad_tag;
            continue;
        }
        json_t *x = elem(d, &r, ef, tag & 7, depth, &zero);
        if (!x)
            goto fail;
        json_decref(ef == kf ? key : val);
        *(ef == kf ? &key : &val) = x;
        continue;
    bad_tag:
        fail(d, at, "truncated field");
        goto fail;
    }
    if (!val && vf->kind == KC__PBK_MSG)
        val = value(d, (const uint8_t *)"", 0, vf->msg, depth + 1);
    else if (!val)
        val = scalar(vf->kind, 0, (const uint8_t *)"", 0, &(bool){false});
    if (!val)
        goto fail;
    json_t *map = json_object_get(obj, f->json);
    if (!json_is_object(map)) {
        map = json_object();
        if (json_object_set_new(obj, f->json, map))
            goto fail;
    }
    int rc = json_object_set_new(map, key ? json_string_value(key) : "", val);
    if (rc)
        fail(d, b, "map entry not stored");
    json_decref(key);
    return rc;
fail:
    json_decref(key);
    json_decref(val);
    return -1;
}

/* One field occurrence into obj. */
static int field(dctx *d, rd *r, const kc__pbfield *f, unsigned wt, json_t *obj, int depth)
{
    const uint8_t *at = r->p;
    if (f->kind == KC__PBK_MAP || (f->kind == KC__PBK_MSG && (f->flags & KC__PBF_INLINE))) {
        const uint8_t *b;
        size_t n;
        if (wt != 2)
            return fail(d, d->tag_at, "wrong wire type for the field"), -1;
        if (lenbytes(r, &b, &n))
            return fail(d, at, "length past the end of the message"), -1;
        if (f->kind == KC__PBK_MAP)
            return map_entry(d, b, n, f, obj, depth);
        if (depth >= KC__PB_MAX_DEPTH)
            return fail(d, at, "nesting too deep"), -1;
        return fields_into(d, b, n, f->msg, obj, depth + 1);
    }
    if ((f->flags & KC__PBF_REP) && wt == 2 && wire_of(f->kind) != 2) { /* packed scalars */
        const uint8_t *b;
        size_t n;
        if (lenbytes(r, &b, &n))
            return fail(d, at, "length past the end of the message"), -1;
        rd pr = {b, b + n};
        while (pr.p < pr.end) {
            bool zero;
            if (!spend(d, pr.p))
                return -1;
            json_t *x = elem(d, &pr, f, wire_of(f->kind), depth, &zero);
            if (!x || set_or_append(obj, f, x))
                return -1;
        }
        return 0;
    }
    bool zero;
    json_t *x = elem(d, r, f, wt, depth, &zero);
    if (!x)
        return -1;
    if (json_is_null(x) && (f->flags & KC__PBF_REP)) {
        json_decref(x);
        return 0;
    }
    if (json_is_null(x) || (!(f->flags & KC__PBF_REP) && zero && (f->flags & KC__PBF_OMIT) &&
                            !(f->flags & KC__PBF_PTR))) {
        json_decref(x);
        json_object_del(obj, f->json);
        return 0;
    }
    return set_or_append(obj, f, x);
}

static int fields_into(dctx *d, const uint8_t *p, size_t len, int mi, json_t *obj, int depth)
{
    rd r = {p, p + len};
    while (r.p < r.end) {
        uint64_t tag;
        const uint8_t *at = r.p;
        if (varint(&r, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
            return fail(d, at, "bad field tag"), -1;
        const kc__pbfield *f = kc__pb_field(mi, (uint32_t)(tag >> 3));
        if (!f) {
            if (skip(&r, tag & 7))
                return fail(d, at, "truncated unknown field"), -1;
            continue;
        }
        if (!spend(d, at))
            return -1;
        size_t old = push(d, f->json[0] ? f->json : kc__pb_msgs[f->msg].name);
        d->tag_at = at;
        int rc = field(d, &r, f, tag & 7, obj, depth);
        pop(d, old);
        if (rc)
            return -1;
    }
    return 0;
}

/* The fields of a special message by number: up to 3, each the last occurrence. */
typedef struct sfield {
    bool set;
    uint64_t v;
    const uint8_t *b;
    size_t n;
} sfield;

/* Read the scalar-or-bytes fields 1..3 of a special message; repeated ones are not kept here. */
static int special_fields(dctx *d, const uint8_t *p, size_t len, sfield s[4])
{
    rd r = {p, p + len};
    memset(s, 0, 4 * sizeof(*s));
    while (r.p < r.end) {
        uint64_t tag;
        const uint8_t *at = r.p;
        if (varint(&r, &tag))
            return fail(d, at, "bad field tag"), -1;
        unsigned num = (tag >> 3) < 4 ? (unsigned)(tag >> 3) : 0, wt = tag & 7;
        int bad = wt == 0   ? varint(&r, &s[num].v)
                  : wt == 2 ? lenbytes(&r, &s[num].b, &s[num].n)
                            : skip(&r, wt);
        if (bad)
            return fail(d, at, "truncated field"), -1;
        s[num].set = true;
    }
    return 0;
}

/* metav1.Time / MicroTime: an empty message is the zero time (Go's Marshal writes nothing for
 * it; its JSON is null, left out). Time keeps seconds only, as upstream's Unmarshal does. */
static json_t *time_json(dctx *d, const uint8_t *p, size_t len, const sfield *s, bool micro)
{
    if (len == 0)
        return json_null();
    int64_t secs = (int64_t)s[1].v;
    int32_t nanos = micro ? (int32_t)(uint32_t)s[2].v : 0;
    if (nanos < 0 || nanos > 999999999 || secs < -62135596800LL || secs > 253402300799LL)
        return fail(d, p, "timestamp out of range");
    time_t t = (time_t)secs;
    struct tm tm;
    char buf[48];
    if (!gmtime_r(&t, &tm))
        return fail(d, p, "timestamp out of range");
    int n = snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (micro)
        snprintf(buf + n, sizeof(buf) - (size_t)n, ".%06dZ", nanos / 1000);
    else
        snprintf(buf + n, sizeof(buf) - (size_t)n, "Z");
    return json_string(buf);
}

/* Go's time.Duration.String(): "1h2m3.5s", "1.5ms", "0s". */
static json_t *duration_json(int64_t ns)
{
    char buf[64], *w = buf;
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    if (ns < 0)
        *w++ = '-';
    if (u == 0)
        return json_string("0s");
    if (u < 1000000000ULL) {
        static const char *const unit[] = {"ns", "µs", "ms"};
        int i = u < 1000 ? 0 : u < 1000000 ? 1 : 2;
        uint64_t div = i == 0 ? 1 : i == 1 ? 1000 : 1000000;
        w += sprintf(w, "%" PRIu64, u / div);
        if (u % div) {
            char frac[16];
            int fl = sprintf(frac, "%0*" PRIu64, i == 1 ? 3 : 6, u % div);
            while (fl && frac[fl - 1] == '0')
                frac[--fl] = 0;
            w += sprintf(w, ".%s", frac);
        }
        sprintf(w, "%s", unit[i]);
        return json_string(buf);
    }
    uint64_t s = u / 1000000000ULL, frac = u % 1000000000ULL;
    if (s >= 3600)
        w += sprintf(w, "%" PRIu64 "h", s / 3600);
    if (s >= 60)
        w += sprintf(w, "%" PRIu64 "m", s / 60 % 60);
    w += sprintf(w, "%" PRIu64, s % 60);
    if (frac) {
        char f[16];
        int fl = sprintf(f, "%09" PRIu64, frac);
        while (fl && f[fl - 1] == '0')
            f[--fl] = 0;
        w += sprintf(w, ".%s", f);
    }
    sprintf(w, "s");
    return json_string(buf);
}

static json_t *raw_json(dctx *d, const uint8_t *b, size_t n, int depth)
{
    if (!b || n == 0)
        return json_null();
    if (n >= 4 && !memcmp(b, "k8s\0", 4)) /* an embedded protobuf object */
        return kc__pb_decode_envelope(b, n, d->err, d->errcap, depth + 1);
    json_error_t je;
    json_t *v = json_loadb((const char *)b, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    return v ? v : fail(d, b, "raw field is not valid JSON");
}

/* The JSONSchemaPropsOr* unions: field `obj` a schema object, field `arr` the other branch. */
static json_t *union_json(dctx *d, const uint8_t *p, size_t len, int mi, int depth)
{
    const kc__pbmsg *m = &kc__pb_msgs[mi];
    json_t *tmp = json_object();
    if (!tmp || fields_into(d, p, len, mi, tmp, depth)) {
        json_decref(tmp);
        return NULL;
    }
    const kc__pbfield *f1 = &kc__pb_fields[m->first], *f2 = f1 + 1;
    const kc__pbfield *sf = m->special == KC__PBS_OR_BOOL ? f2 : f1;
    const kc__pbfield *other = sf == f1 ? f2 : f1;
    json_t *out = json_object_get(tmp, sf->json);
    if (!out)
        out = json_object_get(tmp, other->json);
    if (!out && m->special == KC__PBS_OR_BOOL)
        out = json_false();
    else if (!out)
        out = json_null();
    else
        json_incref(out);
    json_decref(tmp);
    return out;
}

/* The JSON Go writes for an absent field without omitempty: null for slices, maps, pointers,
 * []byte, Time and RawExtension; the zero value of other types (a struct with its own such
 * fields; Quantity "0", IntOrString 0, Duration "0s"). NULL: write nothing. */
static json_t *absent(dctx *d, const kc__pbfield *f, int depth)
{
    if ((f->flags & (KC__PBF_REP | KC__PBF_PTR)) || f->kind == KC__PBK_MAP ||
        f->kind == KC__PBK_BYTES ||
        (f->kind == KC__PBK_MSG && kc__pb_msgs[f->msg].special == KC__PBS_LISTWRAP))
        return json_null();
    switch (f->kind) {
    case KC__PBK_STRING:
        return json_string("");
    case KC__PBK_BOOL:
        return json_false();
    case KC__PBK_DOUBLE:
    case KC__PBK_FLOAT:
        return json_real(0);
    case KC__PBK_MSG:
        return value(d, (const uint8_t *)"", 0, f->msg, depth + 1);
    default:
        return json_integer(0);
    }
}

/* Give obj the fields of message mi Go's JSON writes even when absent (no omitempty). */
static int fill_absent(dctx *d, int mi, json_t *obj, int depth)
{
    const kc__pbmsg *m = &kc__pb_msgs[mi];
    if (depth >= KC__PB_MAX_DEPTH)
        return 0;
    for (size_t i = 0; i < m->n; i++) {
        const kc__pbfield *f = &kc__pb_fields[m->first + i];
        if (f->flags & KC__PBF_INLINE) {
            if (fill_absent(d, f->msg, obj, depth + 1))
                return -1;
            continue;
        }
        if ((f->flags & KC__PBF_OMIT) || !f->json[0] || json_object_get(obj, f->json))
            continue;
        if (!spend(d, d->tag_at ? d->tag_at : d->base))
            return -1;
        json_t *v = absent(d, f, depth);
        if (!v || json_object_set_new(obj, f->json, v))
            return -1;
    }
    return 0;
}

static json_t *value(dctx *d, const uint8_t *p, size_t len, int mi, int depth)
{
    if (depth >= KC__PB_MAX_DEPTH)
        return fail(d, p, "nesting too deep");
    const kc__pbmsg *m = &kc__pb_msgs[mi];
    sfield s[4];
    switch (m->special) {
    case KC__PBS_TIME:
    case KC__PBS_MICROTIME:
        return special_fields(d, p, len, s)
                   ? NULL
                   : time_json(d, p, len, s, m->special == KC__PBS_MICROTIME);
    case KC__PBS_DURATION:
        return special_fields(d, p, len, s) ? NULL : duration_json((int64_t)s[1].v);
    case KC__PBS_QUANTITY:
        if (special_fields(d, p, len, s))
            return NULL;
        return s[1].n ? json_stringn((const char *)s[1].b, s[1].n) : json_string("0");
    case KC__PBS_INTSTR:
        if (special_fields(d, p, len, s))
            return NULL;
        if (s[1].v == 1)
            return json_stringn(s[3].b ? (const char *)s[3].b : "", s[3].n);
        return json_integer((int32_t)(uint32_t)s[2].v);
    case KC__PBS_RAW:
        return special_fields(d, p, len, s) ? NULL : raw_json(d, s[1].b, s[1].n, depth);
    case KC__PBS_LISTWRAP: {
        json_t *tmp = json_object();
        if (!tmp || fields_into(d, p, len, mi, tmp, depth)) {
            json_decref(tmp);
            return NULL;
        }
        json_t *arr = json_object_get(tmp, kc__pb_fields[m->first].json);
        arr = arr ? json_incref(arr) : json_array();
        json_decref(tmp);
        return arr;
    }
    case KC__PBS_OR_ARRAY:
    case KC__PBS_OR_BOOL:
    case KC__PBS_OR_STRARRAY:
        return union_json(d, p, len, mi, depth);
    default: {
        json_t *obj = json_object();
        if (!obj || fields_into(d, p, len, mi, obj, depth) || fill_absent(d, mi, obj, depth)) {
            json_decref(obj);
            return NULL;
        }
        return obj;
    }
    }
}

json_t *kc__pb_decode(const uint8_t *base, const uint8_t *p, size_t len, int mi, const char *path,
                      char *err, size_t errcap, int depth)
{
    dctx d = {.base = base, .err = err, .errcap = errcap, .budget = len + 4096};
    err[0] = 0;
    snprintf(d.path, sizeof(d.path), "%s", path);
    d.plen = strlen(d.path);
    json_t *v = value(&d, p, len, mi, depth);
    if (!v && !err[0])
        snprintf(err, errcap, "%s: out of memory", path);
    return v;
}
