/*
 * informer/spec.c — what an informer watches, checked where it enters (kc_informer_new,
 * kc_cache_get_informer), and the identity derived from it.
 *
 * Checks: the gvr and namespace have Kubernetes' syntax (rest/path.c: a resource is a plural
 * name, never a path or a query), selectors parse with the label and field selector parsers
 * (k8s.io/apimachinery labels.Parse / fields.ParseSelector), and every field selector term names
 * a dotted field path. A rejected spec is KC_EINVAL with err naming the field, the reason and, for
 * selectors, the byte offset. Without these checks the API server answers 400 (or, for a resource
 * with a '/', serves another URL) and the reflector would retry that forever.
 *
 * Selectors are kept in canonical form (kc_*_selector_string: requirements sorted, `==` as `=`),
 * so "b=2, a=1" and "a=1,b=2" are one informer in a kc_cache and one name.
 *
 * Identity (docs/informer.md, "Names"): one string that tells informers apart, used as the
 * kc_cache key and as the derived display name:
 *   [NAMESPACE "/"] RESOURCE ["." VERSION "." GROUP] ["{" LABELS "}"] ["[" FIELDS "]"]
 *   ["(metadata-only)"] ["(shard " FIELD ":" START "-" END ["," START "-" END]… ")"]
 * The core group writes RESOURCE alone for v1 and RESOURCE "." VERSION "." for other versions
 * (kubectl's fully qualified form). Each part's syntax keeps the string unambiguous: namespaces
 * and resources hold no '.', '/', '{' or '['; canonical label selectors hold no brackets; the
 * field part is the only one that may, and it comes last before the fixed metadata suffix. The
 * shard part (the ranges the informer was created with, 16 hex digits each; shard.c) is last.
 */
#include "informer/internal.h"

#include "rest/internal.h"
#include "kcache/selector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kc__inf_spec_clear(kc__inf_spec *s)
{
    free(s->group);
    free(s->version);
    free(s->resource);
    free(s->ns);
    free(s->label_selector);
    free(s->field_selector);
    kc_shard_selector_free(s->shard);
    free(s->id);
    memset(s, 0, sizeof(*s));
}

/* A field selector term must name a field: dot-separated non-empty segments of [A-Za-z0-9_-]. */
static const char *field_path_problem(const char *f)
{
    if (!*f)
        return "the field path is empty";
    bool seg_empty = true;
    for (const char *p = f; *p; p++) {
        char c = *p;
        if (c == '.') {
            if (seg_empty)
                return "the field path has an empty segment";
            seg_empty = true;
            continue;
        }
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return "a field path is dot-separated names of letters, digits, '_' and '-' "
                   "(e.g. \"metadata.name\", \"status.phase\")";
        seg_empty = false;
    }
    return seg_empty ? "the field path has an empty segment" : NULL;
}

/* Put "bad <what> selector "<text>": " before the parser's message (offset kept). */
static int rewrap(kc_error *err, int rc, const char *what, const char *text)
{
    if (!err)
        return rc;
    char *m = err->message;
    err->message = NULL;
    int64_t off = err->offset;
    char at[48] = "";
    if (off >= 0)
        snprintf(at, sizeof(at), " (at byte %lld)", (long long)off);
    kc_error_set(err, rc, "bad %s selector \"%.200s\": %s%s", what, text, m ? m : kc_strerror(rc),
                 at);
    err->offset = off;
    free(m);
    return rc;
}

/* Parse, check and canonicalise the selectors of o into s. */
static int canonical_selectors(kc__inf_spec *s, const char *ls, const char *fs, kc_error *err)
{
    if (ls && *ls) {
        kc_label_selector *sel = NULL;
        int rc = kc_label_selector_parse(ls, &sel, err);
        if (rc < 0)
            return rewrap(err, rc, "label", ls);
        if (!kc_label_selector_empty(sel) && !(s->label_selector = kc_label_selector_string(sel)))
            rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        kc_label_selector_free(sel);
        if (rc < 0)
            return rc;
    }
    if (fs && *fs) {
        kc_field_selector *sel = NULL;
        int rc = kc_field_selector_parse(fs, &sel, err);
        if (rc < 0)
            return rewrap(err, rc, "field", fs);
        for (size_t i = 0; rc == 0 && i < kc_field_selector_count(sel); i++) {
            const char *f = kc_field_selector_field(sel, i);
            const char *why = field_path_problem(f);
            if (why)
                rc =
                    kc_error_set(err, KC_EINVAL,
                                 "bad field selector \"%.200s\": field \"%.100s\": %s", fs, f, why);
        }
        if (rc == 0 && !kc_field_selector_empty(sel) &&
            !(s->field_selector = kc_field_selector_string(sel)))
            rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        kc_field_selector_free(sel);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static char *build_id(const kc__inf_spec *s)
{
    kc__buf b = KC__BUF_INIT(0);
    int rc = 0;
    if (s->ns)
        rc = kc__buf_printf(&b, "%s/", s->ns);
    rc = rc ? rc : kc__buf_append_str(&b, s->resource);
    if (!rc && *s->group)
        rc = kc__buf_printf(&b, ".%s.%s", s->version, s->group);
    else if (!rc && strcmp(s->version, "v1") != 0)
        rc = kc__buf_printf(&b, ".%s.", s->version);
    if (!rc && s->label_selector)
        rc = kc__buf_printf(&b, "{%s}", s->label_selector);
    if (!rc && s->field_selector)
        rc = kc__buf_printf(&b, "[%s]", s->field_selector);
    if (!rc && s->metadata_only)
        rc = kc__buf_append_str(&b, "(metadata-only)");
    if (!rc && (s->shard || s->shard_none))
        rc = kc__inf_shard_id(&b, s->shard_none, s->shard);
    if (rc) {
        kc__buf_free(&b);
        return NULL;
    }
    return kc__buf_steal(&b, NULL);
}

int kc__inf_spec_init(kc__inf_spec *s, const kc_gvr *gvr, const kc_informer_opts *o, kc_error *err)
{
    memset(s, 0, sizeof(*s));
    const char *ns = o ? o->ns : NULL;
    int rc = kc__gvr_check(gvr, err);
    rc = rc ? rc : kc__ns_check(ns, err);
    rc = rc ? rc
            : canonical_selectors(s, o ? o->label_selector : NULL, o ? o->field_selector : NULL,
                                  err);
    if (rc < 0) {
        kc__inf_spec_clear(s);
        return rc;
    }
    if (o && (rc = kc__inf_shard_from_opts(o, &s->shard, err)) < 0) {
        kc__inf_spec_clear(s);
        return rc;
    }
    if (o && o->shard_field != KC_SHARD_FIELD_NONE && !s->shard)
        s->shard_none = o->shard_field;
    s->metadata_only = o && o->metadata_only;
    s->group = kc__strdup(gvr->group ? gvr->group : "");
    s->version = kc__strdup(gvr->version);
    s->resource = kc__strdup(gvr->resource);
    s->ns = (ns && *ns) ? kc__strdup(ns) : NULL;
    if (s->group && s->version && s->resource && (!ns || !*ns || s->ns))
        s->id = build_id(s);
    if (!s->id) {
        kc__inf_spec_clear(s);
        return kc_error_set(err, KC_ENOMEM, "informer: out of memory");
    }
    return 0;
}
