/*
 * obj.c — kc_obj: one immutable, reference-counted allocation per Kubernetes object.
 *
 * Layout (one malloc; see docs/decoding.md):
 *
 *   struct kc_obj   refcount, lengths, counts, rv_int, generation, offsets of the strings below
 *   json[json_len]  the stored minified JSON (managedFields cut out, kind/apiVersion injected)
 *   '\0'
 *   labels[]        n_labels pairs of uint32 offsets (key, value), sorted by key
 *   strings         NUL-terminated apiVersion, kind, namespace, name, uid, resourceVersion,
 *                   controller uid, label keys and values
 *   [pad]           only when the tail after json is shorter than KC__SJ_PADDING: simdjson reads
 *                   the stored text in place for JSON Pointer access and needs that many
 *                   readable bytes after it (their content does not matter)
 *
 * Offsets are uint32 from the start of the object (0 = absent → ""), so objects are limited to
 * 2 GiB (kc__decode_max caps max_object_size). Nothing is written after construction, so readers
 * need no lock; the count is atomic (acquire/release on the last unref).
 */
#include "json/obj_internal.h"

#include "core/internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_API_VERSION, F_KIND, F_NS, F_NAME, F_UID, F_RV, F_CTRL, F_LABELS, F_COUNT };

struct kc_obj {
    _Atomic uint32_t refs;
    uint32_t json_len;
    uint32_t heap; /* bytes allocated for this object */
    uint32_t n_labels;
    uint32_t n_finalizers;
    uint32_t n_owners;
    uint32_t off[F_COUNT];
    bool deleting;
    uint64_t rv_int;
    int64_t generation;
    char json[];
};

#define MAX_OBJ ((size_t)0x7fff0000)

size_t kc__decode_max(const kc_decode_opts *opts)
{
    size_t m = opts && opts->max_object_size ? opts->max_object_size : KC_DEFAULT_MAX_OBJECT_SIZE;
    return m > MAX_OBJ ? MAX_OBJ : m;
}

int kc__sj_err_to(const kc__sj_err *e, int64_t base, kc_error *err)
{
    int code = e->code ? e->code : KC_EPARSE;
    kc_error_set(err, code, "%s", e->msg[0] ? e->msg : kc_strerror(code));
    if (err)
        err->offset = e->offset >= 0 ? base + e->offset : -1;
    return code;
}

/* Canonical decimal (no sign, no leading zero, not "0") that fits uint64 → value, else 0. */
static uint64_t rv_to_int(const char *s, size_t n)
{
    if (n == 0 || n > 20 || s[0] == '0')
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    return v;
}

static char *put(char *d, const void *s, size_t n)
{
    memcpy(d, s, n);
    return d + n;
}

static char *tput_check(char *d, const char *s, size_t n, bool *ws, size_t *opens)
{
    if (!kc__sj_copy_compact(d, s, n, opens))
        *ws = true;
    return d + n;
}

static int label_cmp(const void *a, const void *b, void *base)
{
    const uint32_t *x = a, *y = b;
    return strcmp((const char *)base + x[0], (const char *)base + y[0]);
}

/* Sorts n (key offset, value offset) pairs by key; false when two keys are equal (a label map
 * with a key twice: which value the API server meant is unknown, and lookups would pick one). */
static bool sort_labels(uint32_t *lab, size_t n, const char *base)
{
    if (n > 16) {
        qsort_r(lab, n, 2 * sizeof(uint32_t), label_cmp, (void *)base);
        for (size_t i = 1; i < n; i++)
            if (strcmp(base + lab[2 * (i - 1)], base + lab[2 * i]) == 0)
                return false;
        return true;
    }
    /* Insertion sort, the usual handful of labels. The comparison that stops the inner loop is
     * with the greatest key <= the one inserted: an equal key is found there. */
    for (size_t i = 1; i < n; i++) {
        uint32_t k = lab[2 * i], v = lab[2 * i + 1];
        size_t j = i;
        int c = 1;
        for (; j > 0 && (c = strcmp(base + lab[2 * (j - 1)], base + k)) > 0; j--) {
            lab[2 * j] = lab[2 * (j - 1)];
            lab[2 * j + 1] = lab[2 * (j - 1) + 1];
        }
        if (c == 0)
            return false;
        lab[2 * j] = k;
        lab[2 * j + 1] = v;
    }
    return true;
}

/* What to inject for a missing kind or apiVersion: the raw token, maybe minus "List". */
struct inject {
    kc__sj_str raw;   /* token with quotes; when cut, the closing quote is re-added */
    kc__sj_str plain; /* unescaped value */
    bool cut;
};

static bool ends_with_list(kc__sj_str s)
{
    return s.n > 4 && memcmp(s.p + s.n - 4, "List", 4) == 0;
}

int kc__obj_build(const kc__sj_meta *m, unsigned flags, size_t max_size,
                  const kc__sj_list_info *list, kc_obj **ret, kc__sj_err *e)
{
    static const char K_KIND[] = "\"kind\":", K_APIV[] = "\"apiVersion\":";
    const char *t = m->text;
    if (m->len > max_size) {
        if ((flags & KC__BUILD_CHECK_WS) && kc__sj_find_ws(t, m->len) < m->len)
            return KC__OBJ_NOT_COMPACT; /* minified, it may fit */
        e->code = KC_ETOOLARGE;
        e->offset = m->off;
        snprintf(e->msg, sizeof e->msg, "object of %zu bytes is over the limit of %zu", m->len,
                 max_size);
        return KC_ETOOLARGE;
    }

    /* Injections from the list. */
    struct inject ik = {{0}, {0}, false}, ia = {{0}, {0}, false};
    if (list && m->kind_len == 0 && list->has_kind && list->raw_kind.n >= 2) {
        ik.raw = list->raw_kind;
        ik.plain = list->kind;
        if (ends_with_list(list->kind) && list->raw_kind.n > 6 &&
            memcmp(list->raw_kind.p + list->raw_kind.n - 5, "List\"", 5) == 0) {
            ik.raw.n -= 5;
            ik.plain.n -= 4;
            ik.cut = true;
        }
    }
    if (list && m->apiv_len == 0 && list->has_api_version && list->raw_api_version.n >= 2) {
        ia.raw = list->raw_api_version;
        ia.plain = list->api_version;
    }
    size_t ik_len = ik.raw.n ? sizeof K_KIND - 1 + ik.raw.n + (ik.cut ? 1 : 0) : 0;
    size_t ia_len = ia.raw.n ? sizeof K_APIV - 1 + ia.raw.n : 0;

    /* managedFields cut [cut_a, cut_b) relative to t, with one adjacent comma. */
    size_t cut_a = 0, cut_b = 0;
    if (m->mf_len && !(flags & KC_DECODE_KEEP_MANAGED_FIELDS)) {
        cut_a = m->mf_off;
        cut_b = m->mf_off + m->mf_len;
        if (cut_b < m->len && t[cut_b] == ',')
            cut_b++;
        else if (cut_a > 0 && t[cut_a - 1] == ',')
            cut_a--;
    }

    /* Pieces of the stored text. */
    size_t json_len;
    bool meta_only = (flags & KC_DECODE_METADATA_ONLY) != 0;
    size_t meta_a = m->meta_off, meta_b = m->meta_off + m->meta_len;
    bool cut_in_meta = cut_b > cut_a && cut_a >= meta_a && cut_b <= meta_b;
    if (meta_only) {
        size_t parts = 0;
        json_len = 2;
        if (m->kind_len || ik_len)
            json_len += m->kind_len ? m->kind_len : ik_len, parts++;
        if (m->apiv_len || ia_len)
            json_len += m->apiv_len ? m->apiv_len : ia_len, parts++;
        if (m->meta_len)
            json_len += m->meta_len - (cut_in_meta ? cut_b - cut_a : 0), parts++;
        json_len += parts > 1 ? parts - 1 : 0;
    } else {
        size_t rest = m->len - 1 - (cut_b - cut_a); /* after '{', incl. '}' */
        json_len = 1 + ik_len + ia_len + (ik_len && ia_len) + rest;
        if ((ik_len || ia_len) && rest > 1)
            json_len++; /* comma before the original fields */
    }

    /* Strings. */
    kc__sj_str api = m->has_api_version ? m->api_version : ia.plain;
    kc__sj_str kind = m->has_kind ? m->kind : ik.plain;
    kc__sj_str strs[F_CTRL + 1] = {api, kind, m->ns, m->name, m->uid, m->rv, m->controller_uid};
    size_t str_bytes = 0;
    for (int i = 0; i <= F_CTRL; i++)
        str_bytes += strs[i].n ? strs[i].n + 1 : 0;
    for (size_t i = 0; i < m->n_labels; i++)
        str_bytes += m->labels[i].key.n + 1 + m->labels[i].value.n + 1;

    size_t head = sizeof(struct kc_obj);
    size_t lab_at = (head + json_len + 1 + 3) & ~(size_t)3;
    size_t str_at = lab_at + m->n_labels * 8;
    size_t total = str_at + str_bytes;
    if (total < head + json_len + KC__SJ_PADDING)
        total = head + json_len + KC__SJ_PADDING;
    if (total > MAX_OBJ + (MAX_OBJ / 2)) {
        e->code = KC_ETOOLARGE;
        e->offset = -1;
        snprintf(e->msg, sizeof e->msg, "object too large (%zu bytes)", total);
        return KC_ETOOLARGE;
    }
    struct kc_obj *o = malloc(total);
    if (!o) {
        e->code = KC_ENOMEM;
        e->offset = -1;
        snprintf(e->msg, sizeof e->msg, "out of memory for a %zu-byte object", total);
        return KC_ENOMEM;
    }
    atomic_init(&o->refs, 1);
    o->json_len = (uint32_t)json_len;
    o->heap = (uint32_t)total;
    o->n_labels = (uint32_t)m->n_labels;
    o->n_finalizers = (uint32_t)(m->n_finalizers > UINT32_MAX ? UINT32_MAX : m->n_finalizers);
    o->n_owners = (uint32_t)(m->n_owners > UINT32_MAX ? UINT32_MAX : m->n_owners);
    o->deleting = m->deleting;
    o->generation = m->generation;
    o->rv_int = rv_to_int(m->rv.p, m->rv.n);

    /* The stored text. */
    bool check = (flags & KC__BUILD_CHECK_WS) != 0;
    bool ws = false;
    size_t opens = 0; /* '{' and '[' bytes copied: bounds the nesting depth */
#define tput(d, s, n, wsp) tput_check(d, s, n, wsp, &opens)
    char *d = o->json;
    *d++ = '{';
    if (meta_only) {
        bool first = true;
        if (m->kind_len || ik_len) {
            if (m->kind_len) {
                d = tput(d, t + m->kind_off, m->kind_len, &ws);
            } else {
                d = put(put(d, K_KIND, sizeof K_KIND - 1), ik.raw.p, ik.raw.n);
                if (ik.cut)
                    *d++ = '"';
            }
            first = false;
        }
        if (m->apiv_len || ia_len) {
            if (!first)
                *d++ = ',';
            if (m->apiv_len)
                d = tput(d, t + m->apiv_off, m->apiv_len, &ws);
            else
                d = put(put(d, K_APIV, sizeof K_APIV - 1), ia.raw.p, ia.raw.n);
            first = false;
        }
        if (m->meta_len) {
            if (!first)
                *d++ = ',';
            if (cut_in_meta) {
                d = tput(d, t + meta_a, cut_a - meta_a, &ws);
                d = tput(d, t + cut_b, meta_b - cut_b, &ws);
            } else {
                d = tput(d, t + meta_a, m->meta_len, &ws);
            }
        }
        *d++ = '}';
    } else {
        if (ik_len) {
            d = put(put(d, K_KIND, sizeof K_KIND - 1), ik.raw.p, ik.raw.n);
            if (ik.cut)
                *d++ = '"';
        }
        if (ia_len) {
            if (ik_len)
                *d++ = ',';
            d = put(put(d, K_APIV, sizeof K_APIV - 1), ia.raw.p, ia.raw.n);
        }
        if ((ik_len || ia_len) && m->len - 1 - (cut_b - cut_a) > 1)
            *d++ = ',';
        if (cut_b > cut_a) {
            d = tput(d, t + 1, cut_a - 1, &ws);
            d = tput(d, t + cut_b, m->len - cut_b, &ws);
        } else {
            d = tput(d, t + 1, m->len - 1, &ws);
        }
    }
#undef tput
    *d = '\0';
    if (ws && check) {
        free(o);
        return KC__OBJ_NOT_COMPACT;
    }
    /* Nesting: On-Demand skips sub-trees without a depth limit. Only a text with more opening
     * brackets than the limit can nest deeper; such (rare) objects get a full DOM validation. */
    if (opens > KC__SJ_MAX_DEPTH) {
        kc__sj_ctx *tctx = kc__sj_thread_ctx();
        int r = tctx ? kc__sj_depth_check(tctx, o->json, json_len, KC__SJ_MAX_DEPTH, e) : KC_ENOMEM;
        if (r) {
            free(o);
            if (r == KC_ENOMEM && !tctx) {
                e->code = KC_ENOMEM;
                snprintf(e->msg, sizeof e->msg, "out of memory");
            }
            e->offset = r == KC_EPARSE ? m->off : -1; /* the stored text is not the input */
            return r;
        }
    }

    /* Strings and labels. */
    char *base = (char *)o;
    char *s = base + str_at;
    memset(o->off, 0, sizeof o->off);
    for (int i = 0; i <= F_CTRL; i++) {
        if (!strs[i].n)
            continue;
        o->off[i] = (uint32_t)(s - base);
        s = put(s, strs[i].p, strs[i].n);
        *s++ = '\0';
    }
    uint32_t *lab = (uint32_t *)(base + lab_at);
    o->off[F_LABELS] = (uint32_t)lab_at;
    for (size_t i = 0; i < m->n_labels; i++) {
        lab[2 * i] = (uint32_t)(s - base);
        s = put(s, m->labels[i].key.p, m->labels[i].key.n);
        *s++ = '\0';
        lab[2 * i + 1] = (uint32_t)(s - base);
        s = put(s, m->labels[i].value.p, m->labels[i].value.n);
        *s++ = '\0';
    }
    if (!sort_labels(lab, m->n_labels, base)) {
        free(o);
        e->code = KC_EPARSE;
        e->offset = m->off;
        snprintf(e->msg, sizeof e->msg, "duplicate key in metadata.labels");
        return KC_EPARSE;
    }
    *ret = o;
    return 0;
}

/* ---- kc_obj_parse --------------------------------------------------------------------------- */

struct parse_state {
    unsigned flags;
    size_t max;
    kc_obj *obj;
};

static int parse_cb(void *ud, const kc__sj_meta *m, kc__sj_err *e)
{
    struct parse_state *st = ud;
    return kc__obj_build(m, st->flags, st->max, NULL, &st->obj, e);
}

int kc_obj_parse(const char *json, size_t len, const kc_decode_opts *opts, kc_obj **ret_obj,
                 kc_error *err)
{
    if ((!json && len) || !ret_obj)
        return kc_error_set(err, KC_EINVAL, "kc_obj_parse: NULL argument");
    int crc = kc__json_cpu_check(err);
    if (crc)
        return crc;
    struct parse_state st = {kc__decode_flags(opts), kc__decode_max(opts), NULL};
    if (len > st.max * 2 + 4096) /* whitespace may shrink it, but not without bound */
        return kc_error_set(err, KC_ETOOLARGE, "object text of %zu bytes is over the limit of %zu",
                            len, st.max);
    kc__sj_ctx *ctx = kc__sj_thread_ctx();
    if (!ctx)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    kc__sj_err e = {0, -1, ""};
    int r = kc__sj_object(ctx, json ? json : "", len, (st.flags & KC_DECODE_STRICT) != 0, parse_cb,
                          &st, &e);
    kc__sj_ctx_trim(ctx, (size_t)1 << 20);
    if (r)
        return kc__sj_err_to(&e, 0, err);
    *ret_obj = st.obj;
    return 0;
}

/* ---- reference counting and accessors ------------------------------------------------------- */

kc_obj *kc_obj_ref(kc_obj *obj)
{
    if (obj)
        atomic_fetch_add_explicit(&obj->refs, 1, memory_order_relaxed);
    return obj;
}

void kc_obj_unref(kc_obj *obj)
{
    /* acq_rel rather than release + acquire fence: same ordering, and ThreadSanitizer (which does
     * not model stand-alone fences) sees the happens-before edge to free(). */
    if (!obj)
        return;
    uint32_t prev = atomic_fetch_sub_explicit(&obj->refs, 1, memory_order_acq_rel);
    KC__DEBUG_ASSERT(prev != 0); /* an unref without a matching reference (underflow) */
    if (prev == 1)
        free(obj);
}

void kc_obj_array_free(kc_obj **objs, size_t n)
{
    if (!objs)
        return;
    for (size_t i = 0; i < n; i++)
        kc_obj_unref(objs[i]);
    free(objs);
}

/* Accessors accept NULL (header): "" or 0, as for an absent field. */

const char *kc_obj_json(const kc_obj *obj, size_t *ret_len)
{
    if (ret_len)
        *ret_len = obj ? obj->json_len : 0;
    return obj ? obj->json : "";
}

static const char *field(const kc_obj *obj, int f)
{
    return obj && obj->off[f] ? (const char *)obj + obj->off[f] : "";
}

const char *kc_obj_api_version(const kc_obj *obj)
{
    return field(obj, F_API_VERSION);
}
const char *kc_obj_kind(const kc_obj *obj)
{
    return field(obj, F_KIND);
}
const char *kc_obj_namespace(const kc_obj *obj)
{
    return field(obj, F_NS);
}
const char *kc_obj_name(const kc_obj *obj)
{
    return field(obj, F_NAME);
}
const char *kc_obj_uid(const kc_obj *obj)
{
    return field(obj, F_UID);
}
const char *kc_obj_resource_version(const kc_obj *obj)
{
    return field(obj, F_RV);
}
const char *kc_obj_controller_uid(const kc_obj *obj)
{
    return field(obj, F_CTRL);
}
uint64_t kc_obj_rv_int(const kc_obj *obj)
{
    return obj ? obj->rv_int : 0;
}
int64_t kc_obj_generation(const kc_obj *obj)
{
    return obj ? obj->generation : 0;
}
bool kc_obj_deleting(const kc_obj *obj)
{
    return obj && obj->deleting;
}
size_t kc_obj_finalizer_count(const kc_obj *obj)
{
    return obj ? obj->n_finalizers : 0;
}
size_t kc_obj_owner_count(const kc_obj *obj)
{
    return obj ? obj->n_owners : 0;
}
size_t kc_obj_label_count(const kc_obj *obj)
{
    return obj ? obj->n_labels : 0;
}

int kc_obj_label_at(const kc_obj *obj, size_t i, const char **ret_key, const char **ret_value)
{
    if (!obj || i >= obj->n_labels)
        return KC_EINVAL;
    const char *base = (const char *)obj;
    const uint32_t *lab = (const uint32_t *)(base + obj->off[F_LABELS]);
    if (ret_key)
        *ret_key = base + lab[2 * i];
    if (ret_value)
        *ret_value = base + lab[2 * i + 1];
    return 0;
}

const char *kc_obj_label(const kc_obj *obj, const char *key)
{
    if (!obj || !key)
        return NULL;
    const char *base = (const char *)obj;
    const uint32_t *lab = (const uint32_t *)(base + obj->off[F_LABELS]);
    size_t lo = 0, hi = obj->n_labels;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(key, base + lab[2 * mid]);
        if (c == 0)
            return base + lab[2 * mid + 1];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

size_t kc_obj_heap_size(const kc_obj *obj)
{
    return obj ? obj->heap : 0;
}
