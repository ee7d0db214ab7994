/*
 * pm_rec.c — a pod's record (layout in nodeagent/internal.h): the fields an enricher reads, as
 * packed NUL-terminated strings, built once per Pod event by the Pod informer's transform.
 *
 * Why not the projected kc_obj: a Pod's kept fields are ~1 KB of strings, but held as JSON text
 * (quotes, member names, the structure) plus the NUL-terminated copies a kc_obj makes of its
 * labels and metadata, plus the entry's own container table, they cost twice that. Here a string
 * costs its bytes, a NUL and a 2-byte slot, and a label or annotation key a 2-byte id (pm_dict.c).
 * The record is appended to the pod's identity object (kc__obj_ident_new), which the informer
 * stores: the pod is held once, in one allocation.
 *
 * What is kept: spec.nodeName, status.podIP, status.hostIP, metadata.deletionTimestamp; the label
 * and annotation maps (in their order); each owner reference's apiVersion, kind, name, uid,
 * controller and blockOwnerDeletion; each container status's name, image, imageID and containerID
 * (containers, init containers, ephemeral containers; at most 255 in all; one with none of the
 * four as a string is left out, as the projection drops it once written back). Values of another
 * JSON type than the field's, and strings that do not decode (a bad escape in text not decoded with
 * KC_DECODE_STRICT), are left out (an API server sends neither). Name, namespace, uid and
 * resourceVersion are the identity object's.
 *
 * Building walks the projected object with the library's iterator (obj_iter.c: one simdjson pass
 * per object or array visited, over that value's text only, in place; no tree).
 */
#include "nodeagent/internal.h"

#include <stdlib.h>
#include <string.h>

/* A slot being built: a dictionary id, or a string in the build's scratch arena. */
typedef struct bslot {
    uint32_t off, len; /* in scratch */
    int32_t id;        /* >= 0: a dictionary id */
    bool present;
} bslot;

typedef struct bvec {
    bslot *v;
    size_t n, cap;
} bvec;

typedef struct build {
    kc__pm_dict *dict;
    kc__buf scratch; /* the strings as found, back to back */
    bslot fixed[KC__PM_NF];
    bvec lab, ann, own, cs[3]; /* cs: containerStatuses, init…, ephemeral… */
    kc__buf flags_own;
    uint8_t present;
    bool broken; /* a pass of the one-walk path failed: take the field-by-field one */
    int rc;
} build;

static bslot str_slot(build *b, const char *s, size_t n)
{
    bslot sl = {(uint32_t)b->scratch.len, (uint32_t)n, -1, true};
    if (!b->rc && b->scratch.len + n > 0x7fffffffu)
        b->rc = KC_ETOOLARGE;
    if (!b->rc)
        b->rc = kc__buf_append(&b->scratch, s, n);
    return sl;
}

static void push(build *b, bvec *v, bslot s)
{
    if (!b->rc && (b->rc = kc__grow(&v->v, &v->cap, v->n + 1, sizeof *v->v, 16)) == 0)
        v->v[v->n++] = s;
}

static bslot absent(void)
{
    return (bslot){0, 0, -1, false};
}

/* The current value of it as a string slot, absent when it is not a string or not a valid one
 * (a bad escape the decoder did not validate: KC_DECODE_STRICT is the caller's choice); out of
 * memory fails the build. */
static bslot value_slot(build *b, kc_obj_iter *it)
{
    const char *s;
    size_t n;
    if (kc_obj_iter_type(it) != KC_JSON_STRING)
        return absent();
    int r = kc_obj_iter_string(it, &s, &n);
    if (r == KC_ENOMEM && !b->rc)
        b->rc = r;
    return r ? absent() : str_slot(b, s, n);
}

static bool key_is(const char *k, size_t kn, const char *want)
{
    return k && strlen(want) == kn && memcmp(k, want, kn) == 0;
}

/* The member iterator of the object or array it is positioned on (NULL: none there); a child pass
 * that fails (malformed text a lazy decode let through) marks the build for the slow path. */
static kc_obj_iter *child(build *b, const kc_obj_iter *it, kc_json_type want)
{
    kc_obj_iter *m = NULL;
    if (kc_obj_iter_type(it) != want)
        return NULL;
    if (kc__obj_iter_child(it, &m, NULL)) {
        b->broken = true;
        return NULL;
    }
    return m;
}

/* A label or annotation map (m: its members, consumed): (key, value) slots for its string
 * members. */
static void walk_map(build *b, kc_obj_iter *m, bvec *v, uint8_t bit)
{
    if (!m)
        return;
    b->present |= bit;
    while (!b->rc && kc_obj_iter_next(m) == 1) {
        size_t kn;
        const char *k = kc_obj_iter_key(m, &kn);
        bslot vs = k ? value_slot(b, m) : absent();
        if (!vs.present) /* not a (valid) string: left out, key and all */
            continue;
        int64_t id = kc__pm_dict_intern(b->dict, k, kn);
        bslot ks = id >= 0 ? (bslot){0, (uint32_t)kn, (int32_t)id, true} : str_slot(b, k, kn);
        push(b, v, ks);
        push(b, v, vs);
    }
    kc_obj_iter_free(m);
}

/* The elements (objects) of an array (a: its elements, consumed): four string members each
 * (names in f), and for owner references (flags not NULL) a byte of their booleans. An element
 * that does not decode is left out. */
static void walk_array(build *b, kc_obj_iter *a, bvec *v, const char *const f[4], kc__buf *flags,
                       size_t max)
{
    if (!a)
        return;
    while (!b->rc && v->n / 4 < max && kc_obj_iter_next(a) == 1) {
        kc_obj_iter *m = NULL;
        if (kc_obj_iter_type(a) != KC_JSON_OBJECT || kc__obj_iter_child(a, &m, NULL))
            continue;
        bslot s[4] = {absent(), absent(), absent(), absent()};
        uint8_t fl = 0;
        unsigned seen = 0;
        while (!b->rc && kc_obj_iter_next(m) == 1) {
            size_t kn;
            const char *k = kc_obj_iter_key(m, &kn);
            bool bv;
            for (int i = 0; i < 4; i++)
                if (!(seen & (1u << i)) && key_is(k, kn, f[i])) { /* first occurrence */
                    seen |= 1u << i;
                    s[i] = value_slot(b, m);
                }
            if (flags && kc_obj_iter_bool(m, &bv) == 0) {
                if (key_is(k, kn, "controller"))
                    fl |= KC__PM_OWN_CTRL | (bv ? KC__PM_OWN_CTRL_TRUE : 0);
                else if (key_is(k, kn, "blockOwnerDeletion"))
                    fl |= KC__PM_OWN_BOD | (bv ? KC__PM_OWN_BOD_TRUE : 0);
            }
        }
        kc_obj_iter_free(m);
        if (!flags && !s[0].present && !s[1].present && !s[2].present && !s[3].present)
            continue; /* a container status with none of the four strings: nothing to keep */
        for (int i = 0; i < 4; i++)
            push(b, v, s[i]);
        if (!b->rc && flags)
            b->rc = kc__buf_append(flags, &fl, 1);
    }
    kc_obj_iter_free(a);
}

static const char *const OWN_F[4] = {"apiVersion", "kind", "name", "uid"};
static const char *const CONT_F[4] = {"name", "image", "imageID", "containerID"};

enum part { P_META, P_SPEC, P_STATUS };

/* The members we keep of the metadata, spec or status object it is positioned on. */
/* The members kept of metadata, spec and status, in that order. */
static const char *const MEMBERS[] = {"labels",
                                      "annotations",
                                      "ownerReferences",
                                      "deletionTimestamp",
                                      "nodeName",
                                      "podIP",
                                      "hostIP",
                                      "containerStatuses",
                                      "initContainerStatuses",
                                      "ephemeralContainerStatuses"};
static const int PART_FIRST[] = {0, 4, 5, 10};

/* Member m (index in MEMBERS) of its part, it positioned on its value. */
static void walk_member(build *b, kc_obj_iter *it, int m)
{
    bool array = kc_obj_iter_type(it) == KC_JSON_ARRAY;
    switch (m) {
    case 0:
        walk_map(b, child(b, it, KC_JSON_OBJECT), &b->lab, KC__PM_HAS_LABELS);
        break;
    case 1:
        walk_map(b, child(b, it, KC_JSON_OBJECT), &b->ann, KC__PM_HAS_ANNOTS);
        break;
    case 2:
        b->present |= array ? KC__PM_HAS_OWNERS : 0;
        walk_array(b, child(b, it, KC_JSON_ARRAY), &b->own, OWN_F, &b->flags_own, SIZE_MAX);
        break;
    case 3:
        b->fixed[KC__PM_F_DELETION] = value_slot(b, it);
        break;
    case 4:
        b->fixed[KC__PM_F_NODE] = value_slot(b, it);
        break;
    case 5:
        b->fixed[KC__PM_F_POD_IP] = value_slot(b, it);
        break;
    case 6:
        b->fixed[KC__PM_F_HOST_IP] = value_slot(b, it);
        break;
    default:
        b->present |= array ? (uint8_t)(KC__PM_HAS_CS << (m - 7)) : 0;
        walk_array(b, child(b, it, KC_JSON_ARRAY), &b->cs[m - 7], CONT_F, NULL, KC__PM_MAX_CONT);
    }
}

/* The members we keep of the metadata, spec or status object parent is positioned on. A member
 * named twice is read at its first occurrence, as a JSON Pointer finds it (kc_obj_get_*). */
static void walk_part(build *b, const kc_obj_iter *parent, enum part part)
{
    kc_obj_iter *it = child(b, parent, KC_JSON_OBJECT);
    unsigned seen = 0;
    while (it && !b->rc && kc_obj_iter_next(it) == 1) {
        size_t kn;
        const char *k = kc_obj_iter_key(it, &kn);
        for (int m = PART_FIRST[part]; m < PART_FIRST[part + 1]; m++) {
            if (!(seen & (1u << m)) && key_is(k, kn, MEMBERS[m])) {
                seen |= 1u << m;
                walk_member(b, it, m);
            }
        }
    }
    kc_obj_iter_free(it);
}

/* One pass over the object's members, one over each of metadata, spec and status; false when a
 * pass failed (the text holds something the lazy decode let through). */
static bool walk(build *b, const kc_obj *src)
{
    kc_obj_iter *root = NULL;
    if (kc_obj_iter_new(src, "", &root, NULL))
        return false;
    static const char *const PARTS[3] = {"metadata", "spec", "status"};
    unsigned seen = 0;
    while (!b->rc && !b->broken && kc_obj_iter_next(root) == 1) {
        size_t kn;
        const char *k = kc_obj_iter_key(root, &kn);
        for (int p = 0; p < 3; p++)
            if (!(seen & (1u << p)) && key_is(k, kn, PARTS[p])) {
                seen |= 1u << p;
                walk_part(b, root, (enum part)p);
            }
    }
    kc_obj_iter_free(root);
    return !b->broken;
}

static void build_clear(build *b)
{
    free(b->lab.v);
    free(b->ann.v);
    free(b->own.v);
    for (int c = 0; c < 3; c++)
        free(b->cs[c].v);
    kc__buf_free(&b->scratch);
    kc__buf_free(&b->flags_own);
}

/* The members (want '{') or elements (want '[') of the value at ptr; NULL when absent, of another
 * type, or not decodable. */
static kc_obj_iter *iter_at(const kc_obj *src, const char *ptr, char want)
{
    const char *raw;
    size_t n;
    kc_obj_iter *it = NULL;
    if (kc_obj_get_raw(src, ptr, &raw, &n, NULL) || !n || raw[0] != want ||
        kc_obj_iter_new(src, ptr, &it, NULL))
        return NULL;
    return it;
}

/* The slow path: each kept field by its own pointer, so one malformed part loses only itself. */
static void walk_fields(build *b, const kc_obj *src)
{
    static const char *const FIX[KC__PM_NF] = {"/spec/nodeName", "/status/podIP", "/status/hostIP",
                                               "/metadata/deletionTimestamp"};
    static const char *const CSP[3] = {"/status/containerStatuses", "/status/initContainerStatuses",
                                       "/status/ephemeralContainerStatuses"};
    for (int f = 0; f < KC__PM_NF && !b->rc; f++) {
        char *str = NULL;
        size_t n = 0;
        int r = kc_obj_get_string(src, FIX[f], &str, &n, NULL);
        if (r == KC_ENOMEM)
            b->rc = r;
        else if (!r)
            b->fixed[f] = str_slot(b, str, n);
        free(str);
    }
    walk_map(b, iter_at(src, "/metadata/labels", '{'), &b->lab, KC__PM_HAS_LABELS);
    walk_map(b, iter_at(src, "/metadata/annotations", '{'), &b->ann, KC__PM_HAS_ANNOTS);
    kc_obj_iter *it = iter_at(src, "/metadata/ownerReferences", '[');
    b->present |= it ? KC__PM_HAS_OWNERS : 0;
    walk_array(b, it, &b->own, OWN_F, &b->flags_own, SIZE_MAX);
    for (int c = 0; c < 3; c++) {
        it = iter_at(src, CSP[c], '[');
        b->present |= it ? (uint8_t)(KC__PM_HAS_CS << c) : 0;
        walk_array(b, it, &b->cs[c], CONT_F, NULL, KC__PM_MAX_CONT);
    }
}

/* ---- assembly ----------------------------------------------------------------------------------
 */

/* Every slot of the record, in order (the containers' kinds into kinds). */
static int all_slots(build *b, bvec *out, uint8_t *kinds, uint32_t *n_cont)
{
    int rc = 0;
    for (int i = 0; i < KC__PM_NF; i++)
        push(b, out, b->fixed[i]);
    const bvec *parts[3] = {&b->lab, &b->ann, &b->own};
    for (int p = 0; p < 3; p++)
        for (size_t i = 0; i < parts[p]->n; i++)
            push(b, out, parts[p]->v[i]);
    *n_cont = 0;
    for (int c = 0; c < 3; c++)
        for (size_t i = 0; i + 4 <= b->cs[c].n && *n_cont < KC__PM_MAX_CONT; i += 4) {
            for (int f = 0; f < 4; f++)
                push(b, out, b->cs[c].v[i + (size_t)f]);
            kinds[(*n_cont)++] = (uint8_t)c;
        }
    rc = b->rc;
    return rc;
}

static void put_slot(uint8_t *slots, bool wide, size_t i, uint32_t v)
{
    if (wide)
        memcpy(slots + 4 * i, &v, 4);
    else {
        uint16_t w = (uint16_t)v;
        memcpy(slots + 2 * i, &w, 2);
    }
}

/* The identity object with the record of b's slots. */
static int assemble(build *b, const kc_obj *src, const bvec *sl, const uint8_t *kinds,
                    uint32_t n_cont, kc_obj **ret)
{
    size_t arena = 1;
    for (size_t i = 0; i < sl->n; i++)
        if (sl->v[i].present && sl->v[i].id < 0)
            arena += (size_t)sl->v[i].len + 1;
    bool wide = arena >= 0x8000;
    uint32_t hi = wide ? 0x80000000u : 0x8000u;
    if (arena >= 0x80000000u)
        return KC_ETOOLARGE;
    size_t n_own = b->own.n / 4, slots_at = sizeof(kc__pm_rec);
    size_t flags_at = slots_at + sl->n * (wide ? 4 : 2), arena_at = flags_at + n_own + n_cont;
    kc_obj *o = NULL;
    int rc = kc__obj_ident_new(src, arena_at + arena, &o);
    if (rc)
        return rc;
    kc__pm_rec *r = kc__obj_ext(o);
    char *base = (char *)r;
    *r = (kc__pm_rec){(uint32_t)(b->lab.n / 2),
                      (uint32_t)(b->ann.n / 2),
                      (uint32_t)n_own,
                      n_cont,
                      (uint32_t)arena_at,
                      (uint32_t)arena,
                      wide,
                      b->present};
    if (n_own)
        memcpy(base + flags_at, b->flags_own.data, n_own);
    if (n_cont)
        memcpy(base + flags_at + n_own, kinds, n_cont);
    char *a = base + arena_at;
    size_t at = 1; /* a[0] = NUL (calloc'd): offset 0 is "absent" */
    for (size_t i = 0; i < sl->n; i++) {
        const bslot *s = &sl->v[i];
        uint32_t v = 0;
        if (s->present && s->id >= 0)
            v = hi | (uint32_t)s->id;
        else if (s->present) {
            memcpy(a + at, b->scratch.data + s->off, s->len);
            v = (uint32_t)at;
            at += (size_t)s->len + 1;
        }
        put_slot((uint8_t *)base + slots_at, wide, i, v);
    }
    *ret = o;
    return 0;
}

int kc__pm_rec_build(const kc_obj *src, kc__pm_dict *d, kc_obj **ret)
{
    *ret = NULL;
    build *b = calloc(1, sizeof *b);
    bvec sl = {0};
    uint8_t kinds[KC__PM_MAX_CONT];
    uint32_t n_cont = 0;
    if (!b)
        return KC_ENOMEM;
    b->dict = d;
    kc__buf_init(&b->scratch, 0);
    kc__buf_init(&b->flags_own, 0);
    if (!walk(b, src) && !b->rc) { /* start over, field by field */
        build_clear(b);
        memset(b, 0, sizeof *b);
        b->dict = d;
        kc__buf_init(&b->scratch, 0);
        kc__buf_init(&b->flags_own, 0);
        walk_fields(b, src);
    }
    for (int c = 0; c < 3; c++) /* a status list renders only with an element in it: the
                                   projection drops an empty one once written back */
        b->present = (uint8_t)(b->cs[c].n ? b->present | (KC__PM_HAS_CS << c)
                                          : b->present & ~(KC__PM_HAS_CS << c));
    int rc = b->rc ? b->rc : all_slots(b, &sl, kinds, &n_cont);
    if (!rc)
        rc = assemble(b, src, &sl, kinds, n_cont, ret);
    free(sl.v);
    build_clear(b);
    free(b);
    return rc;
}

/* ---- reading --------------------------------------------------------------------------------- */

static uint32_t slot(const kc__pm_rec *r, size_t i)
{
    const uint8_t *p = (const uint8_t *)(r + 1);
    if (r->wide) {
        uint32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    uint16_t v;
    memcpy(&v, p + 2 * i, 2);
    return v;
}

const char *kc__pm_rec_str(const kc__pm_rec *r, const kc__pm_dict *d, size_t i, size_t *len,
                           bool *present)
{
    uint32_t v = slot(r, i), hi = r->wide ? 0x80000000u : 0x8000u;
    if (present)
        *present = v != 0;
    if (v == 0) {
        if (len)
            *len = 0;
        return "";
    }
    if (v & hi) {
        const kc__pm_dstr *k = kc__pm_dict_get(d, v & ~hi);
        if (len)
            *len = k->len;
        return k->s;
    }
    const char *a = (const char *)r + r->arena_at;
    if (len) { /* up to the next string in the arena */
        size_t n = kc__pm_rec_cont(r, r->n_cont), end = r->arena_len;
        for (size_t j = i + 1; j < n; j++) {
            uint32_t w = slot(r, j);
            if (w && !(w & hi)) {
                end = w;
                break;
            }
        }
        *len = end - v - 1;
    }
    return a + v;
}
