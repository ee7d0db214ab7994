/*
 * seed.c — fixtures loaded at server start: a directory of *.yaml / *.yml / *.json files.
 *
 * Design: files are taken in name order (scandir + strcmp, so runs are reproducible). JSON files
 * are parsed with jansson (one object, or a List). YAML files are read with libyaml's event
 * parser and each document is built into a small jansson tree (fixtures are small documents —
 * never a bulk read path), typing plain scalars the way Kubernetes' YAML reader does (null/~,
 * true/false, integers, floats; quoted scalars stay strings). Empty documents are skipped; an
 * object whose kind ends in "List" with an items array is expanded into its items. Each object
 * goes to the callback as compact JSON text. The generator of synthetic objects
 * (kc__seed_generate) lives in seed_gen.c.
 * Limits: a file ≤ 64 MiB, nesting ≤ 64 levels, no YAML aliases (refused with the line).
 * Thread-safe: no shared state.
 */
#include "server/testbed/seed.h"

#include "core/internal.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#define SEED_FILE_MAX ((size_t)64 * 1024 * 1024)
#define SEED_DEPTH    64

/* ---- emitting objects ------------------------------------------------------------------------ */

static int emit_one(json_t *obj, const char *file, kc__seed_fn fn, void *ud, kc_error *err)
{
    if (!json_is_object(obj))
        return kc_error_set(err, KC_EPARSE, "%s: a document is not an object", file);
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    json_t *items = json_object_get(obj, "items");
    size_t kl = kind ? strlen(kind) : 0;
    if (kl >= 4 && !strcmp(kind + kl - 4, "List") && json_is_array(items)) {
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
            int rc = emit_one(it, file, fn, ud, err);
            if (rc)
                return rc;
        }
        return 0;
    }
    char *s = json_dumps(obj, JSON_COMPACT);
    if (!s)
        return kc_error_set(err, KC_ENOMEM, "%s: out of memory", file);
    int rc = fn(ud, s, strlen(s));
    free(s);
    if (rc < 0 && err && !err->code)
        kc_error_set(err, rc, "%s: object rejected", file);
    return rc < 0 ? rc : 0;
}

/* ---- YAML → jansson -------------------------------------------------------------------------- */

static bool scalar_is(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (!strcmp(s, *words))
            return true;
    return false;
}

static json_t *yaml_scalar(const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    if (tag && !strcmp(tag, YAML_STR_TAG))
        return json_stringn(s, n);
    if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return json_stringn(s, n);
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    if (scalar_is(s, nulls))
        return json_null();
    if (scalar_is(s, trues))
        return json_true();
    if (scalar_is(s, falses))
        return json_false();
    char *end;
    const char *digits = (*s == '-' || *s == '+') ? s + 1 : s;
    if (*digits >= '0' && *digits <= '9') {
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (!*end && !errno && (digits[0] != '0' || digits[1] == '\0'))
            return json_integer(v);
        errno = 0;
        double d = strtod(s, &end);
        if (!*end && !errno && isfinite(d) && strpbrk(s, ".eE") && !strpbrk(s, "xX"))
            return json_real(d);
    }
    return json_stringn(s, n);
}

typedef struct yctx {
    yaml_parser_t parser;
    const char *file;
    kc_error *err;
} yctx;

static int yerr(yctx *y, const yaml_event_t *ev, const char *what)
{
    return kc_error_set(y->err, KC_EPARSE, "%s:%zu: %s", y->file,
                        (size_t)(ev ? ev->start_mark.line + 1 : y->parser.problem_mark.line + 1),
                        what);
}

static int next_event(yctx *y, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&y->parser, ev))
        return kc_error_set(y->err, KC_EPARSE, "%s:%zu: %s", y->file,
                            (size_t)y->parser.problem_mark.line + 1,
                            y->parser.problem ? y->parser.problem : "YAML error");
    return 0;
}

/* Build the node that starts with *ev (consumed). */
static int build_node(yctx *y, yaml_event_t *ev, int depth, json_t **ret)
{
    if (depth > SEED_DEPTH) {
        int rc = yerr(y, ev, "nesting too deep");
        yaml_event_delete(ev);
        return rc;
    }
    int rc = 0;
    json_t *node = NULL;
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        node = yaml_scalar(ev);
        break;
    case YAML_ALIAS_EVENT:
        rc = yerr(y, ev, "YAML aliases are not supported in fixtures");
        break;
    case YAML_SEQUENCE_START_EVENT:
        node = json_array();
        for (;;) {
            yaml_event_t c;
            if ((rc = next_event(y, &c)))
                break;
            if (c.type == YAML_SEQUENCE_END_EVENT) {
                yaml_event_delete(&c);
                break;
            }
            json_t *child;
            if ((rc = build_node(y, &c, depth + 1, &child)))
                break;
            if (json_array_append_new(node, child)) {
                rc = kc_error_set(y->err, KC_ENOMEM, "%s: out of memory", y->file);
                break;
            }
        }
        break;
    case YAML_MAPPING_START_EVENT:
        node = json_object();
        for (;;) {
            yaml_event_t k;
            if ((rc = next_event(y, &k)))
                break;
            if (k.type == YAML_MAPPING_END_EVENT) {
                yaml_event_delete(&k);
                break;
            }
            if (k.type != YAML_SCALAR_EVENT) {
                rc = yerr(y, &k, "mapping keys must be scalars");
                yaml_event_delete(&k);
                break;
            }
            char *key = kc__strdup_n((const char *)k.data.scalar.value, k.data.scalar.length);
            yaml_event_delete(&k);
            yaml_event_t v;
            json_t *child = NULL;
            if (!key)
                rc = kc_error_set(y->err, KC_ENOMEM, "%s: out of memory", y->file);
            else if (!(rc = next_event(y, &v)) && !(rc = build_node(y, &v, depth + 1, &child)) &&
                     json_object_set_new(node, key, child))
                rc = kc_error_set(y->err, KC_ENOMEM, "%s: out of memory", y->file);
            free(key);
            if (rc)
                break;
        }
        break;
    default:
        rc = yerr(y, ev, "unexpected YAML event");
        break;
    }
    yaml_event_delete(ev);
    if (!rc && !node)
        rc = kc_error_set(y->err, KC_ENOMEM, "%s: out of memory", y->file);
    if (rc) {
        json_decref(node);
        return rc;
    }
    *ret = node;
    return 0;
}

static int load_yaml(const char *path, const char *data, size_t len, kc__seed_fn fn, void *ud,
                     kc_error *err)
{
    yctx y = {.file = path, .err = err};
    if (!yaml_parser_initialize(&y.parser))
        return kc_error_set(err, KC_ENOMEM, "%s: out of memory", path);
    yaml_parser_set_input_string(&y.parser, (const unsigned char *)data, len);
    int rc = 0;
    for (;;) {
        yaml_event_t ev;
        if ((rc = next_event(&y, &ev)))
            break;
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT ||
            t == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        json_t *doc;
        if ((rc = build_node(&y, &ev, 0, &doc)))
            break;
        if (!json_is_null(doc))
            rc = emit_one(doc, path, fn, ud, err);
        json_decref(doc);
        if (rc)
            break;
    }
    yaml_parser_delete(&y.parser);
    return rc;
}

static int load_json(const char *path, const char *data, size_t len, kc__seed_fn fn, void *ud,
                     kc_error *err)
{
    json_error_t je;
    json_t *doc = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
    if (!doc)
        return kc_error_set(err, KC_EPARSE, "%s:%d: %s", path, je.line, je.text);
    int rc = emit_one(doc, path, fn, ud, err);
    json_decref(doc);
    return rc;
}

/* ---- files ----------------------------------------------------------------------------------- */

static int read_file(const char *path, char **ret, size_t *ret_len, kc_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return kc_error_set(err, KC_EIO, "%s: %s", path, strerror(errno));
    kc__buf b = KC__BUF_INIT(SEED_FILE_MAX);
    char chunk[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if ((rc = kc__buf_append(&b, chunk, n)))
            break;
    if (!rc && ferror(f))
        rc = KC_EIO;
    fclose(f);
    if (rc) {
        kc__buf_free(&b);
        return kc_error_set(err, rc == KC_ETOOLARGE ? KC_EIO : rc, "%s: %s", path,
                            rc == KC_ETOOLARGE ? "file larger than 64 MiB" : "read error");
    }
    *ret = kc__buf_steal(&b, ret_len);
    return *ret ? 0 : kc_error_set(err, KC_ENOMEM, "%s: out of memory", path);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int fixture_filter(const struct dirent *de)
{
    return de->d_name[0] != '.' &&
           (ends_with(de->d_name, ".yaml") || ends_with(de->d_name, ".yml") ||
            ends_with(de->d_name, ".json"));
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int kc__seed_load_dir(const char *dir, kc__seed_fn fn, void *ud, kc_error *err)
{
    struct dirent **list = NULL;
    int n = scandir(dir, &list, fixture_filter, by_name);
    if (n < 0)
        return kc_error_set(err, KC_EIO, "fixtures directory %s: %s", dir, strerror(errno));
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name) >= sizeof path) {
            rc = kc_error_set(err, KC_EIO, "%s/%s: path too long", dir, list[i]->d_name);
            break;
        }
        struct stat st;
        if (stat(path, &st) || !S_ISREG(st.st_mode))
            continue;
        char *data;
        size_t len;
        if ((rc = read_file(path, &data, &len, err)))
            break;
        if (ends_with(path, ".json"))
            rc = load_json(path, data, len, fn, ud, err);
        else
            rc = load_yaml(path, data, len, fn, ud, err);
        free(data);
    }
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
    return rc;
}
