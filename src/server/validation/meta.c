/*
 * meta.c — the ObjectMeta rules of apimachinery's ValidateObjectMeta this room owns (labels:
 * qualified-name keys and label values; annotations: keys as qualified names compared
 * lower-case, at most 262144 bytes of keys and values in total; finalizers: qualified names, not
 * both orphan and foregroundDeletion), metav1 label selectors (ValidateLabelSelector) and their
 * matching (LabelSelectorAsSelector + Matches) against a template's labels. The name, namespace
 * and system fields are the storage room's (storage/write.c, patch/validate.c).
 * Cost: linear in the metadata.
 */
#include "server/validation/validation_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANNOTATIONS_MAX 262144L /* TotalAnnotationSizeLimitB */

void kc__v_annotations(kc__vlist *l, const char *field, const json_t *ann)
{
    const char *k;
    json_t *v;
    long total = 0;
    json_object_foreach((json_t *)ann, k, v)
    {
        size_t n = strlen(k);
        char *low = malloc(n + 1);
        if (!low) {
            l->oom = true;
            return;
        }
        for (size_t i = 0; i <= n; i++)
            low[i] = (char)tolower((unsigned char)k[i]);
        kc__v_qualified_name(l, field, k, low);
        free(low);
        total += (long)n + (long)json_string_length(v);
    }
    if (total > ANNOTATIONS_MAX)
        kc__v_toolong(l, field, ANNOTATIONS_MAX);
}

static void finalizers(kc__vlist *l, const char *field, const json_t *fin)
{
    bool orphan = false, foreground = false;
    size_t i;
    json_t *f;
    json_array_foreach(fin, i, f)
    {
        const char *s = json_string_value(f);
        if (!s)
            continue;
        kc__v_qualified_name(l, field, s, s);
        orphan |= !strcmp(s, "orphan");
        foreground |= !strcmp(s, "foregroundDeletion");
    }
    if (orphan && foreground) {
        kc__buf b = KC__BUF_INIT(0);
        kc__buf_append_str(&b, "[]string{");
        json_array_foreach(fin, i, f)
        {
            if (i)
                kc__buf_append_str(&b, ", ");
            kc__v_go_quote(&b, json_string_value(f) ? json_string_value(f) : "");
        }
        kc__buf_append_char(&b, '}');
        kc__v_invalid_v(l, field, b.data,
                        "finalizer orphan and foregroundDeletion cannot be both set");
        kc__buf_free(&b);
    }
}

void kc__v_labels_annotations(kc__vlist *l, const char *base, const json_t *meta)
{
    char f[KC__VPATH];
    const json_t *labels = json_object_get(meta, "labels");
    const json_t *ann = json_object_get(meta, "annotations");
    if (json_object_size(labels)) {
        snprintf(f, sizeof f, "%s.labels", base);
        kc__v_labels(l, f, labels);
    }
    if (json_object_size(ann)) {
        snprintf(f, sizeof f, "%s.annotations", base);
        kc__v_annotations(l, f, ann);
    }
}

void kc__v_object_meta(kc__vlist *l, const char *base, const json_t *meta)
{
    char f[KC__VPATH];
    const json_t *fin = json_object_get(meta, "finalizers");
    kc__v_labels_annotations(l, base, meta);
    if (json_array_size(fin)) {
        snprintf(f, sizeof f, "%s.finalizers", base);
        finalizers(l, f, fin);
    }
}

void kc__v_label_selector(kc__vlist *l, const char *field, const json_t *sel)
{
    char f[KC__VPATH];
    if (!json_is_object(sel))
        return;
    snprintf(f, sizeof f, "%s.matchLabels", field);
    kc__v_labels(l, f, json_object_get(sel, "matchLabels"));
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *op = json_string_value(json_object_get(e, "operator"));
        const char *key = json_string_value(json_object_get(e, "key"));
        const json_t *vals = json_object_get(e, "values");
        op = op ? op : "";
        snprintf(f, sizeof f, "%s.matchExpressions[%zu].values", field, i);
        if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
            if (json_array_size(vals) == 0)
                kc__v_required(l, f, "must be specified when `operator` is 'In' or 'NotIn'");
        } else if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
            if (json_array_size(vals) > 0)
                kc__v_forbidden(l, f,
                                "may not be specified when `operator` is 'Exists' or "
                                "'DoesNotExist'");
        } else {
            snprintf(f, sizeof f, "%s.matchExpressions[%zu].operator", field, i);
            kc__v_invalid_s(l, f, op, "not a valid selector operator");
        }
        snprintf(f, sizeof f, "%s.matchExpressions[%zu].key", field, i);
        kc__v_qualified_name(l, f, key ? key : "", key ? key : "");
        size_t j;
        json_t *v;
        json_array_foreach(vals, j, v)
        {
            snprintf(f, sizeof f, "%s.matchExpressions[%zu].values[%zu]", field, i, j);
            if (json_is_string(v))
                kc__v_label_value(l, f, json_string_value(v));
        }
    }
}

static bool in_values(const json_t *vals, const char *s)
{
    size_t j;
    json_t *v;
    json_array_foreach(vals, j,
                       v) if (json_is_string(v) && !strcmp(json_string_value(v), s)) return true;
    return false;
}

/* One matchExpressions requirement against labels; *bad when it is not a valid requirement. */
static bool expr_matches(const json_t *e, const json_t *labels, bool *bad)
{
    const char *op = json_string_value(json_object_get(e, "operator"));
    const char *key = json_string_value(json_object_get(e, "key"));
    const json_t *vals = json_object_get(e, "values");
    const char *have = json_string_value(json_object_get(labels, key ? key : ""));
    op = op ? op : "";
    if (!key || !*key)
        *bad = true;
    if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
        if (json_array_size(vals) == 0)
            *bad = true;
        bool in = have && in_values(vals, have);
        return !strcmp(op, "In") ? in : !in;
    }
    if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
        if (json_array_size(vals) > 0)
            *bad = true;
        return !strcmp(op, "Exists") ? have != NULL : have == NULL;
    }
    *bad = true;
    return false;
}

bool kc__v_selector_matches(const json_t *sel, const json_t *labels, bool *empty, bool *bad)
{
    *empty = false;
    *bad = false;
    if (!json_is_object(sel))
        return false; /* labels.Nothing() */
    const json_t *ml = json_object_get(sel, "matchLabels");
    const json_t *me = json_object_get(sel, "matchExpressions");
    *empty = json_object_size(ml) + json_array_size(me) == 0;
    bool ok = true;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)ml, k, v)
    {
        const char *have = json_string_value(json_object_get(labels, k));
        if (!have || !json_is_string(v) || strcmp(have, json_string_value(v)) != 0)
            ok = false;
    }
    size_t i;
    json_t *e;
    json_array_foreach(me, i, e) ok &= expr_matches(e, labels, bad);
    return ok && !*bad;
}
