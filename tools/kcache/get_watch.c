/*
 * get_watch.c — `kcache get -w` / `--watch-only`: the objects, then every change, until Ctrl-C,
 * as kubectl get -w prints them.
 *
 * Design: one LIST (a Table for table output, objects otherwise) gives what is printed first and
 * the resourceVersion the watch starts from, so no change between the two is lost or printed
 * twice; one object (TYPE NAME) is listed and watched through metadata.name=NAME. Each event is
 * then printed alone in the chosen format: a table row without its header (the header comes
 * first when nothing was printed before it: --watch-only or an empty list), read back from the
 * server as a Table row (server-side printing has no way to print an object we hold); a deleted
 * object repeats the last row printed for it (the server no longer has it). Documents (json,
 * yaml with "---" between, name), JSONPath templates (run against each object) and custom
 * columns print one object per event. Ctrl-C ends with exit 0; the server closing the stream or
 * the connection breaking is explained (cli_watch.c) and exits 1.
 */
#include "get.h"

#include <stdlib.h>
#include <string.h>

typedef struct wstate {
    const get_watch_req *w;
    bool header_due; /* the next table row or custom-columns row gets a header */
    size_t printed;  /* objects printed (a YAML separator goes between) */
    unsigned long n; /* events */
    char last_rv[64];
    char **keys, **lines; /* the last table line printed for each "ns/name" */
    size_t nlines;
    size_t *widths; /* the table's column widths so far */
    size_t ncols;
    kc_error stop; /* an ERROR event */
} wstate;

static bool is_table(const get_watch_req *w)
{
    return w->out->fmt == GET_TABLE || w->out->fmt == GET_WIDE;
}

/* ---- table rows ------------------------------------------------------------------------------ */

static char **cached_line(wstate *s, const char *key)
{
    for (size_t i = 0; i < s->nlines; i++)
        if (!strcmp(s->keys[i], key))
            return &s->lines[i];
    return NULL;
}

static void cache_line(wstate *s, const char *ns, const char *name, const char *line, size_t len)
{
    char key[512];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    char *copy = strndup(line, len), **slot = cached_line(s, key);
    if (!copy)
        return;
    if (slot) {
        free(*slot);
        *slot = copy;
        return;
    }
    char **k = realloc(s->keys, (s->nlines + 1) * sizeof(*k));
    if (k)
        s->keys = k;
    char **l = realloc(s->lines, (s->nlines + 1) * sizeof(*l));
    if (l)
        s->lines = l;
    if (!k || !l || !(s->keys[s->nlines] = strdup(key))) {
        free(copy);
        return;
    }
    s->lines[s->nlines++] = copy;
}

/* Print t (its header when header) to stdout, remembering each row's line. */
static void print_table(wstate *s, const get_table *t, bool header)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return;
    if (!s->widths && (s->ncols = get_table_cols(t)))
        s->widths = calloc(s->ncols, sizeof(*s->widths));
    get_table_print(t, f, false, header, get_table_cols(t) == s->ncols ? s->widths : NULL);
    if (fclose(f)) {
        free(buf);
        return;
    }
    fwrite(buf, 1, len, stdout);
    const char *line = buf;
    for (size_t r = 0, i = header ? 0 : 1; line < buf + len; i++) {
        const char *nl = memchr(line, '\n', (size_t)(buf + len - line));
        size_t n = nl ? (size_t)(nl - line) + 1 : (size_t)(buf + len - line);
        if (i > 0 && r < get_table_rows(t)) {
            const char *ns, *name;
            get_table_row_id(t, r++, &ns, &name);
            cache_line(s, ns, name, line, n);
        }
        line += n;
    }
    free(buf);
}

static get_table *new_table(const get_watch_req *w)
{
    get_table *t = get_table_new(w->ri, w->out->fmt == GET_WIDE, w->show_ns);
    if (t)
        get_table_labels(t, w->out->label_keys, w->out->n_label_keys, w->out->show_labels);
    return t;
}

/* One event's row: read back from the server, or the last line printed for a deleted object. */
static void print_row(wstate *s, const kc_obj *obj, bool deleted)
{
    const get_watch_req *w = s->w;
    const char *ns = kc_obj_namespace(obj), *name = kc_obj_name(obj);
    get_table *t = new_table(w);
    kc_gvr gvr = {w->ri->group, w->ri->version, w->ri->resource};
    kc_error err = KC_ERROR_INIT;
    if (t && !deleted && !get_table_fetch(t, w->c, &gvr, *ns ? ns : NULL, name, NULL, &err)) {
        print_table(s, t, s->header_due);
        s->header_due = false;
    } else {
        char key[512];
        snprintf(key, sizeof key, "%s/%s", ns, name);
        char **line = cached_line(s, key);
        if (line)
            fputs(*line, stdout);
        else
            printf("%s\n", name);
    }
    kc_error_clear(&err);
    get_table_free(t);
}

/* ---- documents, templates, columns ----------------------------------------------------------- */

static void print_obj(wstate *s, kc_obj *obj)
{
    const get_out *o = s->w->out;
    if (o->fmt == GET_JSONPATH || o->fmt == GET_COLUMNS) {
        get_items one = {0};
        if (get_items_add(&one, kc_obj_ref(obj), s->w->ri) == 0) {
            get_out each = *o;
            each.no_headers = o->no_headers || !s->header_due;
            get_items_print(&one, &each, true, stdout);
            s->header_due = false;
        }
        get_items_clear(&one);
    } else {
        if (o->fmt == GET_YAML && s->printed)
            fputs("---\n", stdout);
        get_doc *d = get_doc_new(stdout, o->fmt, true);
        if (d) {
            get_doc_add(d, obj, s->w->ri);
            get_doc_finish(d);
        }
    }
    s->printed++;
}

static int on_event(void *ud, const kc_watch_event *ev)
{
    wstate *s = ud;
    s->n++;
    if (ev->type == KC_WATCH_ERROR) {
        const kc_error *e = ev->error;
        s->stop.code = e && e->code ? e->code : KC_ESERVER;
        s->stop.http_status = e ? e->http_status : 0;
        s->stop.reason = e && e->reason ? strdup(e->reason) : NULL;
        s->stop.message = e && e->message ? strdup(e->message) : NULL;
        return KC_ESTOPPED;
    }
    if (ev->type == KC_WATCH_BOOKMARK || !ev->obj)
        return 0;
    snprintf(s->last_rv, sizeof s->last_rv, "%s", kc_obj_resource_version(ev->obj));
    if (is_table(s->w))
        print_row(s, ev->obj, ev->type == KC_WATCH_DELETED);
    else
        print_obj(s, ev->obj);
    fflush(stdout);
    return 0;
}

/* ---- the run --------------------------------------------------------------------------------- */

typedef struct first_ctx {
    wstate *s;
    get_items l;
} first_ctx;

static int on_first(void *ud, kc_obj *obj)
{
    first_ctx *x = ud;
    return get_items_add(&x->l, obj, x->s->w->ri) ? KC_ENOMEM : 0;
}

/* The LIST printed first (unless --watch-only); its resourceVersion into rv. 0, or the error. */
static int first_list(wstate *s, const kc_list_opts *lo, char *rv, size_t rvsz, size_t *count,
                      kc_error *err)
{
    const get_watch_req *w = s->w;
    kc_gvr gvr = {w->ri->group, w->ri->version, w->ri->resource};
    if (is_table(w)) {
        get_table *t = new_table(w);
        int rc = t ? get_table_fetch(t, w->c, &gvr, w->ns, NULL, lo, err) : KC_ENOMEM;
        if (!rc) {
            *count = get_table_rows(t);
            snprintf(rv, rvsz, "%s", get_table_rv(t));
            if (!w->watch_only && *count)
                print_table(s, t, !w->out->no_headers);
            s->header_due = !w->out->no_headers && (w->watch_only || !*count);
        }
        get_table_free(t);
        return rc;
    }
    first_ctx x = {s, {0}};
    kc_list_meta meta = {0};
    int rc = kc_client_list_all(w->c, &gvr, w->ns, lo, &meta, on_first, &x, err);
    *count = x.l.n;
    if (!rc) {
        snprintf(rv, rvsz, "%s", meta.resource_version ? meta.resource_version : "");
        s->header_due = !w->out->no_headers;
        if (!w->watch_only && x.l.n && w->out->fmt == GET_COLUMNS) {
            get_items_print(&x.l, w->out, false, stdout); /* one aligned block */
            s->header_due = false;
        } else if (!w->watch_only) {
            for (size_t i = 0; i < x.l.n; i++)
                print_obj(s, x.l.v[i].obj);
        }
    }
    kc_list_meta_clear(&meta);
    get_items_clear(&x.l);
    return rc;
}

int get_watch_run(const get_watch_req *w)
{
    wstate s = {.w = w, .stop = KC_ERROR_INIT};
    kc_list_opts lo = w->lo;
    char fields[1024], rv[64] = "";
    if (w->name) {
        snprintf(fields, sizeof fields, "metadata.name=%s", w->name);
        lo.field_selector = fields;
    }
    kc_error err = KC_ERROR_INIT;
    size_t count = 0;
    int rc = first_list(&s, &lo, rv, sizeof rv, &count, &err);
    fflush(stdout);
    if (!rc && w->name && !count) {
        fprintf(stderr, "kcache get: error from server (NotFound): %s \"%s\" not found\n",
                w->ri->resource, w->name);
        return KC_CLI_EXIT_FAIL;
    }
    kc_cancel *cancel = NULL;
    kc__cli_sigstop *stop = NULL;
    int status = KC_CLI_EXIT_FAIL;
    if (rc) {
        kc__cli_error("get", rc, &err);
    } else if (!(rc = kc_cancel_new(&cancel, NULL))) {
        stop = kc__cli_sigstop_start(cancel);
        kc_watch_opts wo = {.label_selector = lo.label_selector,
                            .field_selector = lo.field_selector,
                            .resource_version = rv};
        kc_gvr gvr = {w->ri->group, w->ri->version, w->ri->resource};
        rc = kc_client_watch(w->c, &gvr, w->ns, &wo, on_event, &s, cancel, &err);
        if (s.stop.code)
            kc__cli_error("get", s.stop.code, &s.stop);
        else
            status = kc__cli_watch_ended("get", rc, &err, s.n, s.last_rv);
    }
    kc__cli_sigstop_end(stop);
    kc_cancel_free(cancel);
    kc_error_clear(&err);
    kc_error_clear(&s.stop);
    for (size_t i = 0; i < s.nlines; i++) {
        free(s.keys[i]);
        free(s.lines[i]);
    }
    free(s.keys);
    free(s.lines);
    free(s.widths);
    return status;
}
