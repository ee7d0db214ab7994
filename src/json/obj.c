/*
 * obj.c — kc_obj construction: one immutable, reference-counted allocation per Kubernetes
 * object, built from what the metadata walker (sj.h) found (kc__obj_build), and kc_obj_parse.
 *
 * The layout of the allocation is described with struct kc_obj in json/obj_internal.h; the
 * accessors and reference counting are in obj_access.c.
 */
#include "core/internal.h"
#include "core/slab.h"
#include "json/obj_internal.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const char K_KIND[] = "\"kind\":", K_APIV[] = "\"apiVersion\":";

/* What kc__obj_build copies, decided before it allocates: injected kind/apiVersion, the
 * managedFields cut [cut_a, cut_b) (relative to the text, with one adjacent comma) and the length
 * of the stored text. */
typedef struct build_plan {
    struct inject ik, ia;
    size_t ik_len, ia_len; /* bytes of the injected members, 0 when none */
    size_t cut_a, cut_b;
    bool meta_only, cut_in_meta;
    size_t json_len;
    char *proj; /* kc_decode_opts.keep: the kept members (sj_project.cpp), malloc'd; else NULL */
    size_t proj_len;
} build_plan;

static int build_fail(kc__sj_err *e, int code, int64_t off, const char *fmt, ...) KC__PRINTF(4, 5);
static int build_fail(kc__sj_err *e, int code, int64_t off, const char *fmt, ...)
{
    e->code = code;
    e->offset = off;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

/* Injections from the list: its kind (minus "List") and apiVersion for an item without them. */
static void plan_injections(const kc__sj_meta *m, const kc__sj_list_info *list, build_plan *p)
{
    if (list && m->kind_len == 0 && list->has_kind && list->raw_kind.n >= 2) {
        p->ik.raw = list->raw_kind;
        p->ik.plain = list->kind;
        if (ends_with_list(list->kind) && list->raw_kind.n > 6 &&
            memcmp(list->raw_kind.p + list->raw_kind.n - 5, "List\"", 5) == 0) {
            p->ik.raw.n -= 5;
            p->ik.plain.n -= 4;
            p->ik.cut = true;
        }
    }
    if (list && m->apiv_len == 0 && list->has_api_version && list->raw_api_version.n >= 2) {
        p->ia.raw = list->raw_api_version;
        p->ia.plain = list->api_version;
    }
    p->ik_len = p->ik.raw.n ? sizeof K_KIND - 1 + p->ik.raw.n + (p->ik.cut ? 1 : 0) : 0;
    p->ia_len = p->ia.raw.n ? sizeof K_APIV - 1 + p->ia.raw.n : 0;
}

/* The managedFields cut and the stored text's length. */
static void plan_text(const kc__sj_meta *m, unsigned flags, build_plan *p)
{
    const char *t = m->text;
    if (m->mf_len && !(flags & KC_DECODE_KEEP_MANAGED_FIELDS)) {
        p->cut_a = m->mf_off;
        p->cut_b = m->mf_off + m->mf_len;
        if (p->cut_b < m->len && t[p->cut_b] == ',')
            p->cut_b++;
        else if (p->cut_a > 0 && t[p->cut_a - 1] == ',')
            p->cut_a--;
    }
    p->meta_only = (flags & KC_DECODE_METADATA_ONLY) != 0;
    size_t meta_a = m->meta_off, meta_b = m->meta_off + m->meta_len;
    p->cut_in_meta = p->cut_b > p->cut_a && p->cut_a >= meta_a && p->cut_b <= meta_b;
    size_t cut = p->cut_b - p->cut_a;
    if (p->meta_only) {
        size_t parts = 0;
        p->json_len = 2;
        if (m->kind_len || p->ik_len)
            p->json_len += m->kind_len ? m->kind_len : p->ik_len, parts++;
        if (m->apiv_len || p->ia_len)
            p->json_len += m->apiv_len ? m->apiv_len : p->ia_len, parts++;
        if (m->meta_len)
            p->json_len += m->meta_len - (p->cut_in_meta ? cut : 0), parts++;
        p->json_len += parts > 1 ? parts - 1 : 0;
    } else {
        size_t rest = m->len - 1 - cut; /* after '{', incl. '}' */
        p->json_len = 1 + p->ik_len + p->ia_len + (p->ik_len && p->ia_len) + rest;
        if ((p->ik_len || p->ia_len) && rest > 1)
            p->json_len++; /* comma before the original fields */
    }
}

static char *put_inject(char *d, const char *key, size_t key_len, const struct inject *in)
{
    d = put(put(d, key, key_len), in->raw.p, in->raw.n);
    if (in->cut)
        *d++ = '"';
    return d;
}

/* The stored text of a metadata-only object: {kind,apiVersion,metadata}. Returns the end. */
static char *copy_meta_only(char *d, const kc__sj_meta *m, const build_plan *p, bool *ws,
                            size_t *opens)
{
    const char *t = m->text;
    size_t meta_a = m->meta_off, meta_b = m->meta_off + m->meta_len;
    bool first = true;
    if (m->kind_len || p->ik_len) {
        if (m->kind_len)
            d = tput_check(d, t + m->kind_off, m->kind_len, ws, opens);
        else
            d = put_inject(d, K_KIND, sizeof K_KIND - 1, &p->ik);
        first = false;
    }
    if (m->apiv_len || p->ia_len) {
        if (!first)
            *d++ = ',';
        if (m->apiv_len)
            d = tput_check(d, t + m->apiv_off, m->apiv_len, ws, opens);
        else
            d = put_inject(d, K_APIV, sizeof K_APIV - 1, &p->ia);
        first = false;
    }
    if (m->meta_len) {
        if (!first)
            *d++ = ',';
        if (p->cut_in_meta) {
            d = tput_check(d, t + meta_a, p->cut_a - meta_a, ws, opens);
            d = tput_check(d, t + p->cut_b, meta_b - p->cut_b, ws, opens);
        } else {
            d = tput_check(d, t + meta_a, m->meta_len, ws, opens);
        }
    }
    *d++ = '}';
    return d;
}

/* The stored text of a whole object: injections, then the original members minus the cut. */
static char *copy_full(char *d, const kc__sj_meta *m, const build_plan *p, bool *ws, size_t *opens)
{
    const char *t = m->text;
    if (p->ik_len)
        d = put_inject(d, K_KIND, sizeof K_KIND - 1, &p->ik);
    if (p->ia_len) {
        if (p->ik_len)
            *d++ = ',';
        d = put_inject(d, K_APIV, sizeof K_APIV - 1, &p->ia);
    }
    if ((p->ik_len || p->ia_len) && m->len - 1 - (p->cut_b - p->cut_a) > 1)
        *d++ = ',';
    if (p->cut_b > p->cut_a) {
        d = tput_check(d, t + 1, p->cut_a - 1, ws, opens);
        d = tput_check(d, t + p->cut_b, m->len - p->cut_b, ws, opens);
    } else {
        d = tput_check(d, t + 1, m->len - 1, ws, opens);
    }
    return d;
}

/* The stored text of a projected object: injections, then the kept members. */
static char *copy_projected(char *d, const build_plan *p, bool *ws, size_t *opens)
{
    if (p->ik_len)
        d = put_inject(d, K_KIND, sizeof K_KIND - 1, &p->ik);
    if (p->ia_len) {
        if (p->ik_len)
            *d++ = ',';
        d = put_inject(d, K_APIV, sizeof K_APIV - 1, &p->ia);
    }
    if ((p->ik_len || p->ia_len) && p->proj_len)
        *d++ = ',';
    d = tput_check(d, p->proj, p->proj_len, ws, opens);
    *d++ = '}';
    return d;
}

/* kc_decode_opts.keep: project the object's text (sj_project.cpp) and size the stored text. */
static int plan_projection(const kc__sj_meta *m, unsigned flags, const char *const *keep,
                           build_plan *p, kc__sj_err *e)
{
    int r = kc__sj_project(m->text, m->len, keep, !(flags & KC_DECODE_KEEP_MANAGED_FIELDS),
                           &p->proj, &p->proj_len, e);
    if (r) {
        if (e->offset >= 0)
            e->offset += m->off;
        return r;
    }
    size_t inj = p->ik_len + p->ia_len + (p->ik_len && p->ia_len);
    p->json_len = 2 + inj + (inj && p->proj_len) + p->proj_len;
    return 0;
}

/* Nesting: On-Demand skips sub-trees without a depth limit. Only a text with more opening
 * brackets than the limit can nest deeper; such (rare) objects get a full DOM validation. */
static int check_nesting(const struct kc_obj *o, const kc__sj_meta *m, kc__sj_err *e)
{
    kc__sj_ctx *tctx = kc__sj_thread_ctx();
    if (!tctx)
        return build_fail(e, KC_ENOMEM, -1, "out of memory");
    int r = kc__sj_depth_check(tctx, o->json, o->json_len, KC__SJ_MAX_DEPTH, e);
    if (r)
        e->offset = r == KC_EPARSE ? m->off : -1; /* the stored text is not the input */
    return r;
}

/* The strings (NUL-terminated copies at str_at) and the label offset pairs (at lab_at), sorted by
 * key; false on a duplicate label key. */
static bool put_strings(struct kc_obj *o, const kc__sj_str *strs, const kc__sj_meta *m,
                        size_t lab_at, size_t str_at)
{
    char *base = (char *)o;
    char *s = base + str_at;
    memset(o->off, 0, sizeof o->off);
    for (int i = 0; i < F_CTRL; i++) {
        if (!strs[i].n)
            continue;
        o->off[i] = (uint32_t)(s - base);
        s = put(s, strs[i].p, strs[i].n);
        *s++ = '\0';
    }
    if (m->has_controller) { /* uid, apiVersion, kind, name back to back (ctrl_field) */
        o->off[F_CTRL] = (uint32_t)(s - base);
        const kc__sj_str cs[4] = {m->controller_uid, m->ctrl_api_version, m->ctrl_kind,
                                  m->ctrl_name};
        for (int i = 0; i < 4; i++) {
            if (cs[i].n)
                s = put(s, cs[i].p, cs[i].n);
            *s++ = '\0';
        }
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
    return sort_labels(lab, m->n_labels, base);
}

static void set_header(struct kc_obj *o, const kc__sj_meta *m, size_t json_len, size_t total,
                       bool arena)
{
    atomic_init(&o->refs, 1);
    o->arena = arena;
    o->json_len = (uint32_t)json_len;
    o->heap = (uint32_t)total;
    o->n_labels = (uint32_t)m->n_labels;
    o->n_finalizers = (uint32_t)(m->n_finalizers > UINT32_MAX ? UINT32_MAX : m->n_finalizers);
    o->n_owners = (uint32_t)(m->n_owners > UINT32_MAX ? UINT32_MAX : m->n_owners);
    o->ext_off = 0;
    o->deleting = m->deleting;
    o->generation = m->generation;
    o->rv_int = rv_to_int(m->rv.p, m->rv.n);
}

void kc__obj_free(struct kc_obj *o)
{
    if (o->arena)
        kc__slab_free(o, o->heap);
    else
        free(o);
}

int kc__obj_build(const kc__sj_meta *m, unsigned flags, size_t max_size,
                  const kc__sj_list_info *list, const char *const *keep, kc_obj **ret,
                  kc__sj_err *e)
{
    bool check = (flags & KC__BUILD_CHECK_WS) != 0;
    if (m->len > max_size) {
        if (check && kc__sj_find_ws(m->text, m->len) < m->len)
            return KC__OBJ_NOT_COMPACT; /* minified, it may fit */
        return build_fail(e, KC_ETOOLARGE, m->off, "object of %zu bytes is over the limit of %zu",
                          m->len, max_size);
    }
    build_plan p = {0};
    plan_injections(m, list, &p);
    plan_text(m, flags, &p);
    if (KC__UNLIKELY(keep != NULL)) {
        int r = plan_projection(m, flags, keep, &p, e);
        if (r)
            return r;
    }

    /* Layout: header, text (+ padding), label offsets (4-aligned), strings. */
    kc__sj_str api = m->has_api_version ? m->api_version : p.ia.plain;
    kc__sj_str kind = m->has_kind ? m->kind : p.ik.plain;
    kc__sj_str strs[F_CTRL + 1] = {api, kind, m->ns, m->name, m->uid, m->rv, m->controller_uid};
    size_t str_bytes = 0;
    for (int i = 0; i < F_CTRL; i++)
        str_bytes += strs[i].n ? strs[i].n + 1 : 0;
    if (m->has_controller)
        str_bytes +=
            m->controller_uid.n + m->ctrl_api_version.n + m->ctrl_kind.n + m->ctrl_name.n + 4;
    for (size_t i = 0; i < m->n_labels; i++)
        str_bytes += m->labels[i].key.n + 1 + m->labels[i].value.n + 1;
    size_t head = sizeof(struct kc_obj);
    size_t lab_at = (head + p.json_len + 1 + 3) & ~(size_t)3;
    size_t str_at = lab_at + m->n_labels * 8;
    size_t total = str_at + str_bytes;
    if (total < head + p.json_len + KC__SJ_PADDING)
        total = head + p.json_len + KC__SJ_PADDING;
    if (total > MAX_OBJ + (MAX_OBJ / 2)) {
        free(p.proj);
        return build_fail(e, KC_ETOOLARGE, -1, "object too large (%zu bytes)", total);
    }
    size_t got = total;
    struct kc_obj *o = (flags & KC__BUILD_ARENA) ? kc__slab_alloc(total, &got) : NULL;
    bool arena = o != NULL;
    if (!o)
        o = malloc(total);
    if (!o) {
        free(p.proj);
        return build_fail(e, KC_ENOMEM, -1, "out of memory for a %zu-byte object", total);
    }
    set_header(o, m, p.json_len, got, arena);

    bool ws = false;
    size_t opens = 0; /* '{' and '[' bytes copied: bounds the nesting depth */
    char *d = o->json;
    *d++ = '{';
    if (KC__UNLIKELY(p.proj != NULL)) {
        d = copy_projected(d, &p, &ws, &opens);
        free(p.proj);
    } else {
        d = p.meta_only ? copy_meta_only(d, m, &p, &ws, &opens) : copy_full(d, m, &p, &ws, &opens);
    }
    *d = '\0';
    if (ws && check) {
        kc__obj_free(o);
        return KC__OBJ_NOT_COMPACT;
    }
    if (opens > KC__SJ_MAX_DEPTH) {
        int r = check_nesting(o, m, e);
        if (r) {
            kc__obj_free(o);
            return r;
        }
    }
    if (!put_strings(o, strs, m, lab_at, str_at)) {
        kc__obj_free(o);
        return build_fail(e, KC_EPARSE, m->off, "duplicate key in metadata.labels");
    }
    *ret = o;
    return 0;
}

/* ---- kc_obj_parse --------------------------------------------------------------------------- */

struct parse_state {
    unsigned flags;
    size_t max;
    const char *const *keep;
    kc_obj *obj;
};

static int parse_cb(void *ud, const kc__sj_meta *m, kc__sj_err *e)
{
    struct parse_state *st = ud;
    return kc__obj_build(m, st->flags, st->max, NULL, st->keep, &st->obj, e);
}

int(kc_obj_parse)(const char *json, size_t len, const kc_decode_opts *opts, size_t opts_size,
                  kc_obj **ret_obj, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_decode_opts, err);
    if ((!json && len) || !ret_obj)
        return kc_error_set(err, KC_EINVAL, "kc_obj_parse: NULL argument");
    int crc = kc__json_cpu_check(err);
    if (crc)
        return crc;
    struct parse_state st = {kc__decode_flags(opts), kc__decode_max(opts), opts->keep, NULL};
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
