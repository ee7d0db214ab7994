/*
 * table_wide.c — the priority-1 cells of kubectl's printers (shown by `kubectl get -o wide`):
 * Containers/Images/Selector of workloads, Selector of Services, IP/Node/Nominated Node/
 * Readiness Gates of Pods, addresses and node info of Nodes — written as upstream's printers
 * write them (pkg/printers/internalversion: layoutContainerCells, metav1.FormatLabelSelector,
 * labels.FormatLabels, "<none>" / "<unknown>" for what is absent). Reads only the sub-trees it
 * needs (raw, decoded with jansson). Thread-safe: pure functions.
 */
#include "server/discovery/table_internal.h"

#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

json_t *kc__table_json(const kc_obj *o, const char *ptr)
{
    const char *raw;
    size_t n;
    if (kc_obj_get_raw(o, ptr, &raw, &n, NULL) < 0)
        return NULL;
    return json_loadb(raw, n, JSON_DECODE_ANY, NULL);
}

/* The string at ptr, or dflt when absent or empty. */
static void append_str(json_t *row, const kc_obj *o, const char *ptr, const char *dflt)
{
    char *s = NULL;
    if (kc_obj_get_string(o, ptr, &s, NULL, NULL) == 0 && *s)
        json_array_append_new(row, json_string(s));
    else
        json_array_append_new(row, json_string(dflt));
    free(s);
}

static void append_buf(json_t *row, kc__buf *b, const char *dflt)
{
    json_array_append_new(row, json_string(b->len ? b->data : dflt));
    kc__buf_free(b);
}

void kc__wide_containers(const kc_obj *o, const char *ptr, json_t *row)
{
    json_t *cs = kc__table_json(o, ptr);
    kc__buf names = KC__BUF_INIT(16384), images = KC__BUF_INIT(16384);
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c)
    {
        const char *n = json_string_value(json_object_get(c, "name"));
        const char *im = json_string_value(json_object_get(c, "image"));
        kc__buf_printf(&names, "%s%s", i ? "," : "", n ? n : "");
        kc__buf_printf(&images, "%s%s", i ? "," : "", im ? im : "");
    }
    json_decref(cs);
    json_array_append_new(row, json_string(names.data ? names.data : ""));
    json_array_append_new(row, json_string(images.data ? images.data : ""));
    kc__buf_free(&names);
    kc__buf_free(&images);
}

typedef struct req {
    const char *key;
    char *text;
} req;

static int req_cmp(const void *a, const void *b)
{
    return strcmp(((const req *)a)->key, ((const req *)b)->key);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "key in (a,b)" / "key notin (a,b)" / "key" / "!key" of one matchExpressions entry (new). */
static char *expr_text(const json_t *e)
{
    const char *key = json_string_value(json_object_get(e, "key"));
    const char *op = json_string_value(json_object_get(e, "operator"));
    json_t *vals = json_object_get(e, "values");
    kc__buf b = KC__BUF_INIT(16384);
    if (!key || !op)
        return NULL;
    if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
        kc__buf_printf(&b, "%s%s", *op == 'D' ? "!" : "", key);
        return b.data;
    }
    size_t n = json_array_size(vals);
    const char **v = calloc(n ? n : 1, sizeof(*v));
    for (size_t i = 0; v && i < n; i++)
        v[i] = json_string_value(json_array_get(vals, i))
                   ? json_string_value(json_array_get(vals, i))
                   : "";
    if (v)
        qsort(v, n, sizeof(*v), str_cmp); /* a set: sorted */
    kc__buf_printf(&b, "%s %s (", key, !strcmp(op, "NotIn") ? "notin" : "in");
    for (size_t i = 0; v && i < n; i++)
        kc__buf_printf(&b, "%s%s", i ? "," : "", v[i]);
    kc__buf_append_str(&b, ")");
    free(v);
    return b.data;
}

void kc__wide_label_selector(const kc_obj *o, const char *ptr, json_t *row)
{
    json_t *sel = kc__table_json(o, ptr);
    json_t *ml = json_object_get(sel, "matchLabels");
    json_t *me = json_object_get(sel, "matchExpressions");
    size_t n = json_object_size(ml) + json_array_size(me), k = 0;
    req *r = calloc(n ? n : 1, sizeof(*r));
    const char *key;
    json_t *v;
    json_object_foreach(ml, key, v)
    {
        kc__buf b = KC__BUF_INIT(16384);
        kc__buf_printf(&b, "%s=%s", key, json_string_value(v) ? json_string_value(v) : "");
        if (r && b.data)
            r[k++] = (req){key, b.data};
        else
            kc__buf_free(&b);
    }
    size_t i;
    json_array_foreach(me, i, v)
    {
        char *t = expr_text(v);
        if (r && t)
            r[k++] = (req){json_string_value(json_object_get(v, "key")), t};
        else
            free(t);
    }
    if (r)
        qsort(r, k, sizeof(*r), req_cmp); /* requirements by key, as labels.Selector */
    kc__buf b = KC__BUF_INIT(16384);
    for (i = 0; i < k; i++) {
        kc__buf_printf(&b, "%s%s", i ? "," : "", r[i].text);
        free(r[i].text);
    }
    free(r);
    json_decref(sel);
    append_buf(row, &b, "<none>");
}

void kc__wide_selector_map(const kc_obj *o, const char *ptr, json_t *row)
{
    json_t *m = kc__table_json(o, ptr);
    size_t n = json_object_size(m), k = 0;
    const char **keys = calloc(n ? n : 1, sizeof(*keys));
    const char *key;
    json_t *v;
    json_object_foreach(m, key, v) if (keys) keys[k++] = key;
    if (keys)
        qsort(keys, k, sizeof(*keys), str_cmp);
    kc__buf b = KC__BUF_INIT(16384);
    for (size_t i = 0; i < k; i++) {
        const char *s = json_string_value(json_object_get(m, keys[i]));
        kc__buf_printf(&b, "%s%s=%s", i ? "," : "", keys[i], s ? s : "");
    }
    free(keys);
    json_decref(m);
    append_buf(row, &b, "<none>");
}

void kc__wide_pod(const kc_obj *o, json_t *row)
{
    append_str(row, o, "/status/podIP", "<none>");
    append_str(row, o, "/spec/nodeName", "<none>");
    append_str(row, o, "/status/nominatedNodeName", "<none>");
    json_t *gates = kc__table_json(o, "/spec/readinessGates");
    if (!json_array_size(gates)) {
        json_decref(gates);
        json_array_append_new(row, json_string("<none>"));
        return;
    }
    json_t *conds = kc__table_json(o, "/status/conditions");
    size_t i, j, ok = 0;
    json_t *g, *c;
    json_array_foreach(gates, i, g)
    {
        const char *t = json_string_value(json_object_get(g, "conditionType"));
        json_array_foreach(conds, j, c)
        {
            if (t && kc__streq(json_string_value(json_object_get(c, "type")), t) &&
                kc__streq(json_string_value(json_object_get(c, "status")), "True")) {
                ok++;
                break;
            }
        }
    }
    kc__buf b = KC__BUF_INIT(32);
    kc__buf_printf(&b, "%zu/%zu", ok, json_array_size(gates));
    json_decref(gates);
    json_decref(conds);
    append_buf(row, &b, "<none>");
}

/* The first status.addresses entry of type t, or "<none>". */
static void node_address(const json_t *addrs, const char *t, json_t *row)
{
    size_t i;
    json_t *a;
    json_array_foreach(addrs, i, a)
    {
        if (kc__streq(json_string_value(json_object_get(a, "type")), t)) {
            const char *s = json_string_value(json_object_get(a, "address"));
            json_array_append_new(row, json_string(s ? s : ""));
            return;
        }
    }
    json_array_append_new(row, json_string("<none>"));
}

void kc__wide_node(const kc_obj *o, json_t *row)
{
    json_t *addrs = kc__table_json(o, "/status/addresses");
    node_address(addrs, "InternalIP", row);
    node_address(addrs, "ExternalIP", row);
    json_decref(addrs);
    append_str(row, o, "/status/nodeInfo/osImage", "<unknown>");
    append_str(row, o, "/status/nodeInfo/kernelVersion", "<unknown>");
    append_str(row, o, "/status/nodeInfo/containerRuntimeVersion", "<unknown>");
}
