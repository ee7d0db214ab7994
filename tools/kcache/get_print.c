/*
 * get_print.c — `kcache get -o json|yaml|name`: objects printed as kubectl prints them.
 *
 * Design: each object's stored JSON is loaded into a jansson tree (one object at a time, so
 * memory stays bounded however long the list) and written out: as JSON the way Go's
 * encoding/json.MarshalIndent with four spaces writes it (what kubectl prints: keys sorted
 * bytewise, <, >, & and U+2028/U+2029 escaped, numbers in Go's shortest form), or as YAML through
 * get_yaml.c. Several objects go into one List document, streamed: the List's head is written
 * first, each item as it arrives. A number jansson cannot hold (an integer beyond int64) cannot
 * be converted: under -o json the object's stored text is printed as is instead, under -o yaml
 * the object is reported on stderr and skipped (the document stays valid).
 */
#include "get.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

struct get_doc {
    FILE *out;
    get_fmt fmt;
    bool single;
    size_t n;
    bool failed;
    get_yaml *y;
};

/* ---- shared ---------------------------------------------------------------------------------- */

void get_kind_name(char *buf, size_t size, const kc_resource_info *ri, const char *name)
{
    size_t k = 0;
    for (const char *p = ri->kind; *p && k + 1 < size; p++)
        buf[k++] = (char)tolower((unsigned char)*p);
    buf[k] = '\0';
    snprintf(buf + k, size - k, "%s%s/%s", *ri->group ? "." : "", ri->group, name);
}

/* ---- the document ---------------------------------------------------------------------------- */

/* The List's head up to its items sequence (YAML). */
static int yaml_list_begin(get_yaml *y)
{
    int rc = get_yaml_doc(y, true);
    rc = rc ? rc : get_yaml_map(y, true);
    rc = rc ? rc : get_yaml_str(y, "apiVersion");
    rc = rc ? rc : get_yaml_str(y, "v1");
    rc = rc ? rc : get_yaml_str(y, "items");
    return rc ? rc : get_yaml_seq(y, true);
}

static int yaml_list_end(get_yaml *y)
{
    int rc = get_yaml_seq(y, false);
    rc = rc ? rc : get_yaml_str(y, "kind");
    rc = rc ? rc : get_yaml_str(y, "List");
    rc = rc ? rc : get_yaml_str(y, "metadata");
    rc = rc ? rc : get_yaml_map(y, true);
    rc = rc ? rc : get_yaml_str(y, "resourceVersion");
    rc = rc ? rc : get_yaml_str(y, "");
    rc = rc ? rc : get_yaml_map(y, false);
    rc = rc ? rc : get_yaml_map(y, false);
    return rc ? rc : get_yaml_doc(y, false);
}

get_doc *get_doc_new(FILE *out, get_fmt fmt, bool single)
{
    get_doc *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->out = out;
    d->fmt = fmt;
    d->single = single;
    if (fmt == GET_JSON && !single)
        fputs("{\n    \"apiVersion\": \"v1\",\n    \"items\": [", out);
    /* a single object gets its YAML document when it arrives (none when it is not found) */
    if (fmt == GET_YAML && (!(d->y = get_yaml_new(out)) || (!single && yaml_list_begin(d->y)))) {
        get_yaml_free(d->y);
        free(d);
        return NULL;
    }
    return d;
}

int get_doc_add(get_doc *d, const kc_obj *obj, const kc_resource_info *ri)
{
    if (d->fmt == GET_NAME) {
        char buf[1024];
        get_kind_name(buf, sizeof buf, ri, kc_obj_name(obj));
        fprintf(d->out, "%s\n", buf);
        d->n++;
        return 0;
    }
    if (d->single && d->n > 0)
        return 0; /* a single object was asked for */
    size_t len;
    const char *text = kc_obj_json(obj, &len);
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_ALLOW_NUL, &je);
    int rc = 0;
    if (d->fmt == GET_JSON) {
        if (!d->single)
            fputs(d->n ? ",\n        " : "\n        ", d->out);
        if (root)
            rc = get_json_write(d->out, root, d->single ? 0 : 2, false);
        else
            fputs(text, d->out); /* jansson cannot hold it (e.g. an integer beyond int64) */
        if (d->single)
            fputc('\n', d->out);
        d->n++;
    } else if (root) {
        rc = d->single ? get_yaml_doc(d->y, true) : 0;
        rc = rc ? rc : get_yaml_value(d->y, root);
        rc = rc || !d->single ? rc : get_yaml_doc(d->y, false);
        d->failed = d->failed || rc;
        d->n++;
    } else {
        fprintf(stderr, "kcache get: %s %s%s%s: cannot convert to YAML: %s\n", ri->resource,
                kc_obj_namespace(obj), *kc_obj_namespace(obj) ? "/" : "", kc_obj_name(obj),
                je.text);
        rc = -1;
    }
    json_decref(root);
    return rc;
}

int get_doc_finish(get_doc *d)
{
    if (!d)
        return 0;
    int rc = d->failed ? -1 : 0;
    if (d->fmt == GET_JSON && !d->single)
        fprintf(d->out,
                "%s],\n    \"kind\": \"List\",\n    \"metadata\": {\n        "
                "\"resourceVersion\": \"\"\n    }\n}\n",
                d->n ? "\n    " : "");
    if (d->fmt == GET_YAML) {
        if (!d->failed && !d->single && yaml_list_end(d->y))
            rc = -1;
        if (get_yaml_free(d->y))
            rc = -1;
    }
    if (fflush(d->out) || ferror(d->out))
        rc = -1;
    free(d);
    return rc;
}
