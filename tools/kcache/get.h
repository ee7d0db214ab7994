/* get.h — the printers behind `kcache get` (cmd_get.c): documents (get_print.c, YAML in
 * get_yaml.c, JSON in get_json.c), the server's Table (get_table.c), custom columns
 * (get_columns.c), and the parts of get that read differently: sorted or templated output
 * (get_collect.c), -w (get_watch.c), `get all` (get_all.c). Internal to the CLI. */
#ifndef KC_CLI_GET_H
#define KC_CLI_GET_H

#include "cli.h"
#include "jsonpath.h"
#include "kcache/client.h"

#include <jansson.h>
#include <stdio.h>

typedef enum get_fmt {
    GET_TABLE,
    GET_WIDE,
    GET_NAME,
    GET_JSON,
    GET_YAML,
    GET_JSONPATH, /* -o jsonpath=… / jsonpath-file=… */
    GET_COLUMNS   /* -o custom-columns=… / custom-columns-file=… */
} get_fmt;

typedef struct get_cols get_cols;

/* What -o and the printing flags asked for (cmd_get.c parses them). */
typedef struct get_out {
    get_fmt fmt;
    jp_tmpl *tmpl;         /* GET_JSONPATH */
    const char *tmpl_text; /* as given, for messages */
    get_cols *cols;        /* GET_COLUMNS */
    bool no_headers;       /* --no-headers (tables and custom columns) */
    jp_tmpl *sort;         /* --sort-by, or NULL */
    const char *sort_text;
    char **label_keys; /* -L, split on ',' */
    size_t n_label_keys;
    bool show_labels; /* --show-labels */
} get_out;

/* ---- the flags (get_args.c) --------------------------------------------------------------- */

typedef struct get_args {
    kc__cli_scope s;
    get_out out;
    int64_t limit;
    bool watch, watch_only;
    char *spec_text; /* the -o template or columns (a file's text for …-file=) */
} get_args;

/* Flags into *a (zeroed but for defaults). -1 to go on, else the exit status (0 after --help). */
int get_args_parse(int argc, char **argv, get_args *a);
void get_args_clear(get_args *a);
void get_usage(FILE *f);

/* ---- documents: -o json | yaml | name (get_print.c) ------------------------------------------ */

typedef struct get_doc get_doc;

/* New printer writing to out. single: the one object is printed alone; otherwise every object
 * goes into one List document (kubectl's {"apiVersion":"v1","items":[…],"kind":"List",
 * "metadata":{"resourceVersion":""}}), printed even when empty. NULL on out of memory. */
get_doc *get_doc_new(FILE *out, get_fmt fmt, bool single);
/* Print obj of resource ri. 0, or -1 when obj cannot be converted (the reason is on stderr,
 * naming the object; the output stays well-formed). */
int get_doc_add(get_doc *d, const kc_obj *obj, const kc_resource_info *ri);
/* Close the document and free d. -1 when writing failed. Accepts NULL. */
int get_doc_finish(get_doc *d);

/* "kind.group/name" as kubectl -o name prints it ("pod/x", "deployment.apps/x") into buf. */
void get_kind_name(char *buf, size_t size, const kc_resource_info *ri, const char *name);

/* ---- JSON as Go's encoding/json writes it (get_json.c) --------------------------------------- */

/* Write v at nesting level (its first line already indented): MarshalIndent with four spaces, or
 * compact (Marshal) when compact. -1 on out of memory. */
int get_json_write(FILE *f, json_t *v, int level, bool compact);

/* Go's encoding/json text of a double (shortest round trip; exponent below 1e-6 and from 1e21),
 * into buf (at least 32 bytes). */
void get_format_real(char *buf, size_t size, double v);

/* The keys of obj sorted bytewise (as Go sorts map keys): new malloc'd array of borrowed keys
 * (caller frees the array), *n their count; NULL when obj is empty or out of memory. */
const char **get_sorted_keys(json_t *obj, size_t *n);

/* ---- YAML through libyaml (get_yaml.c) ------------------------------------------------------- */

typedef struct get_yaml get_yaml;

/* New emitter writing to out; the stream is started. NULL on out of memory. */
get_yaml *get_yaml_new(FILE *out);
/* Events: a document, a block mapping or sequence (start or end), a string scalar, or a whole
 * JSON value. 0, or -1 once the emitter failed (later calls fail too). */
int get_yaml_doc(get_yaml *y, bool start);
int get_yaml_map(get_yaml *y, bool start);
int get_yaml_seq(get_yaml *y, bool start);
int get_yaml_str(get_yaml *y, const char *s);
int get_yaml_value(get_yaml *y, json_t *v);
/* End the stream (unless failed) and free y. -1 when anything failed. Accepts NULL. */
int get_yaml_free(get_yaml *y);

/* ---- the server's Table (get_table.c) ------------------------------------------------------- */

typedef struct get_table get_table;

/* New table for resource ri: wide shows priority > 0 columns; show_ns adds NAMESPACE first.
 * NULL on out of memory. */
get_table *get_table_new(const kc_resource_info *ri, bool wide, bool show_ns);
/* Before the first fetch: a column per label key (-L: header the key's last '/' part upper-cased,
 * cell the value or ""), and LABELS (--show-labels: k=v,… sorted, or <none>) last. keys
 * borrowed for t's life. */
void get_table_labels(get_table *t, char *const *keys, size_t n, bool show_labels);
/* Append the rows of one object (name) or of the whole collection (name NULL; every page of
 * opts->limit). Errors as kc_client_get_table, or KC_EPARSE for a body that is neither a Table
 * nor an object or list. */
int get_table_fetch(get_table *t, kc_client *c, const kc_gvr *gvr, const char *ns, const char *name,
                    const kc_list_opts *opts, kc_error *err);
size_t get_table_rows(const get_table *t);
/* The resourceVersion of the last page fetched ("" if none): where a watch starts. */
const char *get_table_rv(const get_table *t);
/* Row r's namespace ("" when cluster-scoped) and name. */
void get_table_row_id(const get_table *t, size_t r, const char **ns, const char **name);
/* Reorder the rows: they become rows[order[0]], rows[order[1]], … (order: a permutation of
 * 0 … get_table_rows(t) - 1). -1 on out of memory. */
int get_table_permute(get_table *t, const size_t *order);
/* Print (header unless !header) and rows aligned as kubectl's tabwriter does (3 spaces of
 * padding, minimum width 6, the last column unpadded); with_kind prefixes names with
 * "kind.group/". widths (get_table_cols entries, or NULL): columns at least that wide, updated
 * to the widths used (a watch's rows stay aligned with what was printed before, as kubectl's). */
void get_table_print(const get_table *t, FILE *out, bool with_kind, bool header, size_t *widths);
/* The number of columns (known after the first fetch). */
size_t get_table_cols(const get_table *t);

/* kubectl's tabwriter over a matrix of nrows × ncols cells (row-major; header included); widths
 * as get_table_print's. */
void get_tab_print(FILE *out, char *const *cells, size_t nrows, size_t ncols, size_t *widths);

/* ---- collected objects: --sort-by, jsonpath, custom columns (get_collect.c) -------------------
 */

typedef struct get_item {
    kc_obj *obj;
    json_t *doc; /* obj's JSON, loaded */
    const kc_resource_info *ri;
    json_t *key; /* --sort-by's value in doc (borrowed), NULL when none */
} get_item;

typedef struct get_items {
    get_item *v;
    size_t n, cap;
} get_items;

/* Append obj (the reference is consumed) of resource ri. -1 on out of memory or when jansson
 * cannot hold its JSON (the object is then dropped). */
int get_items_add(get_items *l, kc_obj *obj, const kc_resource_info *ri);
void get_items_clear(get_items *l);
/* Stable sort as kubectl --sort-by (by_text: the flag as typed, for the error that no object has
 * the field). 0, or -1 with err set. */
int get_items_sort(get_items *l, const jp_tmpl *by, const char *by_text, char *err, size_t errsz);
/* Position of the object ri ns/name in l (l->n when absent): a table row's place when sorted. */
size_t get_items_rank(const get_items *l, const kc_resource_info *ri, const char *ns,
                      const char *name);
/* Print l as o asks (jsonpath against a List or, single, the object; custom columns; or the
 * documents of get_print.c). 0, or -1 (reported on stderr). */
int get_items_print(const get_items *l, const get_out *o, bool single, FILE *out);

/* ---- -w / --watch-only (get_watch.c) ------------------------------------------------------- */

typedef struct get_watch_req {
    kc_client *c;
    const kc_resource_info *ri;
    const char *ns;   /* NULL: all namespaces, or cluster-scoped */
    const char *name; /* one object, or NULL */
    kc_list_opts lo;  /* selectors, page size */
    const get_out *out;
    bool watch_only, show_ns;
} get_watch_req;

/* List and print, then print each change until Ctrl-C. Returns the exit status. */
int get_watch_run(const get_watch_req *w);

/* ---- get all (get_all.c) ------------------------------------------------------------------- */

/* The resources whose discovery categories contain "all", as names to resolve ("pods",
 * "deployments.apps"), in discovery order: new array of new strings (caller frees). 0, or -1
 * after reporting why. */
int get_all_types(kc_client *c, char ***ret, size_t *n);

/* ---- custom columns (get_columns.c) ------------------------------------------------------- */

/* Parse -o custom-columns=SPEC ("NAME:.metadata.name,RV:.metadata.resourceVersion", paths as
 * kubectl's relaxed JSONPath), or with file_form a custom-columns-file's text (a line of headers
 * and a line of paths, separated by blanks). 0 and *ret, or -1 with the reason in err. */
int get_cols_parse(const char *spec, bool file_form, get_cols **ret, char *err, size_t errsz);
/* One row from obj: each column's values joined with ",", <none> when there is none; list: obj
 * is one of several (numbers as jp_sprint's list). -1 on out of memory. */
int get_cols_add(get_cols *c, json_t *obj, bool list);
/* Print (the header unless !header) and the rows added since the last print, then drop them. */
void get_cols_print(get_cols *c, FILE *out, bool header);
/* Accepts NULL. */
void get_cols_free(get_cols *c);
/* Accepts NULL. */
void get_table_free(get_table *t);

#endif
